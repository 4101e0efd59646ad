"""GPU suite for the profiling path: real ncu runs on the bundled examples (`pytest -m gpu`).

Each test prints what it measured; the run is recorded in tests/gpu/RESULTS.md.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

import perfagent
from profilers.errors import ApplicationFailed, NoKernelsProfiled

pytestmark = pytest.mark.gpu
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "cuda"


@pytest.fixture(autouse=True)
def _need_ncu() -> None:
    if shutil.which("ncu") is None or shutil.which("nvidia-smi") is None:
        pytest.skip("needs an NVIDIA GPU with ncu on PATH")


def _first(record: perfagent.RunRecord, base: str) -> perfagent.Finding:
    kernel = next(k for k in record.kernels if k.profile.base_name == base)
    print(
        f"{base}: {kernel.duration_s} s; " + " | ".join(f"{f.category}: {f.title}" for f in kernel.findings)
    )
    return kernel.findings[0]


def test_transpose_naive_end_to_end(tmp_path: Path) -> None:
    record = perfagent.diagnose(EXAMPLES / "01_transpose_naive" / "main.cu", run_dir=tmp_path / "run")
    assert record.mode == "counters" and record.tool == "ncu" and record.tool_version
    assert (tmp_path / "run" / "record.json").is_file()
    assert _first(record, "transpose_naive").category == "global-coalescing"
    naive = next(k for k in record.kernels if k.profile.base_name == "transpose_naive")
    fixed = next(k for k in record.kernels if k.profile.base_name == "transpose_tiled_padded")
    assert naive.profile.device.name and "H" in naive.profile.device.name
    assert fixed.duration_s is not None and naive.duration_s is not None
    assert fixed.duration_s < naive.duration_s


def test_bank_conflicts_example(tmp_path: Path) -> None:
    record = perfagent.diagnose(EXAMPLES / "02_transpose_bank_conflicts" / "main.cu", save=False)
    assert _first(record, "transpose_smem_conflicts").category == "shared-bank-conflicts"
    padded = next(k for k in record.kernels if k.profile.base_name == "transpose_smem_padded")
    # ~7 % residual conflict wavefronts were measured on the H200: below the rule's 10 % threshold.
    assert (padded.profile.metrics.shared_bank_conflict_pct or 0.0) < 10.0
    assert all(f.category != "shared-bank-conflicts" for f in padded.findings)


def test_kernel_filter_that_matches_nothing_lists_available_kernels() -> None:
    with pytest.raises(NoKernelsProfiled) as info:
        perfagent.profile(EXAMPLES / "04_small_grid" / "main.cu", kernel="no_such_kernel")
    print("available:", info.value.available)
    assert any("saxpy_gridstride_small_grid" in k for k in info.value.available)


def test_application_failure_is_reported(tmp_path: Path) -> None:
    src = tmp_path / "fails.cu"
    src.write_text(
        textwrap.dedent(
            """
            #include <cstdio>
            __global__ void touch(float* p) { p[threadIdx.x] = 1.f; }
            int main() { float* d; cudaMalloc(&d, 1024); touch<<<1, 32>>>(d); cudaDeviceSynchronize(); return 3; }
            """
        )
    )
    with pytest.raises(ApplicationFailed) as info:
        perfagent.profile(src)
    assert info.value.returncode == 3


def test_static_registers_match_ncu_launch_stats() -> None:
    src = EXAMPLES / "06_register_spills" / "main.cu"
    measured = perfagent.profile(src)
    static = perfagent.profile(src, profiler="static")
    regs_ncu = {k.base_name: k.launch.registers_per_thread for k in measured.kernels}
    regs_static = {k.base_name: k.launch.registers_per_thread for k in static.kernels}
    print("ncu:", regs_ncu, "static:", regs_static)
    for name, regs in regs_static.items():
        if name in regs_ncu:
            assert regs_ncu[name] == regs


WMMA = Path(__file__).resolve().parents[1] / "data" / "sass" / "wmma.cu"
"""A WMMA tile kernel (its H100 SASS listing beside it holds HMMA)."""


def test_tensor_counters_are_skipped_only_for_code_without_tensor_instructions(tmp_path: Path) -> None:
    from profilers.build import build_program
    from profilers.static.sass_scan import no_tensor_code

    plain = build_program(EXAMPLES / "suite" / "main.cu", tmp_path / "suite", "sm_90", timeout_s=300)
    (tmp_path / "wmma.cu").write_text(WMMA.read_text())
    tensor = build_program(tmp_path / "wmma.cu", tmp_path / "wmma", "sm_90", timeout_s=300)
    reason = no_tensor_code([str(plain)])
    print(f"suite: {reason}; wmma: {no_tensor_code([str(tensor)])}")
    assert reason is not None and "no tensor-core instruction" in reason
    assert no_tensor_code([str(tensor)]) is None
    record = perfagent.diagnose(tmp_path / "wmma.cu", run_dir=tmp_path / "run")
    tile = next(k for k in record.kernels if k.profile.base_name == "tile")
    assert not any("tensor-pipe counters not collected" in n for n in record.notes)
    print(f"wmma tensor FLOPs: {tile.profile.metrics.flops}")
