"""What each MCP tool does, as plain synchronous functions over perfagent's library API.

The server module only wraps these (threads or job processes, progress, replies); keeping them here
means they are typed, documented and testable without an MCP session. Paths reach these functions
already resolved inside the project root (``boundary.ProjectRoot``), so nothing relative crosses into
perfagent's worker subprocesses and nothing outside the root is read or run. A program the agent has
profiled is candidate code to perfagent: ncu and the program run inside the confinement a worker gets
(``perfagent.sandbox.profiled.CANDIDATE_CODE``).

The ``*_job`` functions run inside a ``job_worker`` process (see ``jobs``): they take plain JSON
arguments and a progress callback, and return a model.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import Field

from knowledge.transforms import Transform, catalog
from perfagent.api import diagnose, load, profile
from perfagent.compare import Comparison, GateVerdict, compare_records, gate, record_changes
from perfagent.mcp_server.boundary import ProjectRoot
from perfagent.optimize.api import optimize
from perfagent.records import RunRecord
from perfagent.sandbox.profiled import CANDIDATE_CODE
from perfagent.session import load_record
from perfagent.target import TargetDescription
from perfagent.timing.bench import bench
from perfagent.timing.models import BenchResult
from perfagent.verify.api import verify
from perfagent.verify.models import VerificationResult
from perfagent.workloads import registry
from perfagent.workloads.describe import Describe, describe_target
from perfagent.workloads.targets import ProfileTarget
from profilers.core_errors import BadInput
from profilers.model import Frozen, Profile

ProgressSink = Callable[[str], None]
"""Receives one human-readable progress line at a time."""


class RunSummary(Frozen):
    """One saved run folder."""

    path: str
    """The run folder (absolute)."""
    id: str
    """The run id: pass it as ``run`` to read_run or as ``before``/``after`` to compare."""
    kind: str
    """'diagnose' or 'optimize'."""
    target: str
    created: str
    kernels: int
    """Kernels in the record."""
    top_finding: str | None = None
    """The first kernel's top finding ('category: title')."""
    best: str | None = None
    """Optimize runs: the accepted candidate's id."""
    stopped: str | None = None
    """Optimize runs: why the loop stopped ('interrupted: ...' for a cancelled run)."""


class RunList(Frozen):
    """The saved runs under a runs folder, newest first."""

    root: str
    runs: list[RunSummary] = Field(default_factory=list)
    unreadable: list[str] = Field(default_factory=list)
    """Folders whose record.json could not be read (with the reason)."""


class CompareReply(Frozen):
    """Per-kernel deltas and the regression verdict (the CLI's ``compare --gate``)."""

    comparison: Comparison
    gate: GateVerdict
    """passed / regressions over the matched kernels: a slow-down beyond noise and ``max_regression_pct``."""


def described(path: Path, describe: Describe = describe_target) -> ProfileTarget:
    """``path`` classified once (``describe``); a tool asks the result (recorded?) and hands it on.

    Raises:
        BadInput: the path is missing or of a type perfagent cannot profile.
    """
    return registry.resolve_profile_target(str(path), (), describe)


def diagnose_target(
    root: ProjectRoot,
    target: Path,
    tgt: ProfileTarget,
    *,
    kernel: str | None,
    profiler: str,
    progress: ProgressSink,
) -> tuple[RunRecord, Path | None]:
    """The record of ``target`` (described as ``tgt``) and its run folder: a report is read in place
    (nothing saved), a saved run is re-read, anything else is profiled into a new run folder under the root."""
    if tgt.is_saved_run:
        return diagnose(tgt, kernel=kernel, profiler=profiler, progress=progress), target
    if tgt.is_recorded:
        return diagnose(tgt, kernel=kernel, profiler=profiler, save=False, progress=progress), None
    run = root.fresh_run()
    record = diagnose(
        tgt, kernel=kernel, profiler=profiler, run_dir=run, progress=progress, launcher=CANDIDATE_CODE
    )
    return record, run


def profile_target(target: Path, *, kernel: str | None, profiler: str, progress: ProgressSink) -> Profile:
    """Canonical metrics per kernel, without a diagnosis."""
    return profile(str(target), kernel=kernel, profiler=profiler, progress=progress, launcher=CANDIDATE_CODE)


def diagnose_job(
    progress: ProgressSink, *, description: dict[str, object], kernel: str | None, profiler: str, run_dir: str
) -> RunRecord:
    """Profile and diagnose a program into ``run_dir`` (in a job worker; a stopped run leaves no folder).

    ``description`` is the target as the server described it (``TargetDescription`` as JSON): the worker
    reads it instead of classifying the file again."""
    return diagnose(
        TargetDescription.model_validate(description),
        kernel=kernel,
        profiler=profiler,
        run_dir=Path(run_dir),
        progress=progress,
        launcher=CANDIDATE_CODE,
    )


def verify_job(
    progress: ProgressSink,
    *,
    reference: str,
    candidate: str | None,
    device: str,
    seeds: int,
    timeout_s: float,
) -> VerificationResult:
    """The verifier's verdict and checks for ``candidate`` against ``reference`` (in a job worker)."""
    return verify(
        Path(reference),
        Path(candidate) if candidate else None,
        device=device,  # type: ignore[arg-type]
        seeds=seeds,
        timeout_s=timeout_s,
        progress=progress,
    )


def bench_job(
    progress: ProgressSink, *, target: str, candidate: str | None, device: str, runs: int
) -> BenchResult:
    """Interleaved timing of ``target`` (and ``candidate``): medians, noise, speed-up, flags (in a job worker)."""
    return bench(
        Path(target),
        Path(candidate) if candidate else None,
        device=device,  # type: ignore[arg-type]
        runs=runs,
        progress=progress,
    )


def optimize_job(progress: ProgressSink, *, target: str, out: str, **options: object) -> RunRecord:
    """One optimize run into ``out`` (in a job worker); the user's files are never changed (no ``apply``)."""
    given: dict[str, Any] = {name: value for name, value in options.items() if value is not None}
    return optimize(
        Path(target),
        out=out,
        progress=lambda event: progress(getattr(event, "message", str(event))),
        **given,
    )


def _as_record(path: Path) -> RunRecord:
    loaded = load(path)
    return loaded if isinstance(loaded, RunRecord) else diagnose(str(path), save=False)


def _only(record: RunRecord, pattern: str | None, side: str) -> RunRecord:
    """``record`` narrowed to the kernels whose name matches ``pattern`` (a regex)."""
    if not pattern:
        return record
    try:
        wanted = re.compile(pattern)
    except re.error as exc:
        raise BadInput(
            f"{side}_kernel {pattern!r} is not a regular expression ({exc})", hint="escape ( ) < > with \\"
        ) from None
    kept = [k for k in record.kernels if wanted.search(k.name)]
    if not kept:
        names = ", ".join(k.name.split("(")[0] for k in record.kernels[:8])
        raise BadInput(
            f"no kernel of {record.target} matches {side}_kernel {pattern!r}", hint=f"its kernels: {names}"
        )
    return record.model_copy(update={"kernels": kept})


def compare_runs(
    before: Path,
    after: Path,
    *,
    before_kernel: str | None = None,
    after_kernel: str | None = None,
    max_regression_pct: float = 0.0,
) -> CompareReply:
    """Per-kernel deltas between two saved runs or reports (or two kernels of one), and the gate verdict."""
    b = _only(_as_record(before), before_kernel, "before")
    a = _only(_as_record(after), after_kernel, "after")
    comparison = compare_records(b, a)
    return CompareReply(
        comparison=comparison, gate=gate(record_changes(comparison), max_regression_pct=max_regression_pct)
    )


def explain_transform(transform_id: str) -> Transform:
    """The catalog entry of one transform (what it does, when, expected effect, recipes)."""
    known = catalog()
    if transform_id not in known:
        raise BadInput(
            f"unknown transform {transform_id!r}", hint="known transforms: " + ", ".join(sorted(known))
        )
    return known[transform_id]


def _summary(folder: Path) -> RunSummary:
    record = load_record(folder)
    top = None
    if record.kernels and record.kernels[0].findings:
        f = record.kernels[0].findings[0]
        top = f"{f.category}: {f.title}"
    return RunSummary(
        path=str(folder),
        id=folder.name,
        kind=record.kind,
        target=record.target,
        created=record.created,
        kernels=len(record.kernels),
        top_finding=top,
        best=record.best,
        stopped=record.optimize.stopped if record.optimize else None,
    )


def list_runs(root: ProjectRoot, runs_dir: str | None = None, limit: int = 50) -> RunList:
    """Saved runs (newest first) under ``runs_dir`` (default: the server's runs folder under the root)."""
    base = root.folder(runs_dir, "runs_dir")
    runs: list[RunSummary] = []
    unreadable: list[str] = []
    for folder in root.saved_runs(base)[:limit]:
        try:
            runs.append(_summary(folder))
        except BadInput as exc:
            unreadable.append(f"{folder}: {exc.message}")
    return RunList(root=str(base), runs=runs, unreadable=unreadable)
