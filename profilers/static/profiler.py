"""Static analysis without a GPU: nvcc/ptxas resource usage per kernel, plus theoretical occupancy.

The source is compiled to a cubin with ``-Xptxas -v``; ptxas reports registers, spills, stack and
shared memory per kernel. The block size comes from the launch sites in the same source (tree-sitter),
then ``__launch_bounds__``, then an assumed 256 threads, said plainly in the profile's notes. No
durations, no throughput: the classifier can only speak of registers, spills, shared memory and
occupancy.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

from knowledge import KnowledgeError
from knowledge.arch import ArchLimits, limits_for, normalize_arch
from profilers.base import ProfileRequest
from profilers.build import NVCC, compile_cubin, nvcc_arch
from profilers.errors import (
    BadReport,
    KernelFilterUnmatched,
    NoKernelsInSource,
    ProfilerError,
    compile_kernel_filter,
)
from profilers.model import DeviceInfo, KernelProfile, LaunchConfig, Occupancy, Profile, SourceLine
from profilers.occupancy import theoretical_occupancy
from profilers.process import run_command
from profilers.static.demangle import base_name, demangle
from profilers.static.launch_sites import LaunchSite, SourceLaunches, analyze_launches
from profilers.static.ptxas import PtxasKernel, parse_ptxas_output

DEFAULT_BLOCK_SIZE = 256
STATIC_NOTE = (
    "static analysis (nvcc/ptxas resource usage, no GPU run): no durations or throughput; "
    "findings limited to registers, spills, shared memory and occupancy"
)
_NVCC_VERSION = re.compile(r"release [\d.]+, V(?P<version>[\d.]+)")


class StaticProfiler:
    """Profiler backend 'static': compiler resource usage and theoretical occupancy, no GPU needed."""

    name = "static"
    vendor = "nvidia"
    measures_time = False

    def availability(self) -> str | None:
        """None when nvcc is on PATH, else why static analysis cannot run."""
        if shutil.which(NVCC) is None:
            return "nvcc not on PATH (install the CUDA toolkit or add its bin folder to PATH)"
        return None

    def version(self) -> str | None:
        """nvcc's version ('13.0.88'), or None when nvcc is absent."""
        try:
            result = run_command([NVCC, "--version"], timeout_s=30)
        except ProfilerError:
            return None
        match = _NVCC_VERSION.search(result.stdout)
        return match["version"] if match else None

    def profile(self, request: ProfileRequest) -> Profile:
        """Compile ``request.source`` for ``request.arch`` and report each kernel's resource usage.

        Args:
            request: ``source`` (a CUDA file), ``arch`` (default sm_90), ``workdir`` (the cubin goes
                there), ``kernel_regex`` (on base names) and ``timeout_s`` are used.

        Returns:
            A ``Profile`` in mode 'static': per kernel the launch configuration, registers, spills,
            stack, shared memory and theoretical occupancy; notes say what was assumed.

        Raises:
            BadReport: no source file was given.
            BuildFailed: nvcc could not compile the source (exit code 2).
            NoKernelsInSource: the source defines no kernel (exit code 2).
            NoKernelsProfiled: no kernel matches ``kernel_regex``.
            ProfilerUnavailable: nvcc is not on PATH.
            ToolTimeout: nvcc ran past ``request.timeout_s``.
        """
        source = request.source
        if source is None:
            raise BadReport("static analysis needs a CUDA source file", hint="pass a .cu file")
        arch = nvcc_arch(request.arch)
        cubin = request.workdir / f"{source.stem}.{arch}.cubin"
        compiled = compile_cubin(source, cubin, arch, request.timeout_s)
        ptxas_kernels = parse_ptxas_output(compiled.stderr + "\n" + compiled.stdout)
        if not ptxas_kernels:
            raise NoKernelsInSource(
                f"no __global__ kernel in {source}", hint="point at a file that defines kernels"
            )
        names = demangle([k.mangled_name for k in ptxas_kernels])
        text = source.read_text(encoding="utf-8", errors="replace")
        launches = analyze_launches(text)
        notes = [STATIC_NOTE]
        limits = _limits(arch, notes)
        kernels = [
            _kernel_profile(k, names[k.mangled_name], launches, limits, arch, (source, text), notes)
            for k in _in_source_order(ptxas_kernels, names, launches)
        ]
        return Profile(
            tool="static",
            tool_version=self.version(),
            mode="static",
            source=str(source),
            command=shlex.join(compiled.argv),
            kernels=_filtered(kernels, request.kernel_regex, source),
            notes=list(dict.fromkeys(notes)),  # template instantiations repeat their kernel's notes
        )

    def can_read(self, path: Path) -> bool:
        """Always False: static analysis reads sources, not reports."""
        return False

    def read(self, path: Path, *, kernel_regex: str | None = None) -> Profile:
        """Static analysis has no report files.

        Raises:
            BadReport: always.
        """
        raise BadReport(
            f"{path} cannot be read by the static profiler (it compiles sources, it reads no reports)",
            hint="use --profiler ncu or rocprof for report files",
        )


def _limits(arch: str, notes: list[str]) -> ArchLimits | None:
    try:
        return limits_for(arch)
    except KnowledgeError as exc:
        notes.append(f"occupancy not computed: {exc}")
        return None


def _in_source_order(
    kernels: list[PtxasKernel], names: dict[str, str], launches: SourceLaunches
) -> list[PtxasKernel]:
    # ptxas compiles in its own order; people read kernels in the order the file defines them.
    order = {name: index for index, name in enumerate(launches.kernels)}
    return sorted(kernels, key=lambda k: order.get(base_name(names[k.mangled_name]), len(order)))


def _filtered(kernels: list[KernelProfile], kernel_regex: str | None, source: Path) -> list[KernelProfile]:
    pattern = compile_kernel_filter(kernel_regex)
    if pattern is None:
        return kernels
    matching = [k for k in kernels if pattern.search(k.base_name)]
    if not matching:
        raise KernelFilterUnmatched(
            f"no kernel in {source} matches '{kernel_regex}'",
            hint="pick one of the available kernels with --kernel",
            available=[k.base_name for k in kernels],
        )
    return matching


def _kernel_profile(
    kernel: PtxasKernel,
    demangled: str,
    launches: SourceLaunches,
    limits: ArchLimits | None,
    arch: str,
    source: tuple[Path, str],
    notes: list[str],
) -> KernelProfile:
    base = base_name(demangled)
    site, block, block_size = _block_size(base, launches, notes)
    dynamic = _dynamic_shared(base, site, notes)
    registers = kernel.registers or 0
    occupancy = Occupancy()
    if limits is not None:
        occupancy = theoretical_occupancy(
            limits, block_size, registers, kernel.shared_static_bytes + (dynamic or 0)
        )
    grid = site.grid if site is not None else None
    return KernelProfile(
        name=demangled,
        base_name=base,
        launch=LaunchConfig(
            grid=grid,
            block=block,
            grid_size=grid[0] * grid[1] * grid[2] if grid else None,
            block_size=block_size,
            registers_per_thread=kernel.registers,
            shared_memory_static_bytes=kernel.shared_static_bytes,
            shared_memory_dynamic_bytes=dynamic,
            local_memory_per_thread_bytes=kernel.local_memory_bytes,
            spill_store_bytes_per_thread=kernel.spill_store_bytes,
            spill_load_bytes_per_thread=kernel.spill_load_bytes,
        ),
        occupancy=occupancy,
        device=DeviceInfo(
            vendor="nvidia",
            arch=normalize_arch(arch),
            compute_capability=limits.compute_capability if limits else None,
            max_shared_memory_per_sm_bytes=limits.shared_memory_per_sm_bytes if limits else None,
        ),
        source_lines=_launch_line(site, source),
    )


def _block_size(
    kernel: str, launches: SourceLaunches, notes: list[str]
) -> tuple[LaunchSite | None, tuple[int, int, int] | None, int]:
    """The launch site used, its block dimensions and the block size occupancy is computed for."""
    sites = launches.sites_for(kernel)
    resolved = [s for s in sites if s.block is not None]
    if resolved:
        site = resolved[0]
        assert site.block is not None
        sizes = sorted({_threads(s.block) for s in resolved if s.block is not None})
        if len(sizes) > 1:
            notes.append(
                f"kernel {kernel} is launched with several block sizes ({', '.join(map(str, sizes))}); "
                f"occupancy computed for the first launch (line {site.line}, {_threads(site.block)} threads)"
            )
        return site, site.block, _threads(site.block)
    bound = launches.launch_bounds.get(kernel)
    if bound is not None:
        notes.append(
            f"block size of kernel {kernel} not found in the source; occupancy computed for its "
            f"__launch_bounds__ maximum of {bound} threads"
        )
        return None, None, bound
    if sites:
        notes.append(
            f"block size of kernel {kernel} is not a compile-time constant (line {sites[0].line}: "
            f"'{sites[0].block_text}'); occupancy computed for {DEFAULT_BLOCK_SIZE} threads"
        )
    else:
        notes.append(
            f"block size of kernel {kernel} not found in the source; occupancy computed for "
            f"{DEFAULT_BLOCK_SIZE} threads"
        )
    return None, None, DEFAULT_BLOCK_SIZE


def _dynamic_shared(kernel: str, site: LaunchSite | None, notes: list[str]) -> int | None:
    if site is None:
        return None
    if site.dynamic_shared_bytes is None:
        notes.append(
            f"dynamic shared memory of kernel {kernel} is not a compile-time constant (line {site.line}: "
            f"'{site.shared_text}'); occupancy counts static shared memory only"
        )
    return site.dynamic_shared_bytes


def _launch_line(site: LaunchSite | None, source: tuple[Path, str]) -> list[SourceLine]:
    if site is None:
        return []
    path, text = source
    lines = text.splitlines()
    return [
        SourceLine(
            file=str(path),
            line=site.line,
            text=lines[site.line - 1].strip() if site.line <= len(lines) else None,
            note=f"launch site used for occupancy (block {site.block_text})",
        )
    ]


def _threads(block: tuple[int, int, int]) -> int:
    return block[0] * block[1] * block[2]
