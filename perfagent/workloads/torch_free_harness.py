"""The profiling harness of a launch-spec kernel that does not import torch: launch it N times and exit.

    python -m perfagent.workloads.torch_free_harness SPEC.launch.toml [--kernel-file F.cu] [--repeat N]
    python -m perfagent.workloads.torch_free_harness KERNEL.cu --spec SPEC [--repeat N]

What ncu starts for every profile of a launch-spec kernel (the original's and each winner's re-profile)
when ``harness_choice`` finds it can serve the spec. ``run_spec`` does the same through torch, whose import
is most of an ncu application start (3-5 s on a GPU host, 8-10 s on a loaded CPU host): here the spec is
resolved with the GPU's attributes (read through ``cuda.bindings``), the kernel built once with NVRTC
(``nvrtc_kernel.compile_kernel``), the inputs drawn with NumPy from the spec's ``init`` laws
(``numpy_inputs``: the same laws as torch's draws, not the same bits), every output poisoned as the torch
harness poisons it (poison 1), all copied to the device and launched on a ``cuda.core`` stream.
A profile needs the same distributions, not the same values; verification and timing keep torch's inputs.

Exit status 0 after the last launch completed; 2 for unusable input; 1 when a build or launch failed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from perfagent.workloads import numpy_inputs, nvrtc_kernel
from perfagent.workloads.launch_resolve import ResolvedLaunch, resolve_launch
from perfagent.workloads.launch_spec import load_launch_spec
from profilers.core_errors import BadInput

SEED = 0
"""The seed ``run_spec`` draws with (each argument mixes in its name: ``numpy_inputs.seed_for``)."""
POISON = 1
"""Which poison fills the outputs before the launches (``run_spec`` uses the first too)."""
INPUT_ROLES = ("input", "inout")
ATTRIBUTES = {
    "sm_count": "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT",
    "max_threads_per_sm": "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR",
    "max_threads_per_block": "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK",
    "warp_size": "CU_DEVICE_ATTRIBUTE_WARP_SIZE",
    "l2_bytes": "CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE",
    "max_shared_per_block": "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
}
"""The launch-spec expression names (``cuda_launch.device_attributes`` reads them through torch) and the
driver attribute each is read from."""


def _driver() -> Any:
    # cuda.bindings comes with cuda.core (the GPU extra); harness_choice checked it is installed
    from cuda.bindings import driver

    return driver


def _checked(call: str, result: tuple[Any, ...]) -> Any:
    """The value of a ``cuda.bindings`` call's (error, value...) tuple; raises on an error."""
    driver = _driver()
    err, *values = result
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"{call} failed: {err}")
    return values[0] if values else None


def device_attributes(index: int = 0) -> dict[str, float | int]:
    """The attributes launch-spec expressions may use, read from GPU ``index`` (current context set)."""
    driver = _driver()
    device = _checked("cuDeviceGet", driver.cuDeviceGet(index))
    return {
        name: int(
            _checked(attr, driver.cuDeviceGetAttribute(getattr(driver.CUdevice_attribute, attr), device))
        )
        for name, attr in ATTRIBUTES.items()
    }


def host_arrays(resolved: ResolvedLaunch) -> dict[str, np.ndarray]:
    """Every tensor argument's contents on the host: inputs and inouts drawn, outputs poisoned.

    Raises:
        BadInput: an argument's dtype or init is not drawn here (``harness_choice`` sends such specs to
            ``run_spec``; this says so when the harness is run by hand).
    """
    arrays: dict[str, np.ndarray] = {}
    for arg in resolved.args:
        if arg.is_scalar:
            continue
        why = numpy_inputs.unserved(arg)
        if why is not None:
            raise BadInput(
                f"the torch-free harness cannot draw {why}", hint="run python -m perfagent.workloads.run_spec"
            )
        if arg.role in INPUT_ROLES:
            arrays[arg.name] = numpy_inputs.host_input(arg, SEED)
        else:
            arrays[arg.name] = numpy_inputs.poisoned(arg, POISON)
    return arrays


class DeviceArrays:
    """Device copies of host arrays (``cuMemAlloc`` + an asynchronous copy on ``stream``), freed on close."""

    def __init__(self, arrays: dict[str, np.ndarray], stream: Any) -> None:
        driver = _driver()
        self.pointers: dict[str, int] = {}
        # the host arrays stay alive until the copies complete (the caller syncs the stream before close)
        self._hosts = {name: np.ascontiguousarray(host) for name, host in arrays.items()}
        for name, host in self._hosts.items():
            ptr = _checked("cuMemAlloc", driver.cuMemAlloc(max(1, host.nbytes)))
            self.pointers[name] = int(ptr)
            if host.nbytes:
                _checked(
                    "cuMemcpyHtoDAsync",
                    driver.cuMemcpyHtoDAsync(ptr, host.ctypes.data, host.nbytes, stream.handle),
                )

    def close(self) -> None:
        driver = _driver()
        for ptr in self.pointers.values():
            driver.cuMemFree(ptr)
        self.pointers.clear()


def kernel_args(resolved: ResolvedLaunch, pointers: dict[str, int]) -> list[Any]:
    """Arguments in kernel order: device pointers (Python ints) for tensors, NumPy scalars for values."""
    out: list[Any] = []
    for arg in resolved.args:
        if arg.is_scalar:
            assert arg.value is not None
            out.append(nvrtc_kernel.scalar_value(arg.dtype, arg.value))
        else:
            out.append(pointers[arg.name])
    return out


def run_launch_spec(spec_path: Path, kernel_file: Path | None, repeat: int) -> str:
    """Build and launch a launch-spec kernel ``repeat`` times on GPU 0; returns a summary line."""
    cc = nvrtc_kernel.cuda_core()
    device = cc.Device(0)
    device.set_current()
    spec = load_launch_spec(spec_path)
    resolved = resolve_launch(spec, spec_path, source=kernel_file, device_attrs=device_attributes(0))
    compiled = nvrtc_kernel.compile_kernel(resolved.source, resolved.kernel, resolved.defines)
    stream = device.create_stream()
    buffers = DeviceArrays(host_arrays(resolved), stream)
    try:
        args = kernel_args(resolved, buffers.pointers)
        for _ in range(repeat):
            nvrtc_kernel.launch(compiled, resolved, args, stream)
        stream.sync()
    finally:
        buffers.close()
    return (
        f"{resolved.kernel}: {repeat} launch(es), grid {resolved.grid}, block {resolved.block} (torch-free)"
    )


def _spec_and_kernel(target: Path, spec: Path | None, kernel_file: Path | None) -> tuple[Path, Path | None]:
    """(the spec, the kernel file) of the command line's target (a spec, or a ``.cu`` with one beside it)."""
    if target.suffix.lower() == ".py":
        raise BadInput(
            "the torch-free harness runs launch specs, not KernelBench problems",
            hint="run python -m perfagent.workloads.run_spec",
        )
    if target.suffix.lower() not in (".cu", ".cuh"):
        return target, kernel_file.resolve() if kernel_file else None
    if spec is None:  # run_spec looks for one beside it; that lookup (detect) reaches torch's imports
        raise BadInput(f"no launch spec given for {target.name}", hint="pass --spec PATH")
    return spec, (kernel_file or target).resolve()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m perfagent.workloads.torch_free_harness",
        description="Launch a launch-spec kernel N times for a profiler, without torch.",
    )
    parser.add_argument("target", help="launch spec (.toml) or kernel file (.cu)")
    parser.add_argument("--kernel-file", type=Path, help="the .cu file to launch through the spec")
    parser.add_argument("--spec", type=Path, help="launch spec of a .cu target")
    parser.add_argument("--repeat", type=int, default=2, help="launches (default 2)")
    args = parser.parse_args(argv)
    try:
        if args.repeat < 1:
            raise BadInput("--repeat must be at least 1", hint="e.g. --repeat 2")
        spec, kernel_file = _spec_and_kernel(Path(args.target), args.spec, args.kernel_file)
        line = run_launch_spec(spec, kernel_file, args.repeat)
    except BadInput as exc:
        print(f"torch_free_harness: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a build or launch failure: the profiler's caller reads the exit status
        print(f"torch_free_harness: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(f"torch_free_harness: {line}")
    return 0


if __name__ == "__main__":  # pragma: no cover - exercised as a subprocess
    sys.exit(main())
