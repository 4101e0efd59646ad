"""Allocate, initialise and launch a launch-spec kernel: NVRTC through ``cuda.core``, torch tensors for memory.

Worker side only (and the torch profiling harness ``run_spec``): it imports torch and numpy. The build and
the launch themselves are torch-free (``nvrtc_kernel``, re-exported here: callers and tests reach them as
``cuda_launch.compile_kernel`` / ``cuda_launch.launch``). Argument construction (``make_arg_tensor``,
``poison_``, ``kernel_args``) works on any torch device so that it is unit-tested on the CPU;
``compile_kernel`` and ``launch`` need a GPU.
"""

from __future__ import annotations

from typing import Any

import torch

from perfagent.workloads.inputs import draw
from perfagent.workloads.launch_resolve import ResolvedArg, ResolvedLaunch
from perfagent.workloads.launch_spec import FLOAT_DTYPES
from perfagent.workloads.numpy_inputs import INT_POISON, seed_for
from perfagent.workloads.nvrtc_kernel import (
    STATIC_SHARED_LIMIT,
    CompiledKernel,
    compile_kernel,
    cuda_core,
    launch,
    scalar_value,
)

__all__ = [
    "STATIC_SHARED_LIMIT",
    "CompiledKernel",
    "compile_kernel",
    "current_stream",
    "device_attributes",
    "empty_tensor",
    "is_poison",
    "kernel_args",
    "launch",
    "make_arg_tensor",
    "poison_",
    "scalar_value",
    "torch_dtype",
]


def torch_dtype(name: str) -> Any:
    return {
        "float32": torch.float32,
        "float16": torch.float16,
        "bfloat16": torch.bfloat16,
        "float64": torch.float64,
        "int8": torch.int8,
        "int16": torch.int16,
        "int32": torch.int32,
        "int64": torch.int64,
        "uint8": torch.uint8,
        "uint32": torch.uint32,
        "bool": torch.bool,
    }[name]


def device_attributes(index: int = 0) -> dict[str, float | int]:
    """Attributes launch-spec expressions may use, read from the GPU."""
    props = torch.cuda.get_device_properties(index)
    return {
        "sm_count": int(props.multi_processor_count),
        "max_threads_per_sm": int(getattr(props, "max_threads_per_multi_processor", 2048)),
        "max_threads_per_block": int(getattr(props, "max_threads_per_block", 1024)),
        "warp_size": int(getattr(props, "warp_size", 32)),
        "l2_bytes": int(getattr(props, "L2_cache_size", 0)),
        "max_shared_per_block": int(getattr(props, "shared_memory_per_block_optin", 48 * 1024)),
    }


def make_arg_tensor(arg: ResolvedArg, seed: int, dist: str | None, device: str) -> Any:
    """A tensor initialised as ``arg`` says; float inputs with ``vary`` are drawn from ``dist`` instead.

    Args:
        arg: a resolved tensor argument (role input or inout).
        seed: trial seed (combined with the argument's name, so arguments differ).
        dist: a distribution name from ``perfagent.workloads.inputs.DISTRIBUTIONS`` or None (declared init).
        device: torch device string.
    """

    gen = torch.Generator(device=device).manual_seed(seed_for(seed, arg.name))
    shape = arg.shape
    is_float = arg.dtype in FLOAT_DTYPES
    init = arg.init or ("normal" if is_float else "randint")
    if dist is not None and is_float and arg.vary and init in ("normal", "uniform"):
        values = draw(shape, dist, gen)
    elif init == "normal":
        values = torch.randn(shape, generator=gen, device=device) * (
            arg.std if arg.std is not None else 1.0
        ) + (arg.mean or 0.0)
    elif init == "uniform":
        low = arg.low if arg.low is not None else 0.0
        high = arg.high if arg.high is not None else 1.0
        values = torch.rand(shape, generator=gen, device=device) * (high - low) + low
    elif init == "randint":
        low_i = int(arg.low) if arg.low is not None else 0
        high_i = int(arg.high) if arg.high is not None else (2 if arg.dtype == "bool" else 100)
        values = torch.randint(low_i, high_i, shape, generator=gen, device=device)
    elif init == "arange":
        flat = torch.arange(arg.numel, dtype=torch.int64, device=device)
        if arg.high is not None:
            flat = flat % int(arg.high)
        values = flat.reshape(shape)
    elif init == "ones":
        values = torch.ones(shape, device=device)
    elif init == "full":
        values = torch.full(shape, float(arg.fill if arg.fill is not None else 0.0), device=device)
    elif init == "zeros":
        values = torch.zeros(shape, device=device)
    else:  # pragma: no cover - the spec model rejects anything else
        raise ValueError(f"unknown init {init!r}")
    return values.to(dtype=torch_dtype(arg.dtype))


def empty_tensor(arg: ResolvedArg, device: str) -> Any:
    """An uninitialised tensor of ``arg``'s shape and dtype."""
    return torch.empty(arg.shape, dtype=torch_dtype(arg.dtype), device=device)


def poison_value(dtype: Any, which: int) -> float:
    """The fill of poisoned float outputs: NaN for the first launch, a huge negative sentinel for the second."""
    if which == 1:
        return float("nan")
    return -0.37 * float(torch.finfo(dtype).max)


def poison_(t: Any, which: int) -> Any:
    """Fill ``t`` with poison ``which`` (1 or 2) in place and return it."""
    if t.is_floating_point():
        t.fill_(poison_value(t.dtype, which))
    elif t.dtype == torch.bool:
        t.fill_(which == 1)
    else:
        t.view(torch.uint8).fill_(INT_POISON[which])
    return t


def is_poison(t: Any, which: int) -> Any:
    """Boolean mask of elements still holding poison ``which``."""
    if t.is_floating_point():
        return torch.isnan(t) if which == 1 else t == poison_value(t.dtype, which)
    if t.dtype == torch.bool:
        return t == (which == 1)
    pattern = torch.full_like(t, 0)
    pattern.view(torch.uint8).fill_(INT_POISON[which])
    return t == pattern


def kernel_args(launch: ResolvedLaunch, buffers: dict[str, Any]) -> list[Any]:
    """Arguments in kernel order: device pointers (Python ints) for tensors, NumPy scalars for values."""
    out: list[Any] = []
    for arg in launch.args:
        if arg.is_scalar:
            assert arg.value is not None
            out.append(scalar_value(arg.dtype, arg.value))
        else:
            out.append(int(buffers[arg.name].data_ptr()))
    return out


def current_stream() -> Any:
    """torch's current CUDA stream as a ``cuda.core`` Stream (so that torch events time the launch)."""
    cc = cuda_core()
    handle = int(torch.cuda.current_stream().cuda_stream)
    if handle == 0:
        return cc.Device().default_stream
    return cc.Stream.from_handle(handle)
