"""The timing job (worker side): time the reference and the candidate, interleaved.

On CUDA (evaluation reference §4 check 9): fresh cloned inputs made *outside* the timed region, a
device-wide sync, an L2 flush (zeroing a buffer of twice the L2 size, at least 128 MiB) enqueued
before every call, then start event, the call, end event on the current stream. The call is queued
behind the flush, so the interval is GPU time, not the host's launch and sync latency (the old
sync-start-call-sync-end order added ~8 µs on an H200: 145.8 vs 137.9 µs for the same copy).
The runners (``runners``) build each workload and make its inputs. Warm-up calls first, then rounds that interleave baseline, candidate and a second baseline
series in rotating order (drift hits all three alike; the repeat gives the noise): as many as fill the
request's ``budget_s`` (judged on the first ``min_runs`` rounds' wall time), between ``min_runs`` and ``runs``. A request with a
``batch`` times further candidates in the same rounds (one worker start for all of them; each keeps its
own overhang check). The event class,
its ``elapsed_time`` and ``synchronize`` are captured before candidate code is imported, so
monkey-patching them changes nothing (and is reported).

Work left on another stream when the end event fires is not inside that interval; since nothing runs
before the flush, only the flush can hide it. After every call a device-wide sync and a second event
measure the overhang (end event -> all work done, plus the host's sync latency); a candidate whose
median overhang exceeds the baseline's by more than ``OVERHANG_SLACK_S`` or half its own time fails
``runtime:work-after-end-event`` (flagged, never accepted). The verifier's device-wide sync check and
static checks reject such candidates too.

On the CPU, ``time.perf_counter`` around each call; results are labelled CPU timing.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import torch

from perfagent.sandbox.harness import CandidateFailure, Harness, ReferenceFailure
from perfagent.sandbox.integrity import HarnessSnapshot
from perfagent.sandbox.wire import WORK_AFTER_END, BatchSeries, Check, TimingSamples, WorkerResult
from perfagent.timing.jobs import BenchRequest
from perfagent.timing.runners import Runner, cuda_kernel_runner, kernelbench_runner
from perfagent.timing.stats import rounds_for
from perfagent.workloads.inputs import disable_uninitialized_fill

MIN_FLUSH_BYTES = 128 * 1024 * 1024
OVERHANG_SLACK_S = 50e-6
"""Extra overhang (vs the baseline's) tolerated before work after the end event is reported."""

# Captured at import of this module (before any candidate code): the timer cannot be patched.
_PERF_COUNTER = time.perf_counter
_EVENT = torch.cuda.Event
_ELAPSED = torch.cuda.Event.elapsed_time
_SYNC = torch.cuda.synchronize

Series = dict[str, list[float]]


def _timer(device: str) -> Callable[[Callable[[], Any]], tuple[float, float]]:
    """A timer returning (interval s, overhang s: end event -> device idle, 0 on the CPU)."""
    if device.startswith("cuda"):

        def cuda_time(fn: Callable[[], Any]) -> tuple[float, float]:
            start, end, idle = (_EVENT(enable_timing=True) for _ in range(3))  # type: ignore[no-untyped-call]
            start.record()  # queued behind the flush: the GPU is busy while the host submits the call
            fn()
            end.record()
            _SYNC()  # device-wide: work on any stream is finished before `idle`
            idle.record()
            idle.synchronize()
            return float(_ELAPSED(start, end)) / 1e3, float(_ELAPSED(end, idle)) / 1e3

        return cuda_time

    def cpu_time(fn: Callable[[], Any]) -> tuple[float, float]:
        t0 = _PERF_COUNTER()
        fn()
        return _PERF_COUNTER() - t0, 0.0

    return cpu_time


def overhang_check(
    baseline: list[float], candidate: list[float], candidate_times: list[float]
) -> Check | None:
    """A failed check when the candidate leaves work running after its end event (another stream)."""
    if not baseline or not candidate or not candidate_times:
        return None
    base, cand = statistics.median(baseline), statistics.median(candidate)
    allowed = base + max(OVERHANG_SLACK_S, 0.5 * statistics.median(candidate_times))
    if cand <= allowed:
        return None
    return Check(
        name=WORK_AFTER_END,
        passed=False,
        detail=(
            f"the device stayed busy {cand * 1e6:.0f} µs after the candidate's end event (baseline "
            f"{base * 1e6:.0f} µs): work on another stream escapes the timed interval"
        ),
    )


def _runners(h: Harness[BenchRequest]) -> dict[str, Runner]:
    """'baseline' (the reference) and, when the request has them, 'candidate' and 'batch1'... (its batch).

    Raises:
        ReferenceFailure: the reference cannot be timed (its kind, or no CUDA device for a launch spec).
    """
    req = h.request
    candidates = ([req.candidate] if req.candidate is not None else []) + list(req.batch)
    keys = ["candidate", *(f"batch{i}" for i in range(1, len(candidates)))]
    runners: dict[str, Runner] = {}
    if req.reference.runner == "kernelbench":
        modules: dict[str, Any] = {}
        runners["baseline"] = kernelbench_runner(
            h, req.reference, module_name="perfagent_reference", who="reference", modules=modules
        )
        for key, cand in zip(keys, candidates, strict=False):
            runners[key] = kernelbench_runner(
                h, cand, module_name=f"perfagent_{key}", who="candidate", modules=modules
            )
    elif req.reference.runner == "launch-spec":
        if not h.device.startswith("cuda"):
            raise ReferenceFailure("launch-spec kernels need a CUDA device and torch sees none")
        runners["baseline"] = cuda_kernel_runner(h, req.reference, who="reference")
        for key, cand in zip(keys, candidates, strict=False):
            runners[key] = cuda_kernel_runner(h, cand, who="candidate")
    else:
        raise ReferenceFailure(f"cannot time a {req.reference.kind}")
    return runners


def _flush_buffer(h: Harness[BenchRequest]) -> tuple[Any, int]:
    """(a buffer larger than L2 to zero before every timed call, its size in bytes); (None, 0) without one."""
    if not (h.device.startswith("cuda") and h.request.flush_l2):
        return None, 0
    l2 = int(getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0))
    flush_bytes = max(2 * l2, MIN_FLUSH_BYTES)
    return torch.empty(flush_bytes // 4, dtype=torch.int32, device="cuda"), flush_bytes


def _warm_up(h: Harness[BenchRequest], runners: dict[str, Runner]) -> None:
    warmup = h.request.warmup
    for key, runner in runners.items():
        guard = h.reference if key == "baseline" else h.candidate

        def warm(r: Runner = runner) -> None:
            for _ in range(warmup):
                r.call(r.prepare())

        guard(f"warm-up ({warmup} calls)", warm, calls=warmup)


def _timed_rounds(
    h: Harness[BenchRequest], runners: dict[str, Runner], series: list[str], flush_buf: Any
) -> tuple[Series, Series]:
    """(samples, overhang) per series over the rounds the budget allows, each in a rotated order, s.

    The first ``min_runs`` rounds are always taken; their wall time (inputs, flush, calls, syncs: what a
    round really costs) sets how many rounds fill ``budget_s`` (``stats.rounds_for``), at most ``runs``.

    Raises:
        CandidateFailure: any call raised (the whole round is named).
    """
    req = h.request
    samples: Series = {k: [] for k in series}
    overhang: Series = {k: [] for k in series}
    who = "candidate" if len(runners) > 1 else "reference"
    probe = min(req.min_runs, req.runs)
    total, i, started = req.runs, 0, _PERF_COUNTER()
    while i < total:
        _one_round(
            h,
            runners,
            series[i % len(series) :] + series[: i % len(series)],
            i,
            who,
            flush_buf,
            samples,
            overhang,
        )
        i += 1
        if i == probe:
            total = rounds_for(req.budget_s, (_PERF_COUNTER() - started) / i, req.min_runs, req.runs)
    return samples, overhang


def _one_round(
    h: Harness[BenchRequest],
    runners: dict[str, Runner],
    order: list[str],
    i: int,
    who: str,
    flush_buf: Any,
    samples: Series,
    overhang: Series,
) -> None:
    """Round ``i``: one timed call of each series in ``order``, appended to ``samples`` and ``overhang``.

    Raises:
        CandidateFailure: any call raised (the whole round is named).
    """
    timer = _timer(h.device)
    on_cuda = h.device.startswith("cuda")
    assert h.watchdog is not None
    h.watchdog.arm(f"{who} timing round {i + 1}", h.request.timeout_s * len(order))
    try:
        for key in order:
            runner = runners["baseline" if key == "baseline_repeat" else key]
            prepared = runner.prepare()
            if on_cuda:  # inputs ready and nothing left running: only the flush can overlap the call
                _SYNC()
            if flush_buf is not None:
                flush_buf.zero_()
            interval, after = timer(partial(runner.call, prepared))
            samples[key].append(interval)
            overhang[key].append(after)
    except Exception as exc:
        raise CandidateFailure(
            Check(
                name="candidate-runs",
                passed=False,
                detail=f"timing round {i + 1}: {type(exc).__name__}: {exc}",
            )
        ) from exc
    finally:
        h.watchdog.disarm()


def _environment(device: str) -> dict[str, str]:
    env: dict[str, str] = {"torch": str(torch.__version__)}
    if device.startswith("cuda"):
        env["cuda"] = str(torch.version.cuda)
        props = torch.cuda.get_device_properties(0)
        env["sm_count"] = str(props.multi_processor_count)
    return env


def run_bench(h: Harness[BenchRequest]) -> WorkerResult:
    """Time the reference (baseline) and, when given, the candidate and its batch; return raw samples."""
    disable_uninitialized_fill()  # torch's defaults, also after a verification in this process (a sequence)
    snapshot = HarnessSnapshot.take()
    runners = _runners(h)
    checks: list[Check] = []
    changed = snapshot.changed()
    if changed:
        checks.append(
            Check(
                name="runtime:harness-intact",
                passed=False,
                detail=f"replaced by candidate code: {', '.join(changed[:8])} (timing used the original functions)",
            )
        )
    flush_buf, flush_bytes = _flush_buffer(h)
    timed = [k for k in runners if k != "baseline"]
    series = ["baseline", *timed, "baseline_repeat"]
    _warm_up(h, runners)
    samples, overhang = _timed_rounds(h, runners, series, flush_buf)
    base_overhang = overhang["baseline"] + overhang["baseline_repeat"]
    escaped = {k: overhang_check(base_overhang, overhang[k], samples[k]) for k in timed}
    first = escaped.get("candidate")
    if first is not None:
        checks.append(first)
    base, cand = runners["baseline"], runners.get("candidate")
    batch = [
        BatchSeries(
            samples=samples[k],
            flops=runners[k].flops,
            bytes=runners[k].nbytes,
            checks=[c for c in [escaped[k]] if c is not None],
        )
        for k in timed[1:]
    ]
    timing = TimingSamples(
        baseline=samples["baseline"],
        baseline_repeat=samples["baseline_repeat"],
        candidate=samples.get("candidate"),
        timer="cuda-events" if h.device.startswith("cuda") else "perf_counter",
        l2_flush_bytes=flush_bytes,
        baseline_flops=base.flops,
        baseline_bytes=base.nbytes,
        candidate_flops=cand.flops if cand else None,
        candidate_bytes=cand.nbytes if cand else None,
        batch=batch,
        device=h.device,
        device_name=h.device_name,
        environment=_environment(h.device),
    )
    return WorkerResult(
        nonce=h.nonce, checks=checks, device=h.device, device_name=h.device_name, notes=h.notes, timing=timing
    )
