"""The tools that run the user's (or a model's) code: verify, bench and optimize, as job processes.

Each call runs in its own ``job_worker`` process group (``jobs``): cancelling the call ends it and
its children, and an optimize run's record is left saying "interrupted". Every path is resolved
inside the root first, so only files under it are imported or run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from perfagent.mcp_server.arguments import (
    BackendArg,
    Budget,
    Detail,
    DeviceArg,
    LanguageArg,
    Target,
    TopK,
    TransformId,
)
from perfagent.mcp_server.boundary import ProjectRoot
from perfagent.mcp_server.calls import in_job
from perfagent.mcp_server.jobs import Job
from perfagent.mcp_server.summaries import RunReply, run_reply
from perfagent.records import RunRecord
from perfagent.timing.models import BenchResult
from perfagent.verify.models import VerificationResult
from profilers.settings import TIMEOUTS

RUNS_CODE = ToolAnnotations(
    readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False
)
"""Runs code (GPU/CPU time) and may save a run folder under the root; never edits the user's files."""


@dataclass(frozen=True)
class JobFunctions:
    """The ``module:function`` each long tool runs in its worker (tests swap in a fake)."""

    diagnose: str = "perfagent.mcp_server.tools:diagnose_job"
    verify: str = "perfagent.mcp_server.tools:verify_job"
    bench: str = "perfagent.mcp_server.tools:bench_job"
    optimize: str = "perfagent.mcp_server.tools:optimize_job"


Candidate = Annotated[
    str | None,
    Field(
        description="The rewrite under the root: a ModelNew .py (KernelBench) or a .cu kernel; none: the reference alone."
    ),
]


def register_long_tools(server: MCPServer, root: ProjectRoot, functions: JobFunctions) -> None:
    """Register verify, bench and optimize."""
    _register_verify(server, root, functions)
    _register_bench(server, root, functions)
    _register_optimize(server, root, functions)


def _register_verify(server: MCPServer, root: ProjectRoot, functions: JobFunctions) -> None:
    @server.tool(annotations=RUNS_CODE, title="Verify a rewrite")
    async def verify(
        reference: Annotated[
            str,
            Field(
                description="The oracle under the root: KernelBench problem .py, or .cu kernel / launch spec.",
                min_length=1,
            ),
        ],
        candidate: Candidate = None,
        device: DeviceArg = "auto",
        seeds: Annotated[int, Field(ge=1, le=100, description="Input seeds to check.")] = 5,
        timeout_s: Annotated[
            float, Field(gt=0, le=3600, description="Per-run limit of the verify worker, s.")
        ] = TIMEOUTS.call_s,
        budget_s: Budget = 1800.0,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, VerificationResult]:
        """Check a candidate against the reference with perfagent's anti-cheat checks. Returns verdict
        pass|fail|inconclusive with every check; fail names the check, the output and the indices."""
        args = {"device": device, "seeds": seeds, "timeout_s": timeout_s}

        def job() -> Job:
            paths = {
                "reference": str(root.path(reference, "reference")),
                "candidate": _opt(root, candidate, "candidate"),
            }
            return Job(functions.verify, args | paths, budget_s, target=reference, cwd=root.root)

        return await in_job(ctx, job, VerificationResult.model_validate)


def _register_bench(server: MCPServer, root: ProjectRoot, functions: JobFunctions) -> None:
    @server.tool(annotations=RUNS_CODE, title="Time a rewrite")
    async def bench(
        target: Target,
        candidate: Candidate = None,
        device: DeviceArg = "auto",
        runs: Annotated[int, Field(ge=1, le=100_000, description="Timed runs of each side.")] = 100,
        budget_s: Budget = 1800.0,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, BenchResult]:
        """Time the baseline (and the candidate, interleaved): medians, IQR, noise threshold, speed-up,
        significance and plausibility flags. Timing only: verify first."""

        def job() -> Job:
            paths = {
                "target": str(root.path(target, "target")),
                "candidate": _opt(root, candidate, "candidate"),
            }
            return Job(
                functions.bench,
                {"device": device, "runs": runs} | paths,
                budget_s,
                target=target,
                cwd=root.root,
            )

        return await in_job(ctx, job, BenchResult.model_validate)


def _opt(root: ProjectRoot, value: str | None, what: str) -> str | None:
    path = root.optional(value, what)
    return str(path) if path else None


def _register_optimize(server: MCPServer, root: ProjectRoot, functions: JobFunctions) -> None:
    @server.tool(annotations=RUNS_CODE, title="Optimize a kernel")
    async def optimize(
        target: Target,
        problem: Annotated[
            str | None,
            Field(description="The KernelBench problem (reference) when target is a ModelNew file."),
        ] = None,
        backend: BackendArg = "recipes",
        transform: Annotated[
            TransformId | None, Field(description="Try only this catalog transform.")
        ] = None,
        iterations: Annotated[int, Field(ge=1, le=50, description="Loop iterations.")] = 3,
        device: DeviceArg = "auto",
        samples: Annotated[int, Field(ge=1, le=32, description="llm backend: candidates per request.")] = 1,
        repairs: Annotated[
            int,
            Field(
                ge=0,
                le=10,
                description="llm backend: repair rounds for a candidate that fails to build or verify.",
            ),
        ] = 1,
        language: LanguageArg = "cuda",
        detail: Detail = "summary",
        top_k: TopK = 20,
        budget_s: Budget = 3600.0,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, RunReply]:
        """One optimize loop run (diagnose, plan, rewrite, verify, time, re-profile, decide), saved as a
        run under the root. Never edits the user's files: the best candidate's source is in the run
        folder (read_run with detail="full"). Cancelling the call stops the run; its record says so."""
        run_dir = root.fresh_run()
        options: dict[str, Any] = {
            "backend": backend,
            "transform": transform,
            "iterations": iterations,
            "device": device,
            "samples": samples,
            "repairs": repairs,
            "language": language,
        }

        def job() -> Job:
            paths = {"target": str(root.path(target, "target")), "problem": _opt(root, problem, "problem")}
            return Job(
                functions.optimize,
                options | paths | {"out": str(run_dir)},
                budget_s,
                target=target,
                run_dir=run_dir,
                cwd=root.root,
            )

        def reply(data: dict[str, Any]) -> RunReply:
            return run_reply(RunRecord.model_validate(data), run=str(run_dir), detail=detail, top_k=top_k)

        return await in_job(ctx, job, reply)
