"""Theoretical wavefront occupancy on CDNA against hand-computed cases.

Rules (profilers/rocprof/occupancy.py, LLVM AMDGPU model for gfx90a): 4 SIMDs x 8 waves = 32 waves/CU;
waves/SIMD = min(8, 512 // roundup(arch + accum VGPRs, 8)); SGPR limit 800 // roundup(sgpr, 16);
LDS 64 KiB per CU (gfx90a/gfx942) split between workgroups; at most 16 multi-wave workgroups per CU.
"""

from __future__ import annotations

import pytest

from profilers.rocprof.occupancy import theoretical_occupancy


def test_small_kernel_is_full() -> None:
    occ = theoretical_occupancy(workgroup_size=256, arch_vgpr=4, accum_vgpr=4, sgpr=16)
    assert occ is not None and occ.theoretical_pct == 100.0 and occ.limiter is None
    assert occ.max_warps_per_sm == 32


def test_vgpr_limited() -> None:
    # 64 + 128 = 192 VGPRs -> 512 // 192 = 2 waves/SIMD -> 8 waves/CU = one 512-thread (8-wave) workgroup.
    occ = theoretical_occupancy(workgroup_size=512, arch_vgpr=64, accum_vgpr=128, sgpr=112)
    assert occ is not None and occ.theoretical_pct == 25.0 and occ.limiter == "registers"
    assert occ.blocks_per_sm_limits["registers"] == 1


def test_lds_limited() -> None:
    # 12 KiB per workgroup -> 65536 // 12288 = 5 workgroups of 4 waves = 20 of 32 waves.
    occ = theoretical_occupancy(workgroup_size=256, arch_vgpr=32, lds_bytes_per_workgroup=12288)
    assert occ is not None and occ.theoretical_pct == pytest.approx(62.5) and occ.limiter == "shared-memory"


def test_gfx950_lds_is_larger() -> None:
    occ = theoretical_occupancy(
        workgroup_size=256, arch_vgpr=32, lds_bytes_per_workgroup=12288, lds_bytes_per_cu=160 * 1024
    )
    assert occ is not None and occ.theoretical_pct == 100.0


def test_two_wave_workgroups_hit_the_barrier_limit() -> None:
    # 128 threads = 2 waves; 16 workgroups per CU -> 32 waves: exactly full. 3 waves (192) -> 16 x 3 = 48 > 32.
    occ = theoretical_occupancy(workgroup_size=128, arch_vgpr=8)
    assert occ is not None and occ.theoretical_pct == 100.0
    assert occ.blocks_per_sm_limits["block-slots"] == 16


def test_unknown_vgprs() -> None:
    assert theoretical_occupancy(workgroup_size=256, arch_vgpr=None) is None
