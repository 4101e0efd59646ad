"""A process a profiler can run: launch a workload's kernels N times and exit.

    python -m perfagent.workloads.run_spec SPEC.launch.toml [--kernel-file F.cu] [--repeat N]
    python -m perfagent.workloads.run_spec KERNEL.cu [--spec SPEC] [--repeat N]
    python -m perfagent.workloads.run_spec PROBLEM.py [--candidate MODELNEW.py] [--repeat N] [--device cuda|cpu]

Launch specs: the kernel file (default: the spec's ``source``; a rewrite is launched like the original,
or by its ``[variants]`` entry) is built with NVRTC and launched with the spec's ``params`` and declared
inputs, prepared as ``perfagent bench`` prepares them (``launch_prep``). KernelBench: ``Model`` (or the candidate's
``ModelNew``) is built from ``get_init_inputs()`` and called on ``get_inputs()`` moved to the device: once
to warm up, then ``--repeat`` times, each call inside the NVTX range ``perfagent_forward`` (on CUDA), so
that ncu profiles the forward calls alone (``--nvtx --nvtx-include perfagent_forward/``).
No comparison and no timing: ``perfagent.profile(command=[...])`` re-profiles rewrites with it.
Exit status 0 after the last launch completed; 2 for unusable input; 1 when a launch failed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import torch

from perfagent.workloads.detect import find_spec_for
from perfagent.workloads.kernelbench import load_module
from perfagent.workloads.kernelbench_model import build_model
from perfagent.workloads.launch_prep import build_launch, prepare_launch, seeded_inputs
from profilers.base import WORKLOAD_NVTX_RANGE
from profilers.core_errors import BadInput
from profilers.settings import RESOLVED_DEVICES

SEED = 0
WARMUP_CALLS = 1
"""KernelBench: calls before the measured ones, outside the NVTX range (Triton compiles and autotunes there,
and lazily initialised state is built), so that the profiled calls show the workload's steady state."""


def run_launch_spec(spec_path: Path, kernel_file: Path | None, repeat: int) -> str:
    """Build and launch a launch-spec kernel ``repeat`` times on the GPU; returns a summary line."""
    if not torch.cuda.is_available():
        raise BadInput(
            "launch-spec kernels need a CUDA GPU and torch sees none", hint="run it on a GPU machine"
        )
    resolved, compiled = build_launch(spec_path, source=kernel_file)
    inputs = seeded_inputs(resolved, seed=SEED, device="cuda")
    prepared = prepare_launch(resolved, compiled, inputs=inputs, poison=1, device="cuda")
    for _ in range(repeat):
        prepared.launch()
    torch.cuda.synchronize()
    return f"{resolved.kernel}: {repeat} launch(es), grid {resolved.grid}, block {resolved.block}"


def run_kernelbench(problem: Path, candidate: Path | None, repeat: int, device: str) -> str:
    """Call ``Model`` (or the candidate's ``ModelNew``) ``repeat`` times; returns a summary line."""
    if device == "cuda" and not torch.cuda.is_available():
        raise BadInput("--device cuda but torch sees no CUDA device", hint="use --device cpu")
    module = load_module(problem, "perfagent_problem")
    cls_name = "Model"
    impl = module
    if candidate is not None:
        impl = load_module(candidate, "perfagent_candidate")
        cls_name = "ModelNew"
    if not hasattr(impl, cls_name):
        raise BadInput(f"{(candidate or problem).name} defines no {cls_name}", hint="check the file")
    model, inputs = build_model(module, impl, cls_name, seed=SEED, device=device)
    with torch.no_grad():
        for _ in range(WARMUP_CALLS):
            model(*inputs)
        for _ in range(repeat):
            with forward_range(device):
                model(*inputs)
    if device == "cuda":
        torch.cuda.synchronize()
    return f"{cls_name}: {WARMUP_CALLS} warm-up + {repeat} call(s) on {device}"


@contextmanager
def forward_range(device: str) -> Iterator[None]:
    """Wrap one ``forward()`` call in the NVTX push/pop range ``WORKLOAD_NVTX_RANGE`` (CUDA only), so that a
    profiler sees which kernels the workload launched: ncu profiles only those with
    ``--nvtx --nvtx-include perfagent_forward/``, and the report reader marks any other one as harness."""
    if device != "cuda":
        yield
        return
    torch.cuda.nvtx.range_push(WORKLOAD_NVTX_RANGE)  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        torch.cuda.nvtx.range_pop()  # type: ignore[no-untyped-call]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m perfagent.workloads.run_spec",
        description="Launch a workload's kernels N times (for profilers).",
    )
    parser.add_argument("target", help="launch spec (.toml), kernel file (.cu) or KernelBench problem (.py)")
    parser.add_argument(
        "--kernel-file", type=Path, help="the .cu file to launch through the spec (default: its source)"
    )
    parser.add_argument("--spec", type=Path, help="launch spec of a .cu target (default: found beside it)")
    parser.add_argument(
        "--candidate", type=Path, help="KernelBench: run this file's ModelNew instead of Model"
    )
    parser.add_argument("--repeat", type=int, default=2, help="launches / calls (default 2)")
    parser.add_argument(
        "--device", choices=RESOLVED_DEVICES, default="cuda", help="KernelBench device (default cuda)"
    )
    args = parser.parse_args(argv)
    target = Path(args.target)
    try:
        if args.repeat < 1:
            raise BadInput("--repeat must be at least 1", hint="e.g. --repeat 2")
        if target.suffix.lower() == ".py":
            line = run_kernelbench(target, args.candidate, args.repeat, args.device)
        else:
            spec, kernel_file = target, args.kernel_file
            if target.suffix.lower() in (".cu", ".cuh"):
                found = args.spec or find_spec_for(target.resolve())
                if found is None:
                    raise BadInput(f"no launch spec for {target.name}", hint="pass --spec PATH")
                spec, kernel_file = Path(found), kernel_file or target
            line = run_launch_spec(spec, kernel_file.resolve() if kernel_file else None, args.repeat)
    except BadInput as exc:
        print(f"run_spec: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a launch or build failure: the profiler's caller reads the exit status
        print(f"run_spec: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(f"run_spec: {line}")
    return 0


if __name__ == "__main__":  # pragma: no cover - exercised as a subprocess
    sys.exit(main())
