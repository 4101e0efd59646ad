"""``perfagent.timing.bench``: how long does a workload take, and is a candidate really faster? (library API)"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from knowledge.gpus import spec_for
from perfagent.roofline import datasheet_peaks
from perfagent.sandbox.runner import run_worker
from perfagent.sandbox.wire import WORK_AFTER_END, Check, WorkerResult
from perfagent.timing.jobs import BenchRequest
from perfagent.timing.models import BenchEntry, BenchResult, Comparison, PlausibilityFlag, TimingSamples
from perfagent.timing.plausibility import flags_for, impossible, roofline, speedup_flags
from perfagent.timing.stats import NOISE_FLOOR, compare, summarize
from perfagent.workloads.describe import Describe, describe_target
from perfagent.workloads.detect import detect_candidate
from perfagent.workloads.launch_checks import preflight_launch_spec
from perfagent.workloads.launch_spec import load_launch_spec
from perfagent.workloads.model import RunnableWorkload
from perfagent.workloads.registry import reference_workload
from profilers.core_errors import BadInput, NotOnThisMachine, VerificationFailed
from profilers.model import DevicePeaks
from profilers.settings import TIMEOUTS, TIMING, Device, TimingBudget


def peaks_for_device(device_name: str | None) -> DevicePeaks | None:
    """Datasheet peaks from the knowledge GPU table, or None when the GPU is not listed."""
    if not device_name:
        return None
    spec = spec_for(device_name)
    return datasheet_peaks(spec) if spec is not None else None


def bench(
    target: str | Path | RunnableWorkload,
    candidate: str | Path | RunnableWorkload | None = None,
    *,
    device: Device = "auto",
    runs: int = 100,
    warmup: int = 10,
    budget: TimingBudget = TIMING,
    flush_l2: bool = True,
    timeout_s: float = TIMEOUTS.call_s,
    compile_timeout_s: float = TIMEOUTS.compile_s,
    peaks: DevicePeaks | None = None,
    spec: str | Path | None = None,
    kernel: str | None = None,
    seed: int = 0,
    noise_floor: float = NOISE_FLOOR,
    progress: Callable[[str], None] | None = None,
    describe: Describe = describe_target,
) -> BenchResult:
    """Time ``target`` (and ``candidate``, interleaved). Timing only: run ``perfagent.verify.verify`` first.

    Args:
        target: the baseline: a KernelBench problem (``Model``), a launch spec, or a .cu kernel with a spec.
        candidate: optional rewrite (``ModelNew`` file or .cu file), timed interleaved with the baseline.
        device: 'cuda' (CUDA events, L2 flush), 'cpu' (perf_counter; labelled CPU timing) or 'auto'.
        runs, warmup: timed rounds at most (each times baseline, candidate, baseline again); untimed calls first.
        budget: wall time the rounds may fill and fewest rounds (``TIMING``); the result's ``runs``: rounds run.
        flush_l2: zero a buffer larger than L2 before every timed call (CUDA).
        timeout_s: limit per call, s (first call and build: ``compile_timeout_s``).
        peaks: device peaks for the roofline (default: the knowledge GPU table by device name).
        spec, kernel: launch spec / entry for .cu files (as in ``verify``).
        seed, noise_floor: the timed inputs' seed; the smallest relative change ever called significant.
        progress, describe: receive progress lines; classifies a ``target`` path, once (``describe_target``).

    Returns:
        ``BenchResult``: per-series statistics, roofline, speed-up with its noise threshold and flags, notes.

    Raises:
        BadInput: unusable target/options; a .cu program or script (time those with a profiler).
        VerificationFailed: the candidate crashed, hung or raised while being timed.
    """
    started = time.monotonic()
    _check_counts(runs, warmup, budget)
    ref, cand = _workloads(target, candidate, device=device, spec=spec, kernel=kernel, describe=describe)
    return _bench_in_worker(
        ref,
        [cand] if cand is not None else [],
        device=device,
        runs=runs,
        warmup=warmup,
        budget=budget,
        flush_l2=flush_l2,
        timeout_s=timeout_s,
        compile_timeout_s=compile_timeout_s,
        peaks=peaks,
        seed=seed,
        noise_floor=noise_floor,
        progress=progress,
        started=started,
    )[0]


def bench_batch(
    target: str | Path | RunnableWorkload,
    candidates: Sequence[str | Path | RunnableWorkload],
    *,
    device: Device = "auto",
    runs: int = 100,
    warmup: int = 10,
    budget: TimingBudget = TIMING,
    flush_l2: bool = True,
    timeout_s: float = TIMEOUTS.call_s,
    compile_timeout_s: float = TIMEOUTS.compile_s,
    peaks: DevicePeaks | None = None,
    spec: str | Path | None = None,
    kernel: str | None = None,
    seed: int = 0,
    noise_floor: float = NOISE_FLOOR,
    progress: Callable[[str], None] | None = None,
) -> list[BenchResult]:
    """Time ``target`` against every one of ``candidates`` in one worker: one ``BenchResult`` each.

    Each round times the baseline, every candidate and the baseline repeat in rotating order, so each
    result reads as ``bench(target, candidate)`` would, at one worker start instead of one per candidate
    (interpreter, torch and CUDA context: most of a short benchmark). The candidates share that process:
    batch only code you would run together (the optimize loop batches launch-spec kernels, which run no
    host code of their own, and times every Python candidate alone). Arguments as for ``bench``.

    Raises:
        BadInput: no candidates, or an unusable target, candidate or option.
        VerificationFailed: a candidate crashed, hung or raised while being timed (the batch has no samples:
            time the candidates one by one to learn which).
    """
    started = time.monotonic()
    _check_counts(runs, warmup, budget)
    if not candidates:
        raise BadInput("bench_batch needs at least one candidate", hint="or call bench(target)")
    ref, _ = _workloads(target, None, device=device, spec=spec, kernel=kernel)
    cands = [_workloads(ref, c, device=device, spec=None, kernel=kernel)[1] for c in candidates]
    return _bench_in_worker(
        ref,
        [c for c in cands if c is not None],
        device=device,
        runs=runs,
        warmup=warmup,
        budget=budget,
        flush_l2=flush_l2,
        timeout_s=timeout_s,
        compile_timeout_s=compile_timeout_s,
        peaks=peaks,
        seed=seed,
        noise_floor=noise_floor,
        progress=progress,
        started=started,
    )


def _bench_in_worker(
    ref: RunnableWorkload,
    cands: list[RunnableWorkload],
    *,
    device: Device,
    runs: int,
    warmup: int,
    budget: TimingBudget,
    flush_l2: bool,
    timeout_s: float,
    compile_timeout_s: float,
    peaks: DevicePeaks | None,
    seed: int,
    noise_floor: float,
    progress: Callable[[str], None] | None,
    started: float,
) -> list[BenchResult]:
    """One timing worker for ``ref`` and ``cands``: a result per candidate (the baseline's alone without)."""
    request, backstop = batch_request(
        ref,
        cands,
        device=device,
        runs=runs,
        warmup=warmup,
        budget=budget,
        flush_l2=flush_l2,
        timeout_s=timeout_s,
        compile_timeout_s=compile_timeout_s,
        seed=seed,
    )
    outcome = run_worker(request, backstop_s=backstop, progress=progress)
    return batch_results(
        request,
        outcome.result,
        outcome.checks,
        outcome.sandbox,
        peaks=peaks,
        noise_floor=noise_floor,
        started=started,
    )


def batch_request(
    ref: RunnableWorkload,
    cands: list[RunnableWorkload],
    *,
    device: Device,
    runs: int,
    warmup: int,
    budget: TimingBudget = TIMING,
    flush_l2: bool = True,
    timeout_s: float = TIMEOUTS.call_s,
    compile_timeout_s: float = TIMEOUTS.compile_s,
    seed: int = 0,
) -> tuple[BenchRequest, float]:
    """The timing worker's request for ``ref`` against ``cands`` (resolved workloads), and its time limit, s.

    For a caller that runs the request in a worker of its own making (a ``sandbox.sequence`` step after
    verification); ``batch_results`` reads what came back.
    """
    _check_counts(runs, warmup, budget)
    request = BenchRequest(
        reference=ref,
        candidate=cands[0] if cands else None,
        batch=cands[1:],
        device=device,
        base_seed=seed,
        timeout_s=timeout_s,
        compile_timeout_s=compile_timeout_s,
        runs=runs,
        warmup=warmup,
        budget_s=budget.budget_s,
        min_runs=budget.min_runs,
        flush_l2=flush_l2,
    )
    n = max(1, len(cands))
    calls = runs * (2 + n) + warmup * (1 + n) + 2 + 2 * n
    return request, (2 + 2 * n) * compile_timeout_s + timeout_s * calls + 60


def batch_results(
    request: BenchRequest,
    result: WorkerResult | None,
    checks: list[Check],
    sandbox: str,
    *,
    peaks: DevicePeaks | None = None,
    noise_floor: float = NOISE_FLOOR,
    started: float | None = None,
) -> list[BenchResult]:
    """One ``BenchResult`` per candidate of ``request`` from the worker's ``result`` (and the checks the
    parent added: crash, hang).

    Raises:
        VerificationFailed: no samples came back (a candidate crashed, hung or raised).
    """
    ref, cands = request.reference, request.candidates()
    samples, notes, failed = _samples(result, checks, sandbox)
    if peaks is None and samples.device.startswith("cuda"):
        peaks = peaks_for_device(samples.device_name)
    shared = [c for c in failed if c.name != WORK_AFTER_END]
    per_candidate: list[tuple[RunnableWorkload | None, TimingSamples, list[Check]]] = [
        (cands[0] if cands else None, samples, [c for c in failed if c.name == WORK_AFTER_END])
    ]
    for cand, series in zip(cands[1:], samples.batch, strict=True):
        one = samples.model_copy(
            update={
                "candidate": series.samples,
                "candidate_flops": series.flops,
                "candidate_bytes": series.bytes,
                "batch": [],
            }
        )
        per_candidate.append((cand, one, [c for c in series.checks if not c.passed]))
    return [
        build_result(
            one,
            ref,
            cand,
            runs=request.runs,
            warmup=request.warmup,
            timing_budget_s=request.budget_s,
            peaks=peaks,
            precision=_precision(ref),
            extra_flags=["work-after-end-event"] if own else [],
            checks_failed=[f"{c.name}: {c.detail}" for c in shared + own],
            noise_floor=noise_floor,
            elapsed_s=time.monotonic() - started if started is not None else 0.0,
            notes=notes,
        )
        for cand, one, own in per_candidate
    ]


def _check_counts(runs: int, warmup: int, budget: TimingBudget = TIMING) -> None:
    if runs < 3:
        raise BadInput(f"--runs must be at least 3 (got {runs})", hint="use 100 or more for a stable median")
    if warmup < 0:
        raise BadInput("--warmup must be >= 0", hint="e.g. --warmup 10")
    if budget.min_runs < 3:
        raise BadInput(f"--min-runs must be at least 3 (got {budget.min_runs})", hint="e.g. --min-runs 10")
    if budget.budget_s < 0:
        raise BadInput(
            f"--timing-budget must be >= 0 s (got {budget.budget_s:g})", hint="0 takes every round of --runs"
        )


def _samples(
    result: WorkerResult | None, checks: list[Check], sandbox: str
) -> tuple[TimingSamples, list[str], list[Check]]:
    """The timing worker's samples and notes, and every check that failed on the way.

    Raises:
        VerificationFailed: no samples came back (the candidate crashed, hung or raised).
    """
    failed = [c for c in (result.checks if result else []) + checks if not c.passed]
    if result is None or result.timing is None:
        detail = failed[0].detail if failed else "the timing worker returned no samples"
        raise VerificationFailed(f"timing failed: {detail}", hint="run `perfagent verify` on the pair first")
    return result.timing, [*result.notes, *([sandbox] if sandbox else [])], failed


def _workloads(
    target: str | Path | RunnableWorkload,
    candidate: str | Path | RunnableWorkload | None,
    *,
    device: Device,
    spec: str | Path | None,
    kernel: str | None,
    describe: Describe = describe_target,
) -> tuple[RunnableWorkload, RunnableWorkload | None]:
    """The baseline and the candidate to time, with a launch spec resolved here first.

    Raises:
        BadInput: a kind that cannot be timed, a launch-spec kernel on the CPU, or a bad spec.
    """
    ref = reference_workload(describe(target, spec=spec)) if isinstance(target, (str, Path)) else target
    if ref.timed_by != "cuda-events":
        raise BadInput(
            f"cannot time a {ref.kind} itself",
            hint="give a KernelBench problem or a kernel with a launch spec (profile programs with `perfagent profile`)",
        )
    cand = None
    if candidate is not None:
        cand = (
            detect_candidate(candidate, ref, kernel=kernel)
            if isinstance(candidate, (str, Path))
            else candidate
        )
    if ref.runner == "launch-spec":
        preflight_launch_spec(ref, cand)  # a bad spec is said first, as verify says it (on any machine)
    if not ref.runs_on_cpu and device == "cpu":
        raise NotOnThisMachine(
            "launch-spec kernels run only on a CUDA GPU", hint="use --device cuda on a GPU machine"
        )
    return ref, cand


def _precision(ref: RunnableWorkload) -> str:
    if ref.runner == "launch-spec" and ref.spec_path:
        try:
            return load_launch_spec(ref.spec_path).flops_precision
        except BadInput:
            return "fp32"
    return "fp32"


def build_result(
    samples: TimingSamples,
    ref: RunnableWorkload,
    cand: RunnableWorkload | None,
    *,
    runs: int,
    warmup: int,
    peaks: DevicePeaks | None,
    timing_budget_s: float | None = None,
    precision: str = "fp32",
    extra_flags: list[PlausibilityFlag] | None = None,
    checks_failed: list[str] | None = None,
    noise_floor: float = NOISE_FLOOR,
    elapsed_s: float = 0.0,
    notes: list[str] | None = None,
) -> BenchResult:
    """Statistics, roofline, comparison and flags from raw samples (pure; unit-tested).

    ``runs`` is the most rounds asked for; the result's ``runs`` is the rounds the samples hold (fewer
    when ``timing_budget_s`` stopped them sooner), and the noise threshold comes from those samples."""
    use_peaks, device_flags, device_notes = _peaks_in_use(samples, peaks)
    flags: list[PlausibilityFlag] = [*(extra_flags or []), *device_flags]
    all_notes = [*(notes or []), *device_notes]
    base_stats = summarize("baseline", samples.baseline)
    base_roof = roofline(
        samples.baseline_flops, samples.baseline_bytes, base_stats.median_s, use_peaks, precision
    )
    flags += flags_for(base_roof if use_peaks else None, base_stats.median_s)
    verdict = (
        _judge_candidate(samples, samples.candidate, cand, use_peaks, precision, noise_floor)
        if samples.candidate
        else None
    )
    if verdict is not None:
        flags += verdict.plausibility
        all_notes += verdict.notes
    all_notes.extend(checks_failed or [])
    return BenchResult(
        device=samples.device,
        device_name=samples.device_name,
        timer=samples.timer,
        runs=len(samples.baseline),
        warmup=warmup,
        runs_asked=runs,
        timing_budget_s=timing_budget_s,
        l2_flush_bytes=samples.l2_flush_bytes,
        baseline=BenchEntry(workload=ref.describe(), timing=base_stats, roofline=base_roof),
        baseline_repeat=(
            summarize("baseline (repeat)", samples.baseline_repeat) if samples.baseline_repeat else None
        ),
        candidate=verdict.entry if verdict else None,
        comparison=verdict.comparison if verdict else None,
        flags=list(dict.fromkeys(flags)),
        implausible=verdict.implausible if verdict else [],
        notes=all_notes,
        environment=samples.environment,
        elapsed_s=elapsed_s,
    )


def _peaks_in_use(
    samples: TimingSamples, peaks: DevicePeaks | None
) -> tuple[DevicePeaks | None, list[PlausibilityFlag], list[str]]:
    """The peaks the roofline is computed against (none for CPU timing), and the flags and notes that say
    why a roofline is missing."""
    if samples.timer == "perf_counter":
        return None, ["cpu-timing"], ["CPU timing (perf_counter): not evidence of GPU performance"]
    if peaks is None:
        device = samples.device_name or "this device"
        return None, ["no-roofline"], [f"no peak table entry for {device}: % of roofline not computed"]
    return peaks, [], []


@dataclass(frozen=True)
class _CandidateVerdict:
    """The candidate's entry, its comparison with the baseline, and what is implausible or flagged about it."""

    entry: BenchEntry
    comparison: Comparison
    plausibility: list[PlausibilityFlag]
    implausible: list[PlausibilityFlag]
    """The flags that fail the result: a rate no real kernel reaches."""
    notes: list[str]


def _judge_candidate(
    samples: TimingSamples,
    candidate: list[float],
    cand: RunnableWorkload | None,
    peaks: DevicePeaks | None,
    precision: str,
    noise_floor: float,
) -> _CandidateVerdict:
    """Statistics, roofline and comparison of the ``candidate`` samples against the baseline."""
    cand_stats = summarize("candidate", candidate)
    cand_roof = roofline(
        samples.candidate_flops, samples.candidate_bytes, cand_stats.median_s, peaks, precision
    )
    cand_flags = flags_for(cand_roof if peaks else None, cand_stats.median_s)
    comparison = compare(samples.baseline, samples.baseline_repeat, candidate, noise_floor)
    plaus = list(dict.fromkeys(cand_flags + speedup_flags(comparison.speedup)))
    failed = impossible(cand_flags)
    notes = []
    if failed:
        notes.append(
            "FAIL implausible: "
            + ", ".join(failed)
            + " (a real kernel cannot beat the hardware: the work was not all done, or not all timed)"
        )
    review = [f for f in plaus if f not in failed]
    if review:
        notes.append("flagged for review: " + ", ".join(review) + " (check the timing and the work done)")
    return _CandidateVerdict(
        entry=BenchEntry(
            workload=cand.describe() if cand else "candidate", timing=cand_stats, roofline=cand_roof
        ),
        comparison=comparison.model_copy(update={"plausibility": plaus}),
        plausibility=plaus,
        implausible=failed,
        notes=notes,
    )
