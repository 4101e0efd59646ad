"""Allocate, initialise and launch a launch-spec kernel: NVRTC through ``cuda.core``, torch tensors for memory.

Worker side only (and the profiling harness): it imports torch and numpy; ``cuda.core``, which only a
GPU machine has, is imported by the functions that launch. Argument construction (``make_arg_tensor``,
``poison_``, ``kernel_args``) works on any torch device so that it is unit-tested on the CPU;
``compile_kernel`` and ``launch`` need a GPU.
"""

from __future__ import annotations

import io
import os
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from perfagent.workloads import nvcc_ptx
from perfagent.workloads.inputs import draw
from perfagent.workloads.launch_resolve import ResolvedArg, ResolvedLaunch
from perfagent.workloads.launch_spec import FLOAT_DTYPES

STATIC_SHARED_LIMIT = 48 * 1024
"""Dynamic shared memory above this needs the kernel's max-dynamic-shared-size attribute raised."""


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


def scalar_value(dtype: str, value: float | int) -> Any:
    """A NumPy scalar of the C type the kernel expects (``cuda.core`` reads its width from the type)."""
    types: dict[str, Any] = {
        "float32": np.float32,
        "float64": np.float64,
        "float16": np.float16,
        "int8": np.int8,
        "int16": np.int16,
        "int32": np.int32,
        "int64": np.int64,
        "uint8": np.uint8,
        "uint32": np.uint32,
    }
    if dtype not in types:
        raise ValueError(f"scalar arguments of type {dtype} are not supported")
    return types[dtype](value)


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


def _seed_for(seed: int, name: str) -> int:
    return (seed * 1_000_003 + zlib.crc32(name.encode())) % (2**63)


def make_arg_tensor(arg: ResolvedArg, seed: int, dist: str | None, device: str) -> Any:
    """A tensor initialised as ``arg`` says; float inputs with ``vary`` are drawn from ``dist`` instead.

    Args:
        arg: a resolved tensor argument (role input or inout).
        seed: trial seed (combined with the argument's name, so arguments differ).
        dist: a distribution name from ``perfagent.workloads.inputs.DISTRIBUTIONS`` or None (declared init).
        device: torch device string.
    """

    gen = torch.Generator(device=device).manual_seed(_seed_for(seed, arg.name))
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


INT_POISON = {1: 0xFF, 2: 0x5A}
"""Byte patterns of poisoned integer outputs (first / second launch)."""


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


@dataclass
class CompiledKernel:
    """A loaded kernel and where it came from."""

    kernel: Any
    """``cuda.core`` Kernel."""
    name: str
    source: str
    defines: dict[str, str]
    log: str = ""
    smem_raised: int = 0
    """Dynamic shared memory the kernel is currently allowed, byte."""


def _cuda_core() -> Any:
    # cuda.core / cuda.bindings are optional (the GPU extra): only a launch needs them
    try:
        import cuda.core as cc

        if hasattr(cc, "Program"):
            return cc
    except ImportError:
        pass
    # cuda.core before 0.3 kept its API here
    try:
        import cuda.core.experimental as cce

        return cce
    except ImportError as exc:
        raise RuntimeError("cuda.core is not installed: `pip install cuda-core` (NVRTC launch path)") from exc


def _include_paths(source: Path) -> list[str]:
    paths = [str(source.parent)]
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and (Path(root) / "include").is_dir():
            paths.append(str(Path(root) / "include"))
            break
    return paths


_BUILT: dict[tuple[str, str, str, tuple[tuple[str, str], ...], int], CompiledKernel] = {}
"""Kernels this process compiled, by (file, its text, entry, macros, device): a worker that verifies an
iteration's candidates against the original, then times them, builds the original and each candidate
once, not once per step (the same text gives the same code; a changed file is a new key)."""


def compile_kernel(source: str, entry: str, defines: dict[str, str], device_index: int = 0) -> CompiledKernel:
    """Compile ``source`` with NVRTC for the current GPU and load ``entry`` (once per process, ``_BUILT``).

    ``extern "C"`` entries are looked up by name; otherwise the entry is compiled as a name
    expression (C++ mangling resolved by NVRTC).

    Raises:
        RuntimeError: compilation failed (the message carries the compiler log) or no such entry.
    """
    path = Path(source)
    code = path.read_text()
    key = (str(path.resolve()), code, entry, tuple(sorted(defines.items())), device_index)
    built = _BUILT.get(key)
    if built is None:
        built = _BUILT[key] = _compile(path, code, entry, defines, device_index)
    else:  # as a compile would: the launches that follow run on this device's context
        _cuda_core().Device(device_index).set_current()
    return built


def _compile(path: Path, code: str, entry: str, defines: dict[str, str], device_index: int) -> CompiledKernel:
    cc = _cuda_core()
    dev = cc.Device(device_index)
    dev.set_current()
    options = cc.ProgramOptions(
        arch=f"sm_{dev.arch}",
        std="c++17",
        define_macro=list(defines.items()) or None,
        include_path=_include_paths(path),
        lineinfo=True,
    )
    log = io.StringIO()
    try:
        obj = cc.Program(code, code_type="c++", options=options).compile("cubin", logs=log)
        kernel = obj.get_kernel(entry)
    except Exception as first:
        try:
            log = io.StringIO()
            obj = cc.Program(code, code_type="c++", options=options).compile(
                "cubin", name_expressions=(entry,), logs=log
            )
            kernel = obj.get_kernel(entry)
        except Exception:
            nvrtc_error = nvcc_ptx.first_error(f"{log.getvalue()}\n{first}")
            kernel, log = _nvcc_fallback(cc, path, entry, defines, dev.arch, nvrtc_error)
    return CompiledKernel(
        kernel=kernel, name=entry, source=str(path), defines=dict(defines), log=log.getvalue()
    )


def _nvcc_fallback(
    cc: Any, path: Path, entry: str, defines: dict[str, str], arch: str, nvrtc_error: str
) -> tuple[Any, io.StringIO]:
    """Build ``path`` with nvcc (PTX) after NVRTC failed, e.g. on ``<cfloat>`` or ``<math.h>``.

    Raises:
        RuntimeError: nvcc failed too; the message gives both compilers' first errors on one line.
    """
    log = io.StringIO()
    try:
        with tempfile.TemporaryDirectory(prefix="perfagent-nvcc-") as tmp:
            ptx = nvcc_ptx.build_ptx(path, Path(tmp), arch, defines, _include_paths(path))
        symbol = nvcc_ptx.entry_symbol(ptx, entry)
        options = cc.ProgramOptions(arch=f"sm_{arch}")
        obj = cc.Program(ptx, code_type="ptx", options=options).compile("cubin", logs=log)
        log.write(f"built with nvcc (NVRTC: {nvrtc_error})\n")
        return obj.get_kernel(symbol), log
    except Exception as exc:
        raise RuntimeError(f"NVRTC could not build {path.name}:{entry}: {nvrtc_error}; and {exc}") from exc


def _raise_dynamic_smem_limit(compiled: CompiledKernel, nbytes: int, device_index: int) -> None:
    # cuda.core / cuda.bindings are optional (the GPU extra): only a launch needs them
    from cuda.bindings import driver

    attr = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    handle = compiled.kernel.handle
    errors: list[str] = []
    try:
        (err,) = driver.cuKernelSetAttribute(attr, nbytes, handle, driver.CUdevice(device_index))
        if err == driver.CUresult.CUDA_SUCCESS:
            return
        errors.append(f"cuKernelSetAttribute: {err}")
    except Exception as exc:  # a CUfunction handle (older cuda.core), or another bindings version
        errors.append(f"cuKernelSetAttribute: {exc}")
    try:
        (err,) = driver.cuFuncSetAttribute(handle, attr, nbytes)
        if err == driver.CUresult.CUDA_SUCCESS:
            return
        errors.append(f"cuFuncSetAttribute: {err}")
    except Exception as exc:
        errors.append(f"cuFuncSetAttribute: {exc}")
    raise RuntimeError(
        f"cannot allow {nbytes} bytes of dynamic shared memory for {compiled.name}: {'; '.join(errors)}"
    )


def current_stream() -> Any:
    """torch's current CUDA stream as a ``cuda.core`` Stream (so that torch events time the launch)."""
    cc = _cuda_core()
    handle = int(torch.cuda.current_stream().cuda_stream)
    if handle == 0:
        return cc.Device().default_stream
    return cc.Stream.from_handle(handle)


def launch(
    compiled: CompiledKernel, resolved: ResolvedLaunch, args: list[Any], stream: Any, device_index: int = 0
) -> None:
    """Launch once (asynchronously) with the resolved grid, block and dynamic shared memory."""
    cc = _cuda_core()
    if resolved.shared_mem > STATIC_SHARED_LIMIT and compiled.smem_raised < resolved.shared_mem:
        _raise_dynamic_smem_limit(compiled, resolved.shared_mem, device_index)
        compiled.smem_raised = resolved.shared_mem
    config = cc.LaunchConfig(grid=resolved.grid, block=resolved.block, shmem_size=resolved.shared_mem)
    cc.launch(stream, config, compiled.kernel, *args)
