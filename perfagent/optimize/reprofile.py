"""Re-profile a workload file (the original or a candidate) with ncu through its harness command.

``perfagent.profile`` runs ncu on ``python -m perfagent.workloads.torch_free_harness`` (a launch spec it can
serve: ``perfagent.workloads.harness_choice``), else ``perfagent.workloads.run_spec`` (or the KernelBench or
Triton harness). A candidate's run goes whole into the confinement of ``perfagent.sandbox.profiled``
(ncu and the harness under it, whichever harness it is); the user's original does not (``docs/verify.md``,
"What runs confined"). The profile's notes say which harness ran, and each profile is logged
(``profile_runs``) for the record's ``cost.profiles``.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfagent.api import profile
from perfagent.optimize.reprofile_tiers import tiers_needing_b, with_tier_b_merged
from perfagent.run_cost import ProfileRun
from perfagent.sandbox.extension_build import prebuild
from perfagent.sandbox.profiled import CANDIDATE_CODE
from perfagent.workloads.harness_choice import HarnessChoice, torch_harness
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


def harness_command(
    wl: OptimizeWorkload, file: Path, spec: Path | None, harness: HarnessChoice | None = None
) -> list[str]:
    """The command ncu profiles for ``file`` (the original or a candidate) through ``harness`` (None: torch's)."""
    return wl.harness_command(_python(), file, spec, harness)


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
    harness: HarnessChoice | None = None
    """The harness ncu started (None: the workload's own program)."""
    wall_s: float = 0.0


_RUNS: list[ProfileRun] = []
_RUNS_LOCK = threading.Lock()


def profile_runs() -> list[ProfileRun]:
    """Every profile ``reprofile`` made in this process, in order (a run keeps those after its start)."""
    with _RUNS_LOCK:
        return list(_RUNS)


def _log(of: str, rp: Reprofile, ncu_runs: int) -> None:
    run = ProfileRun(
        of=of,
        harness=rp.harness.name if rp.harness else None,
        harness_reason=rp.harness.reason if rp.harness else "",
        wall_s=round(rp.wall_s, 3),
        ncu_runs=ncu_runs,
        profiled=rp.profile is not None,
    )
    with _RUNS_LOCK:
        _RUNS.append(run)


def profile_options(
    wl: OptimizeWorkload,
    file: Path,
    spec: Path | None,
    *,
    arch: str,
    timeout_s: float,
    candidate: bool,
    progress: Progress = _quiet,
    harness: HarnessChoice | None = None,
) -> dict[str, Any]:
    """The keyword arguments of ``perfagent.profile`` that re-profile ``file`` through ``harness``, confined
    when ``candidate`` (the confinement wraps ncu and the harness, whichever it is)."""
    text = file.read_text(encoding="utf-8", errors="replace")
    return {
        "command": harness_command(wl, file, spec, harness),
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
    (``perfagent.optimize.reprofile_tiers``). A launch spec's profile runs the torch-free harness where it
    serves (``wl.profile_harness``); when that profile fails, it is made again through the torch harness,
    the reason in the profile's notes.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:  # the profiled run loads the extension the confined build step made (one build per source)
        prebuild([file], timeout_s=timeout_s)
    except PerfAgentError as exc:
        return Reprofile(note=f"not re-profiled: {exc.message}")
    profiling = _Profiling(wl, file, spec, workdir, tiers, candidate)
    options = {"arch": arch, "timeout_s": timeout_s, "progress": progress}
    harness = wl.profile_harness(spec)
    try:
        try:
            prof = profiling.run(harness, options)
        except PerfAgentError as exc:
            if harness is None or harness.name != "torch-free":
                raise
            harness = torch_harness(f"the torch-free harness failed ({exc.message})")
            prof = profiling.run(harness, options)
    except PerfAgentError as exc:
        rp = Reprofile(note=f"not re-profiled: {exc.message}", harness=harness)
        return profiling.done(rp, started, target_kernel)
    if harness is not None:
        prof = prof.model_copy(update={"notes": [*prof.notes, harness.describe()]})
    # the confinement's line, which ``perfagent.profile`` puts first in the notes of a launched run
    sandbox = next((n for n in prof.notes if n.startswith("sandbox:")), None) if candidate else None
    (workdir / "profile.json").write_text(prof.model_dump_json(indent=2), encoding="utf-8")
    return profiling.done(Reprofile(profile=prof, sandbox=sandbox, harness=harness), started, target_kernel)


@dataclass
class _Profiling:
    """The ncu runs of one ``reprofile`` call (a retry through the torch harness included)."""

    wl: OptimizeWorkload
    file: Path
    spec: Path | None
    workdir: Path
    tiers: tuple[MetricTier, ...]
    candidate: bool
    ncu_runs: int = 0

    def run(self, harness: HarnessChoice | None, options: dict[str, Any]) -> Profile:
        """One profile through ``harness``: tier A (and B), then tier B alone when tier A calls for it."""
        kwargs = profile_options(
            self.wl, self.file, self.spec, candidate=self.candidate, harness=harness, **options
        )
        self.ncu_runs += 1
        prof = profile(None, workdir=self.workdir, metric_tiers=self.tiers, **kwargs)
        if tiers_needing_b(self.tiers, prof):
            self.ncu_runs += 1
            tier_b = profile(None, workdir=self.workdir / "tier-b", metric_tiers=("B",), **kwargs)
            prof = with_tier_b_merged(prof, tier_b)
        return prof

    def done(self, rp: Reprofile, started: float, target_kernel: str | None) -> Reprofile:
        """``rp`` with its wall time and target kernel (or why none), logged in ``profile_runs``."""
        rp.wall_s = time.monotonic() - started
        prof = rp.profile
        if prof is not None and not prof.kernels:
            rp.note = f"the profile holds no kernel ({'; '.join(prof.notes) or prof.mode})"
        elif prof is not None:
            rp.kernel = pick_kernel(prof.kernels, target_kernel)
        _log("original" if not self.candidate else self.workdir.parent.name, rp, self.ncu_runs)
        return rp


def pick_kernel(kernels: list[KernelProfile], name: str | None) -> KernelProfile:
    """The kernel called ``name`` (base name), else the one with the most total time; the workload's kernels
    before the harness's (``KernelProfile.harness``)."""
    workload = [k for k in kernels if not k.harness] or kernels
    if name:
        for k in workload:
            if name in (k.base_name, k.name):
                return k
    return max(workload, key=lambda k: k.total_duration_s or (k.metrics.duration_s or 0.0) * k.invocations)
