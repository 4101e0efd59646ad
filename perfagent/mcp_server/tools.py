"""What each MCP tool does, as plain synchronous functions over perfagent's library API.

The server module only wraps these (threads, progress, error results); keeping them here means they
are typed, documented and testable without an MCP session. Every path argument is resolved against
the server's working directory (``root``) so that an agent's relative paths mean what it sees in the
project, and so that nothing relative crosses into perfagent's worker subprocesses.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import Field

from knowledge.transforms import Transform, catalog
from perfagent.api import diagnose, load, profile
from perfagent.compare import Comparison, compare_records
from perfagent.errors import BadInput
from perfagent.models import Profile
from perfagent.optimize.api import optimize
from perfagent.records import RunRecord
from perfagent.session import RECORD_FILE, load_record, runs_root
from perfagent.timing.bench import bench
from perfagent.timing.models import BenchResult
from perfagent.verify.api import verify
from perfagent.verify.models import VerificationResult
from profilers.model import Frozen

ProgressSink = Callable[[str], None]
"""Receives one human-readable progress line at a time."""

DeviceName = Literal["auto", "cpu", "cuda"]


class RunSummary(Frozen):
    """One saved run folder."""

    path: str
    """The run folder (absolute)."""
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


class RunList(Frozen):
    """The saved runs under a runs folder, newest first."""

    root: str
    runs: list[RunSummary] = Field(default_factory=list)
    unreadable: list[str] = Field(default_factory=list)
    """Folders whose record.json could not be read (with the reason)."""


def resolve(path: str, root: Path) -> Path:
    """``path`` made absolute against ``root``; a missing path is bad input naming what exists."""
    p = Path(path).expanduser()
    p = p if p.is_absolute() else root / p
    if not p.exists():
        raise BadInput(
            f"{path} does not exist (looked in {p.parent})", hint="pass a path relative to the project"
        )
    return p


def _optional(path: str | None, root: Path) -> Path | None:
    return resolve(path, root) if path else None


def diagnose_target(
    target: str, root: Path, *, kernel: str | None, profiler: str, progress: ProgressSink
) -> RunRecord:
    """Diagnose a report, saved run, .cu/.py target (see ``perfagent.diagnose``)."""
    return diagnose(str(resolve(target, root)), kernel=kernel, profiler=profiler, progress=progress)


def profile_target(
    target: str, root: Path, *, kernel: str | None, profiler: str, progress: ProgressSink
) -> Profile:
    """Canonical metrics per kernel, without a diagnosis."""
    return profile(str(resolve(target, root)), kernel=kernel, profiler=profiler, progress=progress)


def verify_candidate(
    reference: str,
    candidate: str | None,
    root: Path,
    *,
    device: DeviceName,
    seeds: int,
    timeout_s: float,
    progress: ProgressSink,
) -> VerificationResult:
    """The verifier's verdict and checks for ``candidate`` against ``reference``."""
    return verify(
        resolve(reference, root),
        _optional(candidate, root),
        device=device,
        seeds=seeds,
        timeout_s=timeout_s,
        progress=progress,
    )


def bench_candidate(
    target: str, candidate: str | None, root: Path, *, device: DeviceName, runs: int, progress: ProgressSink
) -> BenchResult:
    """Interleaved timing of ``target`` (and ``candidate``): medians, noise, speed-up, flags."""
    return bench(
        resolve(target, root), _optional(candidate, root), device=device, runs=runs, progress=progress
    )


def optimize_target(
    target: str,
    root: Path,
    *,
    problem: str | None,
    backend: str,
    transform: str | None,
    iterations: int,
    device: DeviceName,
    progress: ProgressSink,
    samples: int = 1,
    repairs: int = 1,
    language: str = "cuda",
) -> RunRecord:
    """One optimize run; the user's files are never changed (no ``apply``). ``samples``, ``repairs`` and
    ``language`` are the llm backend's ``--samples``, ``--repairs`` and ``--language``."""
    return optimize(
        resolve(target, root),
        problem=_optional(problem, root),
        backend=backend,
        transform=transform,
        iterations=iterations,
        device=device,
        samples=samples,
        repairs=repairs,
        language=language,
        progress=lambda event: progress(getattr(event, "message", str(event))),
    )


def _as_record(path: Path) -> RunRecord:
    loaded = load(path)
    if isinstance(loaded, RunRecord):
        return loaded
    return diagnose(str(path))


def compare_runs(before: str, after: str, root: Path) -> Comparison:
    """Per-kernel deltas between two saved runs or recorded reports."""
    return compare_records(_as_record(resolve(before, root)), _as_record(resolve(after, root)))


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
        path=str(folder.resolve()),
        kind=record.kind,
        target=record.target,
        created=record.created,
        kernels=len(record.kernels),
        top_finding=top,
        best=record.best,
    )


def list_runs(root: Path, runs_dir: str | None = None, limit: int = 50) -> RunList:
    """Saved runs (newest first) under ``runs_dir`` (default: perfagent's runs folder)."""
    base = Path(runs_dir) if runs_dir else runs_root()
    base = base if base.is_absolute() else root / base
    result = RunList(root=str(base))
    if not base.is_dir():
        return result
    folders = sorted((p for p in base.iterdir() if (p / RECORD_FILE).is_file()), reverse=True)
    runs: list[RunSummary] = []
    unreadable: list[str] = []
    for folder in folders[:limit]:
        try:
            runs.append(_summary(folder))
        except BadInput as exc:
            unreadable.append(f"{folder}: {exc.message}")
    return RunList(root=str(base), runs=runs, unreadable=unreadable)


def read_run(run: str, root: Path) -> RunRecord:
    """The record of one saved run (folder or record.json)."""
    return load_record(resolve(run, root))
