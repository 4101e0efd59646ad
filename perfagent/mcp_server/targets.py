"""What an agent can point the tools at, found under the project root (the ``list_targets`` tool).

Before this tool the cheapest way for an agent to learn the kernel names was a failing call. The
walk is bounded (files visited, entries per kind) so that a huge project cannot blow up the reply,
and it skips version-control, virtual-environment and build folders.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from pydantic import Field

from knowledge.transforms import catalog
from perfagent.mcp_server.boundary import ProjectRoot
from perfagent.session import load_record
from profilers.core_errors import BadInput
from profilers.model import Frozen

MAX_FILES = 20_000
"""Files looked at before the walk stops (said in the reply)."""
_SKIPPED = {"node_modules", "__pycache__", "site-packages", "build", "dist"}
_HEAD_CHARS = 20_000


class LaunchSpecKernel(Frozen):
    """A CUDA kernel with a launch spec: diagnose, verify, bench and optimize take the spec or the .cu."""

    spec: str
    source: str
    kernel: str


class TransformEntry(Frozen):
    """One catalog transform (explain_transform gives the whole entry)."""

    id: str
    title: str
    fixes: list[str]


class RunEntry(Frozen):
    """One saved run (read_run takes its id)."""

    id: str
    kind: str
    target: str


class Targets(Frozen):
    """Reports, runs, launch-spec kernels and KernelBench files under the root, and the transforms."""

    root: str
    reports: list[str] = Field(default_factory=list)
    """Recorded profiler reports (.ncu-rep): diagnose_report reads them without a GPU."""
    runs: list[RunEntry] = Field(default_factory=list)
    """Saved runs, newest first."""
    launch_specs: list[LaunchSpecKernel] = Field(default_factory=list)
    kernelbench_problems: list[str] = Field(default_factory=list)
    """Python files with ``class Model`` and ``get_inputs``: the reference for verify/bench/optimize."""
    candidates: list[str] = Field(default_factory=list)
    """Python files with ``class ModelNew`` (rewrites to verify against a problem)."""
    transforms: list[TransformEntry] = Field(default_factory=list)
    truncated: list[str] = Field(default_factory=list)
    """Kinds cut at ``limit`` entries, or 'walk' when the walk stopped at its file budget."""


def _files(root: Path) -> tuple[list[Path], bool]:
    found: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED)
        for name in sorted(files):
            found.append(Path(folder) / name)
            if len(found) >= MAX_FILES:
                return found, True
    return found, False


def _head(path: Path) -> str:
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            return handle.read(_HEAD_CHARS)
    except OSError:
        return ""


def _spec(path: Path, root: Path) -> LaunchSpecKernel | None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None
    source, kernel = data.get("source"), data.get("kernel")
    if not isinstance(source, str) or not isinstance(kernel, str):
        return None
    rel = path.relative_to(root)
    return LaunchSpecKernel(spec=str(rel), source=str(rel.parent / source), kernel=kernel)


def list_targets(root: ProjectRoot, limit: int = 50) -> Targets:
    """Everything the tools can take under ``root`` (at most ``limit`` per kind)."""
    files, walk_cut = _files(root.root)
    reports: list[str] = []
    specs: list[LaunchSpecKernel] = []
    problems: list[str] = []
    candidates: list[str] = []
    for path in files:
        rel = str(path.relative_to(root.root))
        if path.name.endswith(".ncu-rep"):
            reports.append(rel)
        elif path.name.endswith(".launch.toml") and (spec := _spec(path, root.root)) is not None:
            specs.append(spec)
        elif path.suffix == ".py":
            head = _head(path)
            if "class ModelNew" in head:
                candidates.append(rel)
            elif "class Model" in head and "def get_inputs" in head:
                problems.append(rel)
    runs = [e for p in root.saved_runs()[:limit] if (e := _run_entry(p)) is not None]
    kinds: dict[str, list[str] | list[LaunchSpecKernel]] = {
        "reports": reports,
        "launch_specs": specs,
        "kernelbench_problems": problems,
        "candidates": candidates,
    }
    truncated = [name for name, items in kinds.items() if len(items) > limit] + (["walk"] if walk_cut else [])
    return Targets(
        root=str(root.root),
        reports=reports[:limit],
        runs=runs,
        launch_specs=specs[:limit],
        kernelbench_problems=problems[:limit],
        candidates=candidates[:limit],
        transforms=[TransformEntry(id=t.id, title=t.title, fixes=list(t.fixes)) for t in catalog().values()],
        truncated=truncated,
    )


def _run_entry(run: Path) -> RunEntry | None:
    try:
        record = load_record(run)
    except BadInput:
        return None  # list_runs names unreadable records and why
    return RunEntry(id=run.name, kind=record.kind, target=record.target)
