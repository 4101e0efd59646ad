"""The timing protocol (worker side).

On CUDA (evaluation reference §4 check 9): fresh cloned inputs made *outside* the timed region, a
device-wide sync, an L2 flush (zeroing a buffer of twice the L2 size, at least 128 MiB) enqueued
before every call, then start event, the call, end event on the current stream. The call is queued
behind the flush, so the interval is GPU time, not the host's launch and sync latency (the old
sync-start-call-sync-end order added ~8 µs on an H200: 145.8 vs 137.9 µs for the same copy).
Warm-up calls first, then ``runs`` rounds that interleave baseline, candidate and a second baseline
series in rotating order (drift hits all three alike; the repeat gives the noise). The event class,
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
from dataclasses import dataclass
from functools import partial
from typing import Any

import torch

from perfagent.timing.models import TimingSamples
from perfagent.verify.harness import CandidateFailure, Harness, HarnessSnapshot, ReferenceFailure
from perfagent.verify.inputs import clone_all, seed_everything, to_device
from perfagent.verify.models import Check
from perfagent.verify.protocol import WorkerResult
from perfagent.workloads.model import KernelBenchModel, LaunchSpecKernel, RunnableWorkload

MIN_FLUSH_BYTES = 128 * 1024 * 1024
OVERHANG_SLACK_S = 50e-6
"""Extra overhang (vs the baseline's) tolerated before work after the end event is reported."""

# Captured at import of this module (before any candidate code): the timer cannot be patched.
_PERF_COUNTER = time.perf_counter
_EVENT = torch.cuda.Event
_ELAPSED = torch.cuda.Event.elapsed_time
_SYNC = torch.cuda.synchronize


@dataclass
class Runner:
    """One timed workload: ``prepare()`` makes fresh inputs (untimed), ``call(prepared)`` is timed."""

    label: str
    prepare: Callable[[], Any]
    call: Callable[[Any], Any]
    flops: float | None = None
    """FLOP per call."""
    nbytes: float | None = None
    """Minimum DRAM bytes per call."""


def _tensor_bytes(values: Any) -> int:
    from perfagent.verify.checks import flatten_outputs

    return sum(
        v.numel() * v.element_size() for _, v in flatten_outputs(values) if isinstance(v, torch.Tensor)
    )


def kernelbench_runner(
    h: Harness, workload: RunnableWorkload, *, module_name: str, who: str, modules: dict[str, Any]
) -> Runner:
    """A runner for a KernelBench ``Model`` (who='reference') or ``ModelNew`` (who='candidate')."""
    from perfagent.workloads.kernelbench import load_module

    guard = h.reference if who == "reference" else h.candidate
    if workload.path in modules:
        module = modules[workload.path]
    else:
        module = guard("import", lambda: load_module(workload.path, module_name), phase="build")
        modules[workload.path] = module
    problem = modules[h.request.reference.path]
    cls_name = workload.class_name or ("Model" if who == "reference" else "ModelNew")
    if not hasattr(module, cls_name):
        raise (
            ReferenceFailure(f"{workload.path} defines no {cls_name}")
            if who == "reference"
            else CandidateFailure(
                Check(name="candidate-runs", passed=False, detail=f"{workload.path} defines no {cls_name}")
            )
        )
    seed_everything(h.request.base_seed)
    init = list(problem.get_init_inputs()) if hasattr(problem, "get_init_inputs") else []
    seed_everything(h.request.base_seed)
    model = guard(f"{cls_name}(*get_init_inputs())", lambda: getattr(module, cls_name)(*init), phase="build")
    if isinstance(model, torch.nn.Module):
        model = guard(f"{cls_name}.to(device)", lambda: model.to(h.device), phase="build")
    seed_everything(h.request.base_seed)
    inputs = to_device(list(problem.get_inputs()), h.device)

    def call(args: Any) -> Any:
        with torch.no_grad():
            return model(*args)

    out = guard("first call", lambda: call(clone_all(inputs)), phase="first")
    flops = None
    get_flops = getattr(problem, "get_flops", None)
    if callable(get_flops):
        flops = float(get_flops())
    get_bytes = getattr(problem, "get_bytes", None)
    nbytes = float(get_bytes()) if callable(get_bytes) else float(_tensor_bytes(inputs) + _tensor_bytes(out))
    return Runner(
        label=workload.describe(), prepare=lambda: clone_all(inputs), call=call, flops=flops, nbytes=nbytes
    )


def cuda_kernel_runner(h: Harness, workload: RunnableWorkload, *, who: str) -> Runner:
    """A runner for a launch-spec kernel file (the spec's ``params``, declared inits)."""
    from perfagent.errors import BadInput
    from perfagent.workloads.cuda_launch import (
        compile_kernel,
        current_stream,
        device_attributes,
        kernel_args,
        launch,
        make_arg_tensor,
        poison_,
        torch_dtype,
    )
    from perfagent.workloads.launch_spec import load_launch_spec, resolve_launch

    assert workload.spec_path is not None
    guard = h.reference if who == "reference" else h.candidate
    try:
        spec = load_launch_spec(workload.spec_path)
        resolved = resolve_launch(
            spec,
            workload.spec_path,
            source=workload.path,
            kernel=workload.kernel,
            device_attrs=device_attributes(),
        )
    except BadInput as exc:
        if who == "reference":
            raise ReferenceFailure(str(exc)) from None
        raise CandidateFailure(Check(name="candidate-runs", passed=False, detail=str(exc))) from None
    compiled = guard(
        f"NVRTC build of {resolved.kernel}",
        lambda: compile_kernel(resolved.source, resolved.kernel, resolved.defines),
        phase="build",
    )
    tensors = [a for a in resolved.args if not a.is_scalar]
    masters = {
        a.name: make_arg_tensor(a, h.request.base_seed, None, h.device)
        for a in tensors
        if a.role in ("input", "inout")
    }
    buffers = {a.name: torch.empty(a.shape, dtype=torch_dtype(a.dtype), device=h.device) for a in tensors}
    for a in tensors:
        if a.role == "output":
            poison_(buffers[a.name], 1)
    args = kernel_args(resolved, buffers)
    stream = current_stream()

    def prepare() -> None:
        for name, t in masters.items():  # fresh input contents (and reset accumulators), untimed
            buffers[name].copy_(t)

    def call(_: Any) -> None:
        launch(compiled, resolved, args, stream)

    prepare()
    guard("first launch", lambda: call(None), phase="first")
    return Runner(
        label=workload.describe(), prepare=prepare, call=call, flops=resolved.flops, nbytes=resolved.bytes
    )


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
        name="runtime:work-after-end-event",
        passed=False,
        detail=(
            f"the device stayed busy {cand * 1e6:.0f} µs after the candidate's end event (baseline "
            f"{base * 1e6:.0f} µs): work on another stream escapes the timed interval"
        ),
    )


def run_bench(h: Harness) -> WorkerResult:
    """Time the reference (baseline) and, when given, the candidate; return raw samples."""
    req = h.request
    snapshot = HarnessSnapshot.take()
    modules: dict[str, Any] = {}
    runners: dict[str, Runner] = {}
    if isinstance(req.reference, KernelBenchModel):
        runners["baseline"] = kernelbench_runner(
            h, req.reference, module_name="perfagent_reference", who="reference", modules=modules
        )
        if req.candidate is not None:
            runners["candidate"] = kernelbench_runner(
                h, req.candidate, module_name="perfagent_candidate", who="candidate", modules=modules
            )
    elif isinstance(req.reference, LaunchSpecKernel):
        if not h.device.startswith("cuda"):
            raise ReferenceFailure("launch-spec kernels need a CUDA device and torch sees none")
        runners["baseline"] = cuda_kernel_runner(h, req.reference, who="reference")
        if req.candidate is not None:
            runners["candidate"] = cuda_kernel_runner(h, req.candidate, who="candidate")
    else:
        raise ReferenceFailure(f"cannot time a {req.reference.kind}")
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

    flush_bytes = 0
    flush_buf = None
    if h.device.startswith("cuda") and req.flush_l2:
        l2 = int(getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0))
        flush_bytes = max(2 * l2, MIN_FLUSH_BYTES)
        flush_buf = torch.empty(flush_bytes // 4, dtype=torch.int32, device="cuda")
    timer = _timer(h.device)
    on_cuda = h.device.startswith("cuda")

    def flush() -> None:
        if flush_buf is not None:
            flush_buf.zero_()

    series = (
        ["baseline", "candidate", "baseline_repeat"]
        if "candidate" in runners
        else ["baseline", "baseline_repeat"]
    )
    for key, runner in runners.items():
        guard = h.reference if key == "baseline" else h.candidate

        def warm(r: Runner = runner) -> None:
            for _ in range(req.warmup):
                r.call(r.prepare())

        guard(f"warm-up ({req.warmup} calls)", warm, calls=req.warmup)
    samples: dict[str, list[float]] = {k: [] for k in series}
    overhang: dict[str, list[float]] = {k: [] for k in series}
    assert h.watchdog is not None
    for i in range(req.runs):
        order = series[i % len(series) :] + series[: i % len(series)]
        h.watchdog.arm(
            f"candidate timing round {i + 1}"
            if "candidate" in runners
            else f"reference timing round {i + 1}",
            req.timeout_s * len(order),
        )
        try:
            for key in order:
                runner = runners["baseline" if key == "baseline_repeat" else key]
                prepared = runner.prepare()
                if on_cuda:  # inputs ready and nothing left running: only the flush can overlap the call
                    _SYNC()
                flush()
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
    if "candidate" in runners:
        escaped = overhang_check(
            overhang["baseline"] + overhang["baseline_repeat"], overhang["candidate"], samples["candidate"]
        )
        if escaped is not None:
            checks.append(escaped)
    env: dict[str, str] = {"torch": str(torch.__version__)}
    if h.device.startswith("cuda"):
        env["cuda"] = str(torch.version.cuda)
        props = torch.cuda.get_device_properties(0)
        env["sm_count"] = str(props.multi_processor_count)
    base, cand = runners["baseline"], runners.get("candidate")
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
        device=h.device,
        device_name=h.device_name,
        environment=env,
    )
    return WorkerResult(
        nonce=h.nonce, checks=checks, device=h.device, device_name=h.device_name, notes=h.notes, timing=timing
    )
