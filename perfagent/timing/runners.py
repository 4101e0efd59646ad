"""What the timing job times (worker side): one ``Runner`` per workload, reference or candidate.

A runner's ``prepare()`` makes fresh inputs outside the timed region and ``call(prepared)`` is the
timed call. A KernelBench runner calls ``Model``/``ModelNew`` on clones of ``get_inputs()``; a
launch-spec runner refills the kernel's input buffers (``launch_prep``) and launches it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import torch

from perfagent.sandbox.harness import CandidateFailure, Harness, ReferenceFailure
from perfagent.sandbox.wire import Check
from perfagent.workloads.inputs import clone_all, tensor_bytes
from perfagent.workloads.kernelbench import load_module
from perfagent.workloads.kernelbench_model import build_model
from perfagent.workloads.launch_prep import build_launch, input_buffers, prepare_launch, seeded_inputs
from perfagent.workloads.model import RunnableWorkload
from profilers.core_errors import BadInput

Who = Literal["reference", "candidate"]


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


def _missing(who: Who, detail: str) -> Exception:
    """The failure for an unusable reference (bad input) or candidate (a failed check)."""
    if who == "reference":
        return ReferenceFailure(detail)
    return CandidateFailure(Check(name="candidate-runs", passed=False, detail=detail))


def kernelbench_runner(
    h: Harness[Any], workload: RunnableWorkload, *, module_name: str, who: Who, modules: dict[str, Any]
) -> Runner:
    """A runner for a KernelBench ``Model`` (who='reference') or ``ModelNew`` (who='candidate')."""
    guard = h.reference if who == "reference" else h.candidate
    if workload.path in modules:
        module = modules[workload.path]
    else:
        module = guard("import", lambda: load_module(workload.path, module_name), phase="build")
        modules[workload.path] = module
    problem = modules[h.request.reference.path]
    cls_name = workload.class_name or ("Model" if who == "reference" else "ModelNew")
    if not hasattr(module, cls_name):
        raise _missing(who, f"{workload.path} defines no {cls_name}")
    model, inputs = build_model(
        problem,
        module,
        cls_name,
        seed=h.request.base_seed,
        device=h.device,
        guard=lambda label, step: guard(label, step, phase="build"),
    )

    def call(args: Any) -> Any:
        with torch.no_grad():
            return model(*args)

    out = guard("first call", lambda: call(clone_all(inputs)), phase="first")
    flops = None
    get_flops = getattr(problem, "get_flops", None)
    if callable(get_flops):
        flops = float(get_flops())
    get_bytes = getattr(problem, "get_bytes", None)
    nbytes = float(get_bytes()) if callable(get_bytes) else float(tensor_bytes(inputs) + tensor_bytes(out))
    return Runner(
        label=workload.describe(), prepare=lambda: clone_all(inputs), call=call, flops=flops, nbytes=nbytes
    )


def cuda_kernel_runner(h: Harness[Any], workload: RunnableWorkload, *, who: Who) -> Runner:
    """A runner for a launch-spec kernel file (the spec's ``params``, declared inits)."""
    assert workload.spec_path is not None
    guard = h.reference if who == "reference" else h.candidate
    try:
        resolved, compiled = build_launch(
            workload.spec_path,
            source=workload.path,
            kernel=workload.kernel,
            build=lambda label, step: guard(label, step, phase="build"),
        )
    except BadInput as exc:
        raise _missing(who, str(exc)) from None
    inputs = seeded_inputs(resolved, seed=h.request.base_seed, device=h.device)
    prepared = prepare_launch(
        resolved, compiled, inputs=inputs, poison=1, device=h.device, into=input_buffers(resolved, h.device)
    )

    def call(_: Any) -> None:
        prepared.launch()

    guard("first launch", lambda: call(None), phase="first")
    return Runner(
        label=workload.describe(),
        prepare=prepared.refill,  # fresh input contents (and reset accumulators), untimed
        call=call,
        flops=resolved.flops,
        nbytes=resolved.bytes,
    )
