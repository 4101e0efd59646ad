"""The original, before any rewrite: profiled and diagnosed, and timed on a GPU.

Where the diagnosis comes from depends on the machine, not on the workload's kind: ncu through the harness
on a GPU, else a recorded report, else static analysis when the workload allows it (a ``.cu`` file), else
nothing. How the original is timed is the workload's answer (``timed_by``): CUDA events through
``perfagent.timing.bench``, or ncu's kernel durations from a second profiled run (their disagreement is the
noise a candidate must beat).
"""

from __future__ import annotations

import re
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from perfagent.classifier import classify
from perfagent.optimize import measure
from perfagent.optimize.events import Info, ProgressCallback
from perfagent.optimize.limits import MeasureLimits
from perfagent.optimize.loop_state import BaselineState
from perfagent.optimize.services import Services, current
from perfagent.records import FindingSummary, OptimizeBaseline, ProfileSummary
from perfagent.rewrite.hardware import described_hardware
from perfagent.rewrite.reference_profile import reference_profile_lines
from perfagent.timing.models import CompileBaseline
from perfagent.workloads.optimizable import OptimizeWorkload
from profilers.core_errors import BadInput, PerfAgentError
from profilers.model import DeviceInfo, KernelDiagnosis, Profile

Progress = ProgressCallback


@dataclass(frozen=True)
class LoopInputs:
    """What the loop's prompts take from the original, built once here: the loop reads these fields and
    never calls back into this module."""

    hardware: DeviceInfo | None
    """The GPU the prompts describe: the profiled device, else ``--gpu``, else None (unknown)."""
    hardware_note: str | None
    """A line for the run's notes about that choice (unknown, or a ``--gpu`` the profile overrides)."""
    reference_profile: tuple[str, ...] = ()
    """A plain-PyTorch problem: its reference's kernels as prompt lines (what a first kernel must beat)."""


@dataclass
class Baseline:
    """The original as the loop starts from it, and as the record shows it."""

    state: BaselineState
    summary: OptimizeBaseline
    profile: Profile | None
    kernels: list[KernelDiagnosis]
    diagnosis: KernelDiagnosis | None
    for_loop: LoopInputs


@dataclass
class _Diagnosed:
    """What profiling (or reading, or analysing) the original gave."""

    profile: Profile | None = None
    kernels: list[KernelDiagnosis] = field(default_factory=list)
    can_profile: bool = False
    """ncu can profile here (GPU and ncu usable)."""
    profile_note: str | None = None
    """Why candidates cannot be re-profiled, when they cannot."""


@dataclass
class _Timed:
    """The original's time and how close to its ceilings it runs (all None: not timed)."""

    time_s: float | None = None
    timer: str | None = None
    pct: float | None = None
    dram: float | None = None
    compute: float | None = None
    start: float | None = None
    """KernelBench: the starting ModelNew's speed-up over Model."""
    compiled: CompileBaseline | None = None
    """KernelBench: torch.compile(Model) against eager (``perfagent.timing.compiled``)."""


def measure_baseline(
    wl: OptimizeWorkload,
    *,
    gpu: bool,
    report: str | Path | None,
    kernel: str | None,
    run_dir: Path,
    measuring: MeasureLimits,
    emit: Progress,
    services: Services | None = None,
    named_gpu: DeviceInfo | None = None,
    asked_gpu: str | None = None,
    compile_baseline: bool = True,
) -> Baseline:
    """Profile and diagnose the original, and time it on a GPU.

    Args:
        wl: the optimize target.
        gpu: a GPU is usable here (timing, ncu).
        report: a recorded report to diagnose from when nothing can be profiled here.
        kernel: regular expression choosing the kernel of the diagnosis to target.
        run_dir: the run folder (``baseline/`` is written under it).
        measuring: how the original is built, profiled and timed (arch, limits, timing rounds).
        emit: receives progress events.
        services: what reaches the GPU and the profiler (default: ``services.current()``).
        named_gpu, asked_gpu: ``--gpu`` looked up in the knowledge base once, at set-up, and as the user
            wrote it (a note names it when the profile's GPU differs; None: not given).
        compile_baseline: KernelBench on a GPU: also time ``torch.compile(Model)`` (``--no-compile-baseline``).

    Raises:
        BadInput: ``kernel`` matches no kernel of the diagnosis.
    """
    notes: list[str] = []
    work = run_dir / "baseline"
    work.mkdir(parents=True, exist_ok=True)
    svc = current(services)
    clock = time.monotonic()
    seen = _diagnose_original(
        wl, gpu=gpu, report=report, work=work, measuring=measuring, emit=emit, notes=notes, services=svc
    )
    stages = {"profile": round(time.monotonic() - clock, 3)}
    target = target_kernel(seen.kernels, wl, kernel)
    state = _state(seen, target)
    clock = time.monotonic()
    timed = _time_original(wl, gpu, target, state, work, measuring, emit, notes, svc, compile_baseline)
    if timed.timer is not None:
        stages["time"] = round(time.monotonic() - clock, 3)
    state.time_s, state.start_speedup, state.spent_s = timed.time_s, timed.start, sum(stages.values())
    summary = _summary(wl, seen.profile, target, timed, notes).model_copy(update={"stage_s": stages})
    _say_time(timed, emit)
    return Baseline(
        state=state,
        summary=summary,
        profile=seen.profile,
        kernels=seen.kernels,
        diagnosis=target,
        for_loop=_loop_inputs(wl, seen.kernels, target, named_gpu, asked_gpu, report if not gpu else None),
    )


def _state(seen: _Diagnosed, target: KernelDiagnosis | None) -> BaselineState:
    """What the loop knows of the original once it is diagnosed (its timing is added after)."""
    return BaselineState(
        diagnosis=target,
        measured=seen.profile is not None and seen.profile.mode == "counters",
        can_profile=seen.can_profile,
        profile_note=seen.profile_note,
        kernel_name=target.profile.base_name if target else None,
    )


def _say_time(timed: _Timed, emit: Progress) -> None:
    if timed.time_s is not None:
        emit(
            Info(
                message=f"original: {timed.time_s * 1e3:.4g} ms ({timed.timer})"
                + (f", {timed.pct:.3g} % of roofline" if timed.pct is not None else "")
            )
        )


def _loop_inputs(
    wl: OptimizeWorkload,
    kernels: list[KernelDiagnosis],
    target: KernelDiagnosis | None,
    named_gpu: DeviceInfo | None,
    asked_gpu: str | None,
    report: str | Path | None,
) -> LoopInputs:
    """The prompts' hardware (never a default: ``perfagent.rewrite.hardware``) and, for a plain-PyTorch
    problem, the reference's profile lines (``report``: the recorded report they were read from)."""
    hardware = described_hardware(target.profile.device if target else None, named_gpu, asked_gpu)
    where = f"the recorded report {report}" if report else "ncu here"
    lines = reference_profile_lines(kernels, where) if wl.is_plain_pytorch else []
    return LoopInputs(hardware.device, hardware.note, tuple(lines))


def _time_original(
    wl: OptimizeWorkload,
    gpu: bool,
    target: KernelDiagnosis | None,
    state: BaselineState,
    work: Path,
    measuring: MeasureLimits,
    emit: Progress,
    notes: list[str],
    services: Services,
    compile_baseline: bool,
) -> _Timed:
    """The original's time on a GPU: CUDA events, or (a Triton script) ncu kernel durations; its share of
    the roofline from the profile when the timing did not say."""
    timed = _Timed()
    if gpu and wl.timed_by == "cuda-events":
        timed = _time_with_events(wl, work, measuring, emit, notes, services, compile_baseline)
    elif (
        gpu and wl.timed_by == "ncu" and target is not None and target.profile.metrics.duration_s is not None
    ):
        timed = _time_with_ncu(wl, target, state, work, measuring, emit, services)
    roofline = target.roofline if target is not None and state.measured else None
    if timed.pct is None and roofline is not None and roofline.fraction_of_sol is not None:
        timed.pct = roofline.fraction_of_sol * 100.0
    return timed


def _diagnose_original(
    wl: OptimizeWorkload,
    *,
    gpu: bool,
    report: str | Path | None,
    work: Path,
    measuring: MeasureLimits,
    emit: Progress,
    notes: list[str],
    services: Services,
) -> _Diagnosed:
    """ncu on a GPU, else the recorded report, else static analysis, else nothing (said in ``notes``)."""
    ncu_reason = services.ncu_availability() if gpu else "no GPU"
    out = _Diagnosed(can_profile=gpu and ncu_reason is None)
    if not out.can_profile:
        out.profile_note = (
            f"ncu cannot run here: {ncu_reason}" if gpu else "no GPU: candidates are not re-profiled"
        )
    if out.can_profile:
        if report is not None:
            notes.append(
                f"--report {report} was not used: the original was profiled here, on the GPU the candidates run on"
            )
        emit(Info(message="profiling the original with ncu …"))
        rp = services.reprofile(
            wl,
            wl.file,
            wl.spec_path,
            workdir=work,
            target_kernel=None,
            arch=measuring.arch,
            timeout_s=measuring.profile_timeout_s,
            candidate=False,
        )
        out.profile = rp.profile
        if rp.note:
            notes.append(f"original: {rp.note}")
    elif report is not None:
        emit(Info(message=f"diagnosing the recorded report {report} …"))
        recorded = services.diagnose(report, save=False)
        out.profile, out.kernels = recorded.profile(), list(recorded.kernels)
        notes.append(f"diagnosis from the recorded report {report} (not measured here)")
    elif wl.statically_analysable:
        out.profile = _static_analysis(wl, work, measuring, emit, notes, services)
    else:
        notes.append(
            "nothing was profiled (no GPU and no --report): the plan comes from the transforms the recipes can apply"
        )
    if out.profile is not None and not out.kernels:
        out.kernels = classify(out.profile)
    return out


def _static_analysis(
    wl: OptimizeWorkload,
    work: Path,
    measuring: MeasureLimits,
    emit: Progress,
    notes: list[str],
    services: Services,
) -> Profile | None:
    """nvcc/ptxas facts about the original (no GPU); None, said in ``notes``, when the build fails."""
    emit(Info(message="no GPU: static analysis of the original (nvcc/ptxas) …"))
    try:
        return services.profile(
            wl.description,  # described once, with the run: perfagent.profile does not describe it again
            profiler="static",
            arch=measuring.arch,
            workdir=work,
            timeout_s=measuring.compile_timeout_s,
        )
    except PerfAgentError as exc:
        notes.append(f"static analysis failed: {exc.message}")
        return None


def _time_with_events(
    wl: OptimizeWorkload,
    work: Path,
    measuring: MeasureLimits,
    emit: Progress,
    notes: list[str],
    services: Services,
    compile_baseline: bool,
) -> _Timed:
    """CUDA-event timing of the oracle (and of a starting ModelNew, whose speed-up candidates must beat)."""
    emit(Info(message=f"timing the original (up to {measuring.runs} rounds, CUDA events) …"))
    start_file = wl.start_file
    t = services.time(
        wl,
        start_file,
        wl.spec_path,
        runs=measuring.runs,
        warmup=measuring.warmup,
        timeout_s=measuring.timeout_s,
        compile_timeout_s=measuring.compile_timeout_s,
    )
    if t.bench is not None:
        measure.write_json(work / "bench.json", t.bench)
    if t.error:
        notes.append(f"the original could not be timed: {t.error}")
        return _Timed()
    out = _Timed(t.time_s, t.timer, t.pct_of_roofline, t.pct_of_dram_peak, t.pct_of_compute_peak)
    if start_file is not None:
        out.start = t.speedup
        notes.append(
            f"the starting ModelNew runs at {t.speedup:.3g}x of the problem's Model; candidates must beat it"
        )
    if wl.problem is not None and wl.kind == "kernelbench" and compile_baseline:
        out.compiled = _time_compiled(wl.problem, measuring, emit, notes, services)
    return out


def _time_compiled(
    problem: Path, measuring: MeasureLimits, emit: Progress, notes: list[str], services: Services
) -> CompileBaseline:
    """torch.compile(Model) against eager on this GPU (compile time excluded), said in ``notes``."""
    emit(Info(message="timing torch.compile(Model) (default mode; compile time excluded) …"))
    compiled = services.time_compiled(
        problem,
        device="cuda",
        runs=measuring.runs,
        warmup=measuring.warmup,
        timeout_s=measuring.timeout_s,
        compile_timeout_s=measuring.compile_timeout_s,
    )
    if compiled.speedup_over_eager is not None:
        notes.append(f"torch.compile(Model) runs at {compiled.speedup_over_eager:.3g}x of eager on this GPU")
    elif compiled.unavailable:
        notes.append(compiled.unavailable)
    return compiled


def _time_with_ncu(
    wl: OptimizeWorkload,
    target: KernelDiagnosis,
    state: BaselineState,
    work: Path,
    measuring: MeasureLimits,
    emit: Progress,
    services: Services,
) -> _Timed:
    """ncu kernel durations of two profiled runs: their mean is the time, their disagreement the noise."""
    assert target.profile.metrics.duration_s is not None
    durations = [target.profile.metrics.duration_s]
    emit(Info(message="profiling the original again (baseline noise for ncu-timed Triton scripts) …"))
    again = services.reprofile(
        wl,
        wl.file,
        None,
        workdir=work / "repeat",
        target_kernel=state.kernel_name,
        arch=measuring.arch,
        timeout_s=measuring.profile_timeout_s,
        candidate=False,
    )
    if again.kernel is not None and again.kernel.metrics.duration_s is not None:
        durations.append(again.kernel.metrics.duration_s)
    state.script_durations = durations
    # the diagnosis already placed this kernel on its roofline: read it, do not compute it again
    roof = target.roofline
    pct = roof.fraction_of_sol * 100.0 if roof is not None and roof.fraction_of_sol is not None else None
    dram = target.profile.metrics.dram_throughput_pct
    return _Timed(time_s=statistics.fmean(durations), timer="ncu", pct=pct, dram=dram)


def _summary(
    wl: OptimizeWorkload,
    prof: Profile | None,
    target: KernelDiagnosis | None,
    timed: _Timed,
    notes: list[str],
) -> OptimizeBaseline:
    return OptimizeBaseline(
        file=str(wl.file),
        kernel=target.profile.base_name if target else wl.entry,
        time_s=timed.time_s,
        timer=timed.timer,
        pct_of_roofline=timed.pct,
        pct_of_dram_peak=timed.dram,
        pct_of_compute_peak=timed.compute,
        start_speedup=timed.start,
        compile_time_s=timed.compiled.time_s if timed.compiled else None,
        compile_speedup=timed.compiled.speedup_over_eager if timed.compiled else None,
        compile_note=timed.compiled.unavailable if timed.compiled else None,
        profile=_profile_summary(prof, target),
        findings=[
            FindingSummary(
                category=f.category, severity=f.severity, title=f.title, transforms=list(f.transforms)
            )
            for f in (target.findings if target else [])
        ],
        notes=notes,
    )


def target_kernel(
    kernels: list[KernelDiagnosis], wl: OptimizeWorkload, regex: str | None
) -> KernelDiagnosis | None:
    """The kernel of the diagnosis the loop targets: ``regex``'s, else the workload's own, else the first.

    Raises:
        BadInput: ``regex`` matches no kernel.
    """
    if not kernels:
        return None
    if regex:
        pattern = re.compile(regex)
        for k in kernels:
            if pattern.search(k.profile.base_name) or pattern.search(k.name):
                return k
        raise BadInput(
            f"no kernel of the diagnosis matches --kernel {regex!r}",
            hint="kernels: " + ", ".join(k.profile.base_name for k in kernels[:8]),
        )
    # a template instance's profile carries the bare function name (`f`, not `f<double, 2>`)
    names = {wl.entry.split("<", 1)[0].strip()} if wl.entry else set(wl.jit_kernels)
    for k in kernels:
        if k.profile.base_name in names:
            return k
    return kernels[0]


def _profile_summary(prof: Profile | None, kd: KernelDiagnosis | None) -> ProfileSummary | None:
    if prof is None:
        return None
    if kd is None:
        return ProfileSummary(tool=prof.tool, mode=prof.mode)
    m = kd.profile.metrics
    roof = kd.roofline
    return ProfileSummary(
        tool=prof.tool,
        mode=prof.mode,
        kernel=kd.profile.base_name,
        duration_s=m.duration_s,
        dram_throughput_pct=m.dram_throughput_pct,
        sm_throughput_pct=m.sm_throughput_pct,
        memory_throughput_pct=m.memory_throughput_pct,
        achieved_occupancy_pct=kd.profile.occupancy.achieved_pct,
        fraction_of_sol_pct=roof.fraction_of_sol * 100.0
        if roof and roof.fraction_of_sol is not None
        else None,
        bound=roof.bound if roof else None,
    )
