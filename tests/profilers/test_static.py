"""StaticProfiler and build_program with the real nvcc on small kernels under tests/data/cuda/.

Register counts are whatever this nvcc allocates, so they are asserted as bounds where a compiler
update could move them; shared memory, spills' presence and launch configurations are exact.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from profilers.base import ProfileRequest
from profilers.build import build_program
from profilers.errors import BadReport, BuildFailed, NoKernelsProfiled
from profilers.model import KernelProfile, Profile
from profilers.static.profiler import STATIC_NOTE, StaticProfiler

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")

CUDA = Path(__file__).resolve().parents[1] / "data" / "cuda"


def _profile(name: str, tmp_path: Path, **options: object) -> Profile:
    request = ProfileRequest(source=CUDA / name, workdir=tmp_path, **options)  # type: ignore[arg-type]
    return StaticProfiler().profile(request)


def _kernel(profile: Profile, base: str) -> KernelProfile:
    return next(k for k in profile.kernels if k.base_name == base)


def test_probe_and_version() -> None:
    profiler = StaticProfiler()
    assert profiler.availability() is None
    version = profiler.version()
    assert version is not None and version[0].isdigit()
    assert (profiler.name, profiler.vendor, profiler.measures_time) == ("static", "nvidia", False)


def test_profile_shape(tmp_path: Path) -> None:
    profile = _profile("smem48k.cu", tmp_path)
    assert (profile.tool, profile.mode) == ("static", "static")
    assert profile.tool_version == StaticProfiler().version()
    assert profile.notes[0] == STATIC_NOTE
    assert (
        profile.command is not None and "-Xptxas -v" in profile.command and "-arch=sm_90" in profile.command
    )
    kernel = profile.kernels[0]
    assert kernel.metrics.duration_s is None and kernel.total_duration_s is None
    assert (kernel.device.vendor, kernel.device.arch, kernel.device.name) == ("nvidia", "sm_90", None)
    assert kernel.device.compute_capability == "9.0"


def test_spilling_kernel(tmp_path: Path) -> None:
    profile = _profile("spill.cu", tmp_path)
    kernel = _kernel(profile, "spill_heavy")
    launch = kernel.launch
    # __launch_bounds__(1024, 2) caps registers at 65536 / 2048 = 32.
    assert launch.registers_per_thread is not None and launch.registers_per_thread <= 32
    assert launch.spill_store_bytes_per_thread and launch.spill_store_bytes_per_thread > 0
    assert launch.spill_load_bytes_per_thread and launch.spill_load_bytes_per_thread > 0
    assert launch.local_memory_per_thread_bytes and launch.local_memory_per_thread_bytes > 0
    # No launch site: the block size comes from __launch_bounds__, and the notes say so.
    assert launch.block_size == 1024
    assert any("__launch_bounds__ maximum of 1024 threads" in note for note in profile.notes)
    # <= 32 registers at 1024 threads: 2 blocks of 32 warps fill the SM.
    assert kernel.occupancy.theoretical_pct == 100.0 and kernel.occupancy.limiter is None


def test_48k_static_shared_memory(tmp_path: Path) -> None:
    kernel = _kernel(_profile("smem48k.cu", tmp_path), "stage_tile")
    assert kernel.launch.shared_memory_static_bytes == 48 * 1024
    assert kernel.launch.shared_memory_dynamic_bytes == 0
    assert kernel.launch.block == (256, 1, 1)  # constexpr int THREADS = 256
    # (49152 + 1024 reserved) per block -> 233472 // 50176 = 4 blocks of 8 warps = 32 / 64 warps.
    assert kernel.occupancy.limiter == "shared-memory"
    assert kernel.occupancy.blocks_per_sm_limits["shared-memory"] == 4
    assert kernel.occupancy.theoretical_pct == pytest.approx(50.0)
    assert kernel.source_lines and kernel.source_lines[0].line == 12


def test_launch_configurations_from_source(tmp_path: Path) -> None:
    profile = _profile("launches.cu", tmp_path)
    assert [k.base_name for k in profile.kernels] == [
        "scale2d", "add", "reverse_block", "register_heavy", "never_launched", "runtime_block"
    ]  # fmt: skip
    scale2d = _kernel(profile, "scale2d")
    assert scale2d.launch.block == (32, 8, 1) and scale2d.launch.block_size == 256
    add = _kernel(profile, "add")
    assert add.launch.block == (128, 1, 1)  # #define BLOCK 128
    assert add.occupancy.theoretical_pct == 100.0 and add.occupancy.limiter is None
    reverse = _kernel(profile, "reverse_block")
    assert reverse.name == "void reverse_block<float>(float*)"
    assert reverse.launch.shared_memory_dynamic_bytes == 128 * 4  # BLOCK * sizeof(float)


def test_register_limited_kernel(tmp_path: Path) -> None:
    kernel = _kernel(_profile("launches.cu", tmp_path), "register_heavy")
    registers = kernel.launch.registers_per_thread
    assert registers is not None and registers > 64
    assert kernel.launch.spill_store_bytes_per_thread == 0
    assert kernel.launch.block_size == 256
    assert kernel.occupancy.limiter == "registers"
    assert kernel.occupancy.theoretical_pct is not None and kernel.occupancy.theoretical_pct < 50


def test_unresolved_block_sizes_are_said(tmp_path: Path) -> None:
    profile = _profile("launches.cu", tmp_path)
    assert (
        "block size of kernel never_launched not found in the source; occupancy computed for 256 threads"
        in profile.notes
    )
    assert any("runtime_block is not a compile-time constant" in note for note in profile.notes)
    assert _kernel(profile, "never_launched").launch.block_size == 256


def test_kernel_regex(tmp_path: Path) -> None:
    profile = _profile("launches.cu", tmp_path, kernel_regex="^add$")
    assert [k.base_name for k in profile.kernels] == ["add"]
    with pytest.raises(NoKernelsProfiled) as info:
        _profile("launches.cu", tmp_path, kernel_regex="nothing_like_this")
    assert "scale2d" in info.value.available


def test_other_arch_spellings(tmp_path: Path) -> None:
    kernel = _kernel(_profile("smem48k.cu", tmp_path, arch="8.0"), "stage_tile")
    assert kernel.device.arch == "sm_80"
    # sm_80: 167936 // 50176 = 3 blocks of 8 warps = 24 / 64 warps.
    assert kernel.occupancy.blocks_per_sm_limits["shared-memory"] == 3
    assert kernel.occupancy.theoretical_pct == pytest.approx(37.5)
    profile = _profile("smem48k.cu", tmp_path, arch="compute_90")
    assert profile.kernels[0].device.arch == "sm_90"


def test_syntax_error_is_build_failed(tmp_path: Path) -> None:
    with pytest.raises(BuildFailed) as info:
        _profile("syntax_error.cu", tmp_path)
    assert 'expected a ";"' in info.value.message
    assert "syntax_error.cu(4)" in info.value.message
    assert info.value.exit_code == 2


def test_unsupported_arch_is_build_failed(tmp_path: Path) -> None:
    with pytest.raises(BuildFailed, match="sm_70"):
        _profile("smem48k.cu", tmp_path, arch="sm_70")  # nvcc 13 dropped Volta


def test_missing_or_absent_source(tmp_path: Path) -> None:
    with pytest.raises(BuildFailed, match="does not exist"):
        _profile("no_such_file.cu", tmp_path)
    with pytest.raises(BadReport):
        StaticProfiler().profile(ProfileRequest(workdir=tmp_path))


def test_reads_no_reports(tmp_path: Path) -> None:
    report = tmp_path / "x.ncu-rep"
    report.write_bytes(b"")
    assert StaticProfiler().can_read(report) is False
    with pytest.raises(BadReport):
        StaticProfiler().read(report)


def test_build_program(tmp_path: Path) -> None:
    out = build_program(CUDA / "program.cu", tmp_path / "bin" / "program", "sm_90", timeout_s=300)
    assert out.is_file() and os.access(out, os.X_OK)


def test_build_program_failure(tmp_path: Path) -> None:
    with pytest.raises(BuildFailed, match='expected a ";"'):
        build_program(CUDA / "syntax_error.cu", tmp_path / "broken", "sm_90", timeout_s=300)
