"""``perfagent mcp``: perfagent's measuring instruments as Model Context Protocol tools over stdio.

A coding agent (Claude Code, Codex, Cursor, ...) edits kernels itself and calls these tools to
diagnose, verify, bench and compare, the way the ``llm`` backend uses them inside ``optimize``.

Design points:
- every tool publishes JSON input and output schemas (the pydantic models perfagent already saves)
  and read-only / destructive hints; none of them writes into the user's sources (``optimize``
  never applies), only run folders under ``.perfagent/runs``;
- perfagent's library calls are synchronous and may run for minutes, so they run in a worker thread
  and their progress lines become MCP progress notifications;
- a failure is a tool result with ``isError`` and structured ``{cause, next_step, exit_code}``, never
  a traceback; the SDK's stdio transport points fd 1 at stderr while serving, so compilers and
  profilers started by a tool cannot write into the protocol stream.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel

from knowledge.transforms import Transform
from perfagent._version import __version__
from perfagent.compare import Comparison
from perfagent.errors import exit_code_for, one_line
from perfagent.mcp_server import tools
from perfagent.models import Profile
from perfagent.records import RunRecord
from perfagent.timing.models import BenchResult
from perfagent.verify.models import VerificationResult

log = logging.getLogger(__name__)

ResultT = TypeVar("ResultT", bound=BaseModel)

READ_ONLY = ToolAnnotations(
    readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False
)
"""Reads files or saved runs; writes nothing."""
MEASURES = ToolAnnotations(
    readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False
)
"""Runs the user's kernels (GPU/CPU time) and may save a run folder; never edits the user's files."""


def agent_instructions() -> str:
    """The instructions file shipped for agents (also the server's ``instructions``)."""
    return (
        resources.files("perfagent.mcp_server").joinpath("AGENT_INSTRUCTIONS.md").read_text(encoding="utf-8")
    )


def _error_result(exc: BaseException) -> CallToolResult:
    """A structured tool error: cause, next step, the CLI's exit code for the same failure."""
    message = getattr(exc, "message", None) or one_line(exc)
    hint = getattr(exc, "hint", "") or (
        "this is a perfagent bug: retry once, then report it with the tool's arguments"
        if exit_code_for(exc) == 1 and not hasattr(exc, "message")
        else ""
    )
    error = {"cause": message, "next_step": hint, "exit_code": exit_code_for(exc), "kind": type(exc).__name__}
    text = f"{message} — {hint}" if hint else message
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content={"error": error}, is_error=True
    )


def _ok(model: BaseModel) -> CallToolResult:
    data = model.model_dump(mode="json")
    return CallToolResult(
        content=[TextContent(type="text", text=model.model_dump_json())], structured_content=data
    )


async def _run(ctx: Context | None, work: Callable[[tools.ProgressSink], ResultT]) -> CallToolResult:
    """Run ``work`` in a thread, forwarding its progress lines as MCP progress notifications."""
    step = 0

    def progress(line: str) -> None:
        nonlocal step
        step += 1
        log.info("%s", line)
        if ctx is not None:
            try:
                anyio.from_thread.run(partial(ctx.report_progress, step, None, line))
            except Exception:  # a client that stopped listening must not fail the tool
                log.debug("progress notification dropped", exc_info=True)

    try:
        result = await anyio.to_thread.run_sync(work, progress)
    except Exception as exc:  # every failure becomes a structured tool error, never a traceback
        log.debug("tool failed", exc_info=True)
        return _error_result(exc)
    return _ok(result)


def build_server(root: Path | None = None) -> MCPServer:
    """The MCP server with every perfagent tool registered; ``root`` resolves relative paths."""
    base = (root or Path.cwd()).resolve()
    server = MCPServer(
        name="perfagent", version=__version__, instructions=agent_instructions(), log_level="WARNING"
    )
    _register_profiling_tools(server, base)
    _register_candidate_tools(server, base)
    _register_reading_tools(server, base)
    return server


def _register_profiling_tools(server: MCPServer, root: Path) -> None:
    """The tools that measure the user's kernel: diagnose and profile."""

    @server.tool(annotations=MEASURES, title="Diagnose a kernel")
    async def diagnose(
        target: str, kernel: str | None = None, profiler: str = "auto", ctx: Context | None = None
    ) -> Annotated[CallToolResult, RunRecord]:
        """Profile (or read) a target and explain why each kernel is slow: ranked findings with evidence,
        estimated speed-ups and a roofline. target: a report (.ncu-rep, ncu CSV, rocprof output), a
        saved run, a .cu program or kernel with a launch spec, or a Python/Triton script.
        profiler: auto|ncu|rocprof|static (static needs no GPU)."""
        return await _run(
            ctx, lambda p: tools.diagnose_target(target, root, kernel=kernel, profiler=profiler, progress=p)
        )

    @server.tool(annotations=MEASURES, title="Profile a kernel")
    async def profile(
        target: str, kernel: str | None = None, profiler: str = "auto", ctx: Context | None = None
    ) -> Annotated[CallToolResult, Profile]:
        """Raw canonical metrics per kernel (no diagnosis), from a run or a recorded report."""
        return await _run(
            ctx, lambda p: tools.profile_target(target, root, kernel=kernel, profiler=profiler, progress=p)
        )


def _register_candidate_tools(server: MCPServer, root: Path) -> None:
    """The tools that run rewrites: verify, bench and optimize (they measure too)."""

    @server.tool(annotations=MEASURES, title="Verify a rewrite")
    async def verify(
        reference: str,
        candidate: str | None = None,
        device: tools.DeviceName = "auto",
        seeds: int = 5,
        timeout_s: float = 60.0,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, VerificationResult]:
        """Check a candidate against the reference (the oracle) with perfagent's anti-cheat checks.
        reference: KernelBench problem .py, .cu kernel with launch spec, or spec; candidate: ModelNew .py
        or .cu. Returns verdict pass|fail|inconclusive with every check."""
        return await _run(
            ctx,
            lambda p: tools.verify_candidate(
                reference, candidate, root, device=device, seeds=seeds, timeout_s=timeout_s, progress=p
            ),
        )

    @server.tool(annotations=MEASURES, title="Time a rewrite")
    async def bench(
        target: str,
        candidate: str | None = None,
        device: tools.DeviceName = "auto",
        runs: int = 100,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, BenchResult]:
        """Time the baseline (and the candidate, interleaved): medians, IQR, noise threshold, speed-up,
        significance and plausibility flags. Timing only: verify first."""
        return await _run(
            ctx,
            lambda p: tools.bench_candidate(target, candidate, root, device=device, runs=runs, progress=p),
        )

    @server.tool(annotations=MEASURES, title="Optimize a kernel")
    async def optimize(
        target: str,
        problem: str | None = None,
        backend: str = "recipes",
        transform: str | None = None,
        iterations: int = 3,
        device: tools.DeviceName = "auto",
        samples: int = 1,
        repairs: int = 1,
        language: Literal["cuda", "triton"] = "cuda",
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, RunRecord]:
        """One optimize loop run (diagnose, plan, rewrite, verify, time, re-profile, decide). Never
        edits the user's files: the best candidate's source is in the returned record and run folder.
        With the llm backend: ``samples`` candidates per request, ``repairs`` rounds for a candidate that
        fails to build or verify, and the ``language`` of the first kernel written for a plain-PyTorch
        KernelBench problem."""
        return await _run(
            ctx,
            lambda p: tools.optimize_target(
                target,
                root,
                problem=problem,
                backend=backend,
                transform=transform,
                iterations=iterations,
                device=device,
                samples=samples,
                repairs=repairs,
                language=language,
                progress=p,
            ),
        )


def _register_reading_tools(server: MCPServer, root: Path) -> None:
    @server.tool(annotations=READ_ONLY, title="Compare two runs")
    async def compare(
        before: str, after: str, ctx: Context | None = None
    ) -> Annotated[CallToolResult, Comparison]:
        """Per-kernel deltas between two saved runs or recorded reports: time, % of roofline, top
        finding and the metrics that moved."""
        return await _run(ctx, lambda _p: tools.compare_runs(before, after, root))

    @server.tool(annotations=READ_ONLY, title="Explain a transform")
    async def explain_transform(transform_id: str) -> Annotated[CallToolResult, Transform]:
        """The catalog entry of a transform: what it changes, when it applies, the metric it should
        move, and the recipes that implement it."""
        return await _run(None, lambda _p: tools.explain_transform(transform_id))

    @server.tool(annotations=READ_ONLY, title="List saved runs")
    async def list_runs(
        runs_dir: str | None = None, limit: int = 50
    ) -> Annotated[CallToolResult, tools.RunList]:
        """Saved runs, newest first (default folder: .perfagent/runs or $PERFAGENT_RUNS_DIR)."""
        return await _run(None, lambda _p: tools.list_runs(root, runs_dir, limit))

    @server.tool(annotations=READ_ONLY, title="Read a saved run")
    async def read_run(run: str) -> Annotated[CallToolResult, RunRecord]:
        """The full record of one saved run (folder or record.json)."""
        return await _run(None, lambda _p: tools.read_run(run, root))


def serve_stdio(root: Path | None = None) -> None:
    """Serve over stdin/stdout until the client closes the stream."""
    server = build_server(root)
    anyio.run(_serve, server)


async def _serve(server: MCPServer) -> Any:
    await server.run_stdio_async()
