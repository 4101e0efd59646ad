"""Build, verify, time and re-profile a candidate of any of the three workload kinds.

Thin adapters over the project's own layers: ``perfagent.verify.verify`` (the oracle comparison with
anti-cheat checks), ``perfagent.timing.bench`` (CUDA events, interleaved baseline, noise threshold,
plausibility) and, without a GPU, ``nvcc -cubin`` as a build check; the re-profile under ncu is
``reprofile``'s. Nothing here decides: ``outcome`` does.
"""

from __future__ import annotations

import json
import math
import shutil
import statistics
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perfagent.sandbox.extension_build import prebuild
from perfagent.timing import bench, bench_batch
from perfagent.timing.models import BenchResult
from perfagent.timing.stats import NOISE_FLOOR
from perfagent.verify import verify
from perfagent.verify.models import VerificationResult
from perfagent.workloads.launch_resolve import resolve_launch
from perfagent.workloads.launch_spec import LaunchSpec, dump_launch_spec, load_launch_spec, override_for
from perfagent.workloads.optimizable import OptimizeWorkload
from profilers.build import compile_cubin
from profilers.core_errors import BadInput, InternalError, PerfAgentError
from profilers.errors import ProfilerError, ProfilerUnavailable
from profilers.process import run_command
from profilers.settings import DEVICES

Progress = Callable[[str], None]
CANDIDATE_CU = "source.cu"
"""File name of a CUDA candidate inside its folder (the per-candidate spec's variant key)."""
SPEC_COPY = "launch.toml"
LAUNCH_KEYS = ("grid", "block", "shared_mem")
"""What a candidate may change in its launch (``Candidate.launch``)."""
TRUSTED_FLAGS = (
    "below-speed-of-light",
    "above-peak-bandwidth",
    "above-peak-flops",
    "excessive-speedup",
    "work-after-end-event",
)
"""Plausibility flags that stop a speed-up from being accepted without a human look."""


def _quiet(_: str) -> None:
    return None


# --------------------------------------------------------------------------------------------- device


def probe_gpu(device: str) -> tuple[bool, str]:
    """(GPU usable for timing and launch-spec kernels, label) for ``--device``.

    'cpu' never uses a GPU; 'auto' uses one when ``nvidia-smi`` exists and torch sees a CUDA device
    (asked in a child process, so that this process never holds a CUDA context that ncu would see);
    'cuda' requires one.

    Raises:
        BadInput: ``device`` is 'cuda' but no GPU is usable, or an unknown device name.
    """
    if device not in DEVICES:
        raise BadInput(f"unknown device '{device}'", hint=f"use one of: {', '.join(DEVICES)}")
    if device == "cpu":
        return False, "cpu"
    name = _torch_cuda_name() if shutil.which("nvidia-smi") else None
    if name:
        return True, f"cuda:0 ({name})"
    if device == "cuda":
        raise BadInput(
            "--device cuda was asked for but no CUDA GPU is usable here", hint="use --device auto or cpu"
        )
    return False, "cpu"


DEVICE_PROBE_TIMEOUT_S = 120.0
"""The device child imports torch and initialises CUDA, which takes tens of seconds on a cold machine."""


def _torch_cuda_name() -> str | None:
    """The CUDA device's name as the device child resolves 'auto' (``perfagent.sandbox.device``, the same
    resolution every worker makes), or None when it resolves to the CPU."""
    argv = [sys.executable, "-m", "perfagent.sandbox.device", "auto"]
    try:
        done = run_command(argv, timeout_s=DEVICE_PROBE_TIMEOUT_S)
    except ProfilerError:
        return None
    lines = done.stdout.strip().splitlines()
    try:
        answer = json.loads(lines[-1]) if done.ok and lines else {}
    except json.JSONDecodeError:
        return None
    return str(answer["name"]) if answer.get("device") == "cuda" and answer.get("name") else None


# --------------------------------------------------------------------------------------------- spec copies


def candidate_spec(
    wl: OptimizeWorkload,
    folder: Path,
    defines: dict[str, int],
    launch: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``folder/launch.toml``: the oracle's launch contract, plus ``defines`` and ``launch`` for ``source.cu``.

    The copy names the user's file (absolute path) as ``source`` with its own launch geometry (a
    ``[variants]`` entry of the original spec is folded in when the user's file is one), and gives the
    candidate file a variant whose ``defines`` carry the candidate's ``-D`` macros: a spec's own
    ``defines`` would otherwise override an ``#ifndef``-guarded ``#define`` the rewrite edited. ``launch``
    (grid, block, shared_mem) goes into the same variant: the oracle keeps its own geometry.
    """
    assert wl.spec_path is not None
    spec = load_launch_spec(wl.spec_path)
    data = _oracle_spec(spec, wl)
    variant: dict[str, Any] = {k: v for k, v in (launch or {}).items() if k in LAUNCH_KEYS and v is not None}
    if defines:
        variant["defines"] = {k: int(v) for k, v in defines.items()}
    if variant:
        data["variants"] = {CANDIDATE_CU: variant}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / SPEC_COPY
    header = f"# perfagent: launch spec for this candidate, derived from {wl.spec_path}\n"
    path.write_text(header + dump_launch_spec(data), encoding="utf-8")
    load_launch_spec(path)  # it must read back
    return path


def oracle_spec_data(wl: OptimizeWorkload) -> dict[str, Any]:
    """The oracle's launch spec as plain data (its variant for the user's file folded in)."""
    assert wl.spec_path is not None
    return _oracle_spec(load_launch_spec(wl.spec_path), wl)


def _oracle_spec(spec: LaunchSpec, wl: OptimizeWorkload) -> dict[str, Any]:
    assert wl.spec_path is not None
    data = spec.model_dump(mode="json", exclude_none=True)
    data.pop("variants", None)
    reference = (wl.spec_path.parent / spec.source).resolve()
    if wl.file != reference:
        override = override_for(spec, wl.file)
        if override is not None:
            for key in ("kernel", "grid", "block", "shared_mem"):
                value = getattr(override, key)
                if value is not None:
                    data[key] = value
            if override.defines:
                data["defines"] = {**data.get("defines", {}), **override.defines}
    if wl.entry:
        data["kernel"] = wl.entry
    data["source"] = str(wl.file)
    return data


# --------------------------------------------------------------------------------------------- build


@dataclass(frozen=True)
class BuildOutcome:
    """Whether a candidate compiles (None: no compiler here / not needed)."""

    ok: bool | None
    detail: str


def build_check(
    wl: OptimizeWorkload, source: Path, spec: Path | None, *, gpu: bool, arch: str, timeout_s: float
) -> BuildOutcome:
    """Compile a CUDA candidate with nvcc (``-cubin``, the spec's and the candidate's ``-D``) or parse Python.

    On a GPU machine the CUDA build is left to the verifier (NVRTC, the same compiler as the launch);
    a failure shows there as a failed check.
    """
    text = source.read_text(encoding="utf-8")
    if wl.language != "cuda":
        try:
            compile(text, str(source), "exec", dont_inherit=True)
        except SyntaxError as exc:
            return BuildOutcome(False, f"does not parse as Python (line {exc.lineno}: {exc.msg})")
        return extension_build(source, timeout_s) if gpu else BuildOutcome(True, "parses as Python")
    if gpu:
        return BuildOutcome(None, "built by NVRTC during verification")
    assert spec is not None
    try:
        resolved = resolve_launch(load_launch_spec(spec), spec, source=source)
    except BadInput as exc:
        return BuildOutcome(False, f"cannot launch it through the spec: {exc.message}")
    flags = [f"-D{k}={v}" for k, v in resolved.defines.items()]
    try:
        done = compile_cubin(source, source.with_suffix(".cubin"), arch, timeout_s, flags)
    except ProfilerUnavailable as exc:
        return BuildOutcome(None, f"not compiled here: {exc.message}")
    except ProfilerError as exc:
        return BuildOutcome(False, exc.message)
    (source.parent / "build.log").write_text(
        " ".join(["nvcc", *flags]) + "\n" + done.stderr, encoding="utf-8"
    )
    return BuildOutcome(True, f"nvcc -cubin -arch={arch} {' '.join(flags)}".strip())


def extension_build(source: Path, timeout_s: float) -> BuildOutcome:
    """A Python candidate's JIT extensions, built once by the confined build step (``load_inline``: the
    verification, timing and profiled runs then load that build); a build failure is the build's."""

    steps = prebuild([source], timeout_s=timeout_s)
    if not steps:
        return BuildOutcome(True, "parses as Python")
    step = steps[0]
    if step.state == "failed":
        return BuildOutcome(False, step.detail)
    if step.state == "not-built":
        return BuildOutcome(None, f"extension not built here: {step.detail}")
    return BuildOutcome(True, f"extension {step.state} once ({step.seconds:.1f} s), loaded read-only after")


# --------------------------------------------------------------------------------------------- verify


def script_check_command(gpu: bool) -> list[str]:
    """How a Triton script verifies itself: run it (exit 0 = its own check passed)."""
    env = ["env", "EXAMPLE_REPS=1"]
    if not gpu:
        env += ["TRITON_INTERPRET=1", "PERFAGENT_SMALL=1", "CUDA_VISIBLE_DEVICES="]
    return [*env, sys.executable, "{candidate}"]


def verify_candidate(
    wl: OptimizeWorkload,
    source: Path,
    spec: Path | None,
    *,
    gpu: bool,
    seeds: int,
    timeout_s: float,
    compile_timeout_s: float,
    seed: int | None = None,
    progress: Progress = _quiet,
) -> VerificationResult | None:
    """The verifier's verdict, or None when the workload cannot run here (launch-spec kernel, no GPU)."""
    if not (gpu or wl.runs_on_cpu):
        return None
    if wl.verified_by == "check-command":
        return verify(
            wl.reference(),
            wl.candidate(source),
            check_cmd=script_check_command(gpu),
            timeout_s=max(timeout_s, compile_timeout_s),
            progress=progress,
        )
    return verify(
        wl.reference(spec),
        wl.candidate(source, spec),
        device="cuda" if gpu else "cpu",
        seeds=seeds,
        seed=seed,
        timeout_s=timeout_s,
        compile_timeout_s=compile_timeout_s,
        progress=progress,
    )


# --------------------------------------------------------------------------------------------- timing


@dataclass
class Timing:
    """A candidate's (or the baseline's) measured time, or why there is none."""

    time_s: float | None = None
    """Candidate (or baseline-only) median, s."""
    time_s_before: float | None = None
    """Baseline median of the same measurement, s."""
    speedup: float | None = None
    """Baseline / candidate (x)."""
    noise_threshold: float | None = None
    timing_rounds: int | None = None
    """Interleaved rounds taken (the time budget may stop them before ``runs``)."""
    significant: bool = False
    verdict: str | None = None
    """'faster', 'slower', 'no-change' (timing.stats)."""
    flags: list[str] = field(default_factory=list)
    timer: str | None = None
    pct_of_roofline: float | None = None
    pct_of_dram_peak: float | None = None
    pct_of_compute_peak: float | None = None
    error: str | None = None
    """Why it could not be timed (None: timed)."""
    bench: BenchResult | None = None

    @property
    def implausible(self) -> list[str]:
        return [f for f in self.flags if f in TRUSTED_FLAGS]


def bench_timing(
    wl: OptimizeWorkload,
    candidate: Path | None,
    spec: Path | None,
    *,
    runs: int,
    warmup: int,
    timeout_s: float,
    compile_timeout_s: float,
    progress: Progress = _quiet,
) -> Timing:
    """Time with ``perfagent.timing.bench`` on the GPU: the oracle's baseline against ``candidate``.

    KernelBench: the baseline is the problem's ``Model`` (speed-ups are against it).
    """
    ref = wl.reference(spec)
    cand = wl.candidate(candidate, spec) if candidate is not None else None
    try:
        result = bench(
            ref,
            cand,
            device="cuda",
            runs=runs,
            warmup=warmup,
            timeout_s=timeout_s,
            compile_timeout_s=compile_timeout_s,
            progress=progress,
        )
    except InternalError:
        raise  # perfagent's own harness broke: not a property of the candidate
    except PerfAgentError as exc:
        return Timing(error=exc.message, timer="cuda-events")
    return timing_from_bench(result)


def bench_timings(
    wl: OptimizeWorkload,
    candidates: list[tuple[Path, Path | None]],
    *,
    runs: int,
    warmup: int,
    timeout_s: float,
    compile_timeout_s: float,
    progress: Progress = _quiet,
) -> list[Timing] | str:
    """Time several (candidate file, spec) pairs against the baseline in one worker (``bench_batch``).

    Returns one ``Timing`` per pair, in order, or why the batch has no timings (a candidate failed or
    hung in it: time each alone to learn which).
    """
    ref = wl.reference(candidates[0][1])  # as bench_timing reads it for the first pair
    cands = [wl.candidate(file, spec) for file, spec in candidates]
    try:
        results = bench_batch(
            ref,
            cands,
            device="cuda",
            runs=runs,
            warmup=warmup,
            timeout_s=timeout_s,
            compile_timeout_s=compile_timeout_s,
            progress=progress,
        )
    except InternalError:
        raise
    except PerfAgentError as exc:
        return exc.message
    return [timing_from_bench(r) for r in results]


def timing_from_bench(result: BenchResult) -> Timing:
    """The numbers the loop needs from a ``BenchResult``."""
    entry = result.candidate or result.baseline
    roof = entry.roofline
    out = Timing(
        time_s=entry.timing.median_s,
        time_s_before=result.baseline.timing.median_s,
        timer=result.timer,
        timing_rounds=result.runs,
        flags=list(result.flags),
        bench=result,
    )
    if roof is not None:
        out.pct_of_roofline = roof.pct_of_roofline
        if roof.achieved_bytes_per_s and roof.peak_bytes_per_s:
            out.pct_of_dram_peak = 100.0 * roof.achieved_bytes_per_s / roof.peak_bytes_per_s
        if roof.achieved_flops_per_s and roof.peak_flops_per_s:
            out.pct_of_compute_peak = 100.0 * roof.achieved_flops_per_s / roof.peak_flops_per_s
    if result.comparison is not None:
        c = result.comparison
        out.speedup, out.noise_threshold, out.significant, out.verdict = (
            c.speedup,
            c.noise_threshold,
            c.significant,
            c.verdict,
        )
    return out


def relative_to_start(timing: Timing, start_speedup: float, start_time_s: float | None) -> Timing:
    """A KernelBench candidate timed against ``Model``, restated against the starting ``ModelNew``: the
    speed-up divided by the start's, and the verdict and significance recomputed on that ratio with the
    measurement's own noise threshold (a candidate 1.7x faster than a slow solution is "faster", even when
    both stay slower than PyTorch)."""
    if timing.speedup is None or start_speedup <= 0:
        return timing
    speedup = timing.speedup / start_speedup
    threshold = timing.noise_threshold if timing.noise_threshold is not None else NOISE_FLOOR
    significant = speedup > 0 and abs(math.log(speedup)) > math.log1p(threshold)
    timing.speedup, timing.significant = speedup, significant
    timing.verdict = ("faster" if speedup > 1 else "slower") if significant else "no-change"
    timing.time_s_before = start_time_s
    return timing


def profile_timing(baseline: list[float], candidate: float) -> Timing:
    """Compare profiler-measured kernel durations (Triton scripts: no interleaved CUDA-event harness).

    ``baseline`` holds the baseline's mean kernel duration from two or more separate profiled runs:
    their disagreement is the noise. threshold = max(noise floor, 2 x drift), as in timing.stats.
    """
    base = statistics.fmean(baseline)
    drift = abs(baseline[0] / baseline[-1] - 1.0) if len(baseline) > 1 and baseline[-1] > 0 else 0.0
    threshold = max(NOISE_FLOOR, 2.0 * drift)
    speedup = base / candidate if candidate > 0 else float("inf")
    significant = speedup > 0 and abs(math.log(speedup)) > math.log1p(threshold)
    verdict = ("faster" if speedup > 1 else "slower") if significant else "no-change"
    flags = ["excessive-speedup"] if speedup > 10 else []
    return Timing(
        time_s=candidate,
        time_s_before=base,
        speedup=speedup,
        noise_threshold=threshold,
        significant=significant,
        verdict=verdict,
        flags=flags,
        timer="ncu",
    )


def write_json(path: Path, payload: Any) -> None:
    """A model (``model_dump_json``) or plain data as indented JSON."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = (
        payload.model_dump_json(indent=2)
        if hasattr(payload, "model_dump_json")
        else json.dumps(payload, indent=2)
    )
    path.write_text(text + "\n", encoding="utf-8")
