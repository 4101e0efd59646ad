"""Build and launch a kernel with NVRTC through ``cuda.core``, torch-free.

``compile_kernel`` builds a kernel file once per process (NVRTC, else nvcc's PTX) and ``launch`` launches
it with a resolved launch's geometry; ``scalar_value`` types a scalar argument. ``cuda.core`` and
``cuda.bindings``, which only a GPU machine has, are imported by the functions that need them. Workers reach
these through ``cuda_launch`` (torch tensors for memory); the torch-free profiling harness
(``torch_free_harness``) imports this module directly.
"""

from __future__ import annotations

import io
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from perfagent.workloads import nvcc_ptx
from perfagent.workloads.launch_resolve import ResolvedLaunch

STATIC_SHARED_LIMIT = 48 * 1024
"""Dynamic shared memory above this needs the kernel's max-dynamic-shared-size attribute raised."""


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


def cuda_core() -> Any:
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
        cuda_core().Device(device_index).set_current()
    return built


def _compile(path: Path, code: str, entry: str, defines: dict[str, str], device_index: int) -> CompiledKernel:
    cc = cuda_core()
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


def launch(
    compiled: CompiledKernel, resolved: ResolvedLaunch, args: list[Any], stream: Any, device_index: int = 0
) -> None:
    """Launch once (asynchronously) with the resolved grid, block and dynamic shared memory."""
    cc = cuda_core()
    if resolved.shared_mem > STATIC_SHARED_LIMIT and compiled.smem_raised < resolved.shared_mem:
        _raise_dynamic_smem_limit(compiled, resolved.shared_mem, device_index)
        compiled.smem_raised = resolved.shared_mem
    config = cc.LaunchConfig(grid=resolved.grid, block=resolved.block, shmem_size=resolved.shared_mem)
    cc.launch(stream, config, compiled.kernel, *args)
