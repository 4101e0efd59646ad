"""``perfagent mcp``: perfagent's measuring instruments as Model Context Protocol tools over stdio.

A coding agent (Claude Code, Codex, Cursor, ...) edits kernels itself and calls these tools to
diagnose, verify, bench and compare, the way the ``llm`` backend uses them inside ``optimize``.

Design points:
- ``--root`` is a boundary: every path argument must resolve (symlinks too) inside it, and runs are
  saved and looked up under it (``boundary``);
- replies are bounded by default (``summaries``): the numbers to act on and a pointer to the full record;
- every tool publishes JSON input schemas with a description on each property, enums and minimums,
  output schemas, and read-only / destructive hints; none of them writes into the user's sources;
- quick reads run in a thread; verify, bench and optimize run as cancellable job processes with
  periodic progress (``calls``, ``jobs``);
- a failure, including a missing or wrongly typed argument, is a tool result with ``isError`` and
  structured ``{cause, next_step, exit_code, kind}``, never a traceback; the SDK's stdio transport
  points fd 1 at stderr while serving, so compilers and profilers cannot write into the protocol stream.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, InputRequiredResult, ToolAnnotations
from pydantic import Field, ValidationError

from knowledge.transforms import Transform
from perfagent._version import __version__
from perfagent.mcp_server import tools
from perfagent.mcp_server.arguments import (
    Budget,
    Detail,
    KernelRegex,
    Limit,
    Profiler,
    ReportTarget,
    RunRef,
    Target,
    TopK,
    TransformId,
)
from perfagent.mcp_server.boundary import ProjectRoot
from perfagent.mcp_server.calls import in_job, in_thread
from perfagent.mcp_server.jobs import Job
from perfagent.mcp_server.long_tools import RUNS_CODE, JobFunctions, register_long_tools
from perfagent.mcp_server.prompts import agent_instructions, register_prompts, register_resources
from perfagent.mcp_server.replies import error_result, exception_result, validation_result
from perfagent.mcp_server.summaries import ProfileReply, RunReply, profile_reply, run_reply
from perfagent.mcp_server.targets import Targets, list_targets
from perfagent.records import RunRecord
from perfagent.session import load_record
from profilers.core_errors import BadInput

READ_ONLY = ToolAnnotations(
    readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False
)
"""Reads files or saved runs; writes nothing."""

__all__ = ["agent_instructions", "build_server", "serve_stdio"]


class PerfagentServer(MCPServer):
    """The SDK's server, with argument-validation failures in perfagent's structured error form.

    The SDK (2.3) reports a schema violation as a ToolError caused by pydantic's ValidationError, as raw
    text; it has no public hook for that, so ``call_tool`` is wrapped and the tool looked up in the
    SDK's tool manager for the argument's description.
    """

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                tool = self._tool_manager.get_tool(name)
                return validation_result(name, exc.__cause__, tool.parameters if tool else None)
            if self._tool_manager.get_tool(name) is None:
                known = ", ".join(sorted(t.name for t in self._tool_manager.list_tools()))
                return error_result(f"unknown tool {name!r}", f"call one of: {known}", 2, "BadInput")
            raise


def build_server(root: Path | None = None, *, jobs: JobFunctions | None = None) -> MCPServer:
    """The MCP server with every perfagent tool, prompt and resource; paths must lie under ``root``."""
    project = ProjectRoot(root or Path.cwd())
    server = PerfagentServer(
        name="perfagent", version=__version__, instructions=agent_instructions(), log_level="WARNING"
    )
    functions = jobs or JobFunctions()
    _register_diagnose_report(server, project)
    _register_diagnose(server, project, functions)
    register_long_tools(server, project, functions)
    _register_profile(server, project)
    _register_reading_tools(server, project)
    _register_run_tools(server, project)
    register_prompts(server)
    register_resources(server)
    return server


def _register_diagnose_report(server: MCPServer, root: ProjectRoot) -> None:
    """diagnose_report: read-only (a recorded report or saved run), so hosts may auto-approve it."""

    @server.tool(annotations=READ_ONLY, title="Diagnose a recorded report")
    async def diagnose_report(
        target: ReportTarget,
        kernel: KernelRegex = None,
        detail: Detail = "summary",
        top_k: TopK = 20,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, RunReply]:
        """Why each kernel of a recorded report (or saved run) is slow: per kernel its time, share,
        recoverable time, top finding with an estimated speed-up, and the transforms that fix it. Runs
        nothing and saves nothing."""

        def work(progress: tools.ProgressSink) -> RunReply:
            path = root.path(target, "target")
            tgt = tools.described(path)
            if not tgt.is_recorded:
                raise BadInput(
                    f"{target} is not a recorded report or saved run",
                    hint=f'call diagnose(target="{target}") to profile it',
                )
            record, run = tools.diagnose_target(
                root, path, tgt, kernel=kernel, profiler="auto", progress=progress
            )
            return run_reply(record, run=str(run) if run else None, detail=detail, top_k=top_k)

        return await in_thread(ctx, work)


def _register_diagnose(server: MCPServer, root: ProjectRoot, functions: JobFunctions) -> None:
    @server.tool(annotations=RUNS_CODE, title="Diagnose a kernel")
    async def diagnose(
        target: Target,
        kernel: KernelRegex = None,
        profiler: Profiler = "auto",
        detail: Detail = "summary",
        top_k: TopK = 20,
        budget_s: Budget = 1800.0,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, RunReply]:
        """Profile (or read) a target and explain why each kernel is slow: ranked findings with
        evidence, estimated speed-ups and a roofline. A program is run under the profiler and saved as
        a run under the root (summary.run is its absolute folder, summary.id its run id)."""

        def work(progress: tools.ProgressSink) -> RunReply:
            record, run = tools.diagnose_target(
                root, path, tgt, kernel=kernel, profiler=profiler, progress=progress
            )
            return run_reply(record, run=str(run) if run else None, detail=detail, top_k=top_k)

        try:
            path = root.path(target, "target")
            tgt = tools.described(path)  # once: the reading, or the job, is handed the description
        except Exception as exc:  # a bad target is a structured error like any other
            return exception_result(exc)
        if tgt.is_recorded:
            return await in_thread(ctx, work)
        run = root.fresh_run()  # a program runs under the profiler: a cancellable job, saved as a run

        def job() -> Job:
            args = {
                "description": tgt.description.model_dump(mode="json"),
                "kernel": kernel,
                "profiler": profiler,
                "run_dir": str(run),
            }
            return Job(functions.diagnose, args, budget_s, target=target, cwd=root.root)

        def reply(data: dict[str, Any]) -> RunReply:
            record = RunRecord.model_validate(data)
            return run_reply(record, run=str(run), detail=detail, top_k=top_k)

        return await in_job(ctx, job, reply)


def _register_profile(server: MCPServer, root: ProjectRoot) -> None:
    @server.tool(annotations=RUNS_CODE, title="Profile a kernel")
    async def profile(
        target: Target,
        kernel: KernelRegex = None,
        profiler: Profiler = "auto",
        detail: Detail = "summary",
        top_k: TopK = 20,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, ProfileReply]:
        """Canonical metrics per kernel (no diagnosis), from a run or a recorded report: headline
        metrics in the summary, every metric with detail="full"."""

        def work(progress: tools.ProgressSink) -> ProfileReply:
            path = root.path(target, "target")
            found = tools.profile_target(path, kernel=kernel, profiler=profiler, progress=progress)
            return profile_reply(found, detail=detail, top_k=top_k)

        return await in_thread(ctx, work)


def _register_reading_tools(server: MCPServer, root: ProjectRoot) -> None:
    @server.tool(annotations=READ_ONLY, title="Compare two runs")
    async def compare(
        before: Annotated[
            str,
            Field(
                description='A saved run (id, "latest" or path) or a recorded report under the root.',
                min_length=1,
            ),
        ],
        after: Annotated[
            str,
            Field(
                description="The same kind as before (it may be the same report, with before_kernel/after_kernel).",
                min_length=1,
            ),
        ],
        before_kernel: Annotated[
            str | None,
            Field(description="Regex: compare only this kernel of before (pairs with after_kernel)."),
        ] = None,
        after_kernel: Annotated[
            str | None, Field(description="Regex: compare only this kernel of after.")
        ] = None,
        max_regression_pct: Annotated[
            float, Field(ge=0, le=1000, description="Tolerate slow-downs up to this % even beyond noise.")
        ] = 0.0,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, tools.CompareReply]:
        """Per-kernel deltas (time, % of roofline, top finding, metrics that moved) and the regression
        verdict: gate.passed, gate.regressions. Totals are over the matched kernels only."""

        def work(_progress: tools.ProgressSink) -> tools.CompareReply:
            return tools.compare_runs(
                root.run(before),
                root.run(after),
                before_kernel=before_kernel,
                after_kernel=after_kernel,
                max_regression_pct=max_regression_pct,
            )

        return await in_thread(ctx, work)

    @server.tool(annotations=READ_ONLY, title="Explain a transform")
    async def explain_transform(transform_id: TransformId) -> Annotated[CallToolResult, Transform]:
        """The catalog entry of a transform: what it changes, when it applies, the metric it should
        move, its risks, and the recipes that implement it."""
        return await in_thread(None, lambda _p: tools.explain_transform(transform_id))


def _register_run_tools(server: MCPServer, root: ProjectRoot) -> None:
    @server.tool(annotations=READ_ONLY, title="List what can be diagnosed")
    async def list_targets(limit: Limit = 50) -> Annotated[CallToolResult, Targets]:
        """Reports, saved runs, launch-spec kernels, KernelBench problems and ModelNew candidates under
        the root, and the transform catalog: what the other tools take."""
        return await in_thread(None, lambda _p: list_targets_under(root, limit))

    @server.tool(annotations=READ_ONLY, title="List saved runs")
    async def list_runs(
        runs_dir: Annotated[
            str | None, Field(description="A runs folder under the root (default: the server's).")
        ] = None,
        limit: Limit = 50,
    ) -> Annotated[CallToolResult, tools.RunList]:
        """Saved runs, newest first, with their ids (read_run and compare take an id)."""
        return await in_thread(None, lambda _p: tools.list_runs(root, runs_dir, limit))

    @server.tool(annotations=READ_ONLY, title="Read a saved run")
    async def read_run(
        run: RunRef, detail: Detail = "summary", top_k: TopK = 20
    ) -> Annotated[CallToolResult, RunReply]:
        """One saved run: its summary (kernels, findings, optimize candidates), and the whole record
        with detail="full"."""

        def work(_progress: tools.ProgressSink) -> RunReply:
            folder = root.run(run)
            return run_reply(
                load_record(folder),
                run=str(folder.parent if folder.is_file() else folder),
                detail=detail,
                top_k=top_k,
            )

        return await in_thread(None, work)


def list_targets_under(root: ProjectRoot, limit: int) -> Targets:
    """``targets.list_targets`` (named apart from the tool function it backs)."""
    return list_targets(root, limit)


def serve_stdio(root: Path | None = None) -> None:
    """Serve over stdin/stdout until the client closes the stream."""
    server = build_server(root)
    anyio.run(server.run_stdio_async)
