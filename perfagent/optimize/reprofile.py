"""Re-profile a workload file (the original or a candidate) with ncu through its harness command.

``perfagent.profile`` runs ncu on ``python -m perfagent.workloads.run_spec`` (or the KernelBench or
Triton harness). A candidate's run goes whole into the confinement of ``perfagent.sandbox.profiled``
(ncu and the harness under it); the user's original does not (``docs/verify.md``, "What runs confined").
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfagent.api import profile
from perfagent.optimize.reprofile_tiers import tiers_needing_b, with_tier_b_merged
from perfagent.sandbox.extension_build import prebuild
from perfagent.sandbox.profiled import CANDIDATE_CODE
from perfagent.workloads.optimizable import OptimizeWorkload
from profilers.core_errors import PerfAgentError
from profilers.model import KernelProfile, MetricTier, Profile

Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    return None


def _python() -> list[str]:
    """``env PYTHONPATH=<repo>:... python``: the harness imports perfagent whatever the profiler's working folder."""
    repo = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(p for p in (repo, os.environ.get("PYTHONPATH", "")) if p)
    return ["env", f"PYTHONPATH={path}", sys.executable]


def harness_command(wl: OptimizeWorkload, file: Path, spec: Path | None) -> list[str]:
    """The command ncu profiles for ``file`` (the original or a candidate)."""
    return wl.harness_command(_python(), file, spec)


def harness_nvtx_include(wl: OptimizeWorkload) -> list[str]:
    """ncu NVTX filters for ``harness_command``: KernelBench profiles only the ``forward()`` calls (the harness
    wraps each in ``WORKLOAD_NVTX_RANGE``), not the kernels that prepare inputs or build the model."""
    return wl.nvtx_include()


@dataclass
class Reprofile:
    """A profile of one workload file, the kernel the loop targets, or why there is none."""

    profile: Profile | None = None
    kernel: KernelProfile | None = None
    note: str | None = None
    sandbox: str | None = None
    """How the profiled run was confined (the ``sandbox:`` line; None for the user's own file)."""


def profile_options(
    wl: OptimizeWorkload,
    file: Path,
    spec: Path | None,
    *,
    arch: str,
    timeout_s: float,
    candidate: bool,
    progress: Progress = _quiet,
) -> dict[str, Any]:
    """The keyword arguments of ``perfagent.profile`` that re-profile ``file``, confined when ``candidate``."""
    text = file.read_text(encoding="utf-8", errors="replace")
    return {
        "command": harness_command(wl, file, spec),
        "profiler": "ncu",
        "kernel": wl.kernel_regex(text),
        "nvtx_include": harness_nvtx_include(wl),
        "arch": arch,
        "timeout_s": timeout_s,
        "progress": progress,
        "staged": False,
        "launcher": CANDIDATE_CODE if candidate else None,
    }


def reprofile(
    wl: OptimizeWorkload,
    file: Path,
    spec: Path | None,
    *,
    workdir: Path,
    target_kernel: str | None,
    arch: str,
    timeout_s: float,
    candidate: bool,
    progress: Progress = _quiet,
    tiers: tuple[MetricTier, ...] = ("A", "B"),
) -> Reprofile:
    """Profile ``file`` with ncu through the harness; never raises for a profiler problem (it becomes a note).

    ``candidate``: ``file`` is candidate code (confined), not the user's original (run as it is).
    One targeted run (not staged: the kernel filter already names the changed kernel) collecting ``tiers``;
    when tier B was left out but the kernel's tier-A evidence calls for it, a second run adds it
    (``perfagent.optimize.reprofile_tiers``).
    """
    workdir.mkdir(parents=True, exist_ok=True)
    try:  # the profiled run loads the extension the confined build step made (one build per source)
        prebuild([file], timeout_s=timeout_s)
    except PerfAgentError as exc:
        return Reprofile(note=f"not re-profiled: {exc.message}")
    options = profile_options(
        wl, file, spec, arch=arch, timeout_s=timeout_s, candidate=candidate, progress=progress
    )
    try:
        prof = profile(None, workdir=workdir, metric_tiers=tiers, **options)
        if tiers_needing_b(tiers, prof):
            tier_b = profile(None, workdir=workdir / "tier-b", metric_tiers=("B",), **options)
            prof = with_tier_b_merged(prof, tier_b)
    except PerfAgentError as exc:
        return Reprofile(note=f"not re-profiled: {exc.message}")
    # the confinement's line, which ``perfagent.profile`` puts first in the notes of a launched run
    sandbox = next((n for n in prof.notes if n.startswith("sandbox:")), None) if candidate else None
    (workdir / "profile.json").write_text(prof.model_dump_json(indent=2), encoding="utf-8")
    if not prof.kernels:
        return Reprofile(
            profile=prof,
            note=f"the profile holds no kernel ({'; '.join(prof.notes) or prof.mode})",
            sandbox=sandbox,
        )
    return Reprofile(profile=prof, kernel=pick_kernel(prof.kernels, target_kernel), sandbox=sandbox)


def pick_kernel(kernels: list[KernelProfile], name: str | None) -> KernelProfile:
    """The kernel called ``name`` (base name), else the one with the most total time; the workload's kernels
    before the harness's (``KernelProfile.harness``)."""
    workload = [k for k in kernels if not k.harness] or kernels
    if name:
        for k in workload:
            if name in (k.base_name, k.name):
                return k
    return max(workload, key=lambda k: k.total_duration_s or (k.metrics.duration_s or 0.0) * k.invocations)
