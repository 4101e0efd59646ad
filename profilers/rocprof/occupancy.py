"""Theoretical wavefront occupancy of a CDNA (gfx90a/gfx94x/gfx950) kernel from its resource usage.

Model (CDNA 2/3 ISA and rocprof.md 4.3): a CU has 4 SIMDs with 8 wave slots each (32 waves/CU); each
SIMD has 512 VGPRs per lane shared by architectural and accumulation VGPRs, allocated in granules of 8,
so waves/SIMD = min(8, 512 // granulated VGPRs) (256 VGPRs -> 2, 64 -> 8); 800 SGPRs per SIMD in granules
of 16; LDS per CU is split between resident workgroups (64 KiB on gfx90a/gfx942, 160 KiB on gfx950). A
workgroup's waves must all fit on one CU, and a CU holds at most 16 multi-wave workgroups (barrier
resources; single-wave workgroups use none) -- the same rules as LLVM's AMDGPU occupancy model
(``AMDGPUBaseInfo.cpp``: ``getMaxWorkGroupsPerCU``, ``getMaxWavesPerEU`` = 8 on gfx90a).
"""

from __future__ import annotations

import math

from profilers.model import Occupancy

SIMDS_PER_CU = 4
WAVES_PER_SIMD = 8
VGPRS_PER_SIMD_LANE = 512
VGPR_GRANULE = 8
SGPRS_PER_SIMD = 800
SGPR_GRANULE = 16
MAX_BARRIER_WORKGROUPS_PER_CU = 16
LIMITER_ORDER = ("block-slots", "warps", "registers", "shared-memory")


def theoretical_occupancy(
    *,
    workgroup_size: int,
    wave_size: int = 64,
    arch_vgpr: int | None,
    accum_vgpr: int | None = None,
    sgpr: int | None = None,
    lds_bytes_per_workgroup: int = 0,
    lds_bytes_per_cu: int = 64 * 1024,
    max_waves_per_cu: int = SIMDS_PER_CU * WAVES_PER_SIMD,
) -> Occupancy | None:
    """Theoretical occupancy, or None when the VGPR count or the workgroup size is unknown.

    Args:
        workgroup_size: work-items per workgroup.
        wave_size: 64 on CDNA.
        arch_vgpr: architectural VGPRs per work-item.
        accum_vgpr: accumulation VGPRs (AGPRs) per work-item.
        sgpr: SGPRs per wave.
        lds_bytes_per_workgroup: LDS per workgroup, byte.
        lds_bytes_per_cu: LDS capacity of a CU, byte.
        max_waves_per_cu: wave slots per CU.

    Returns:
        ``Occupancy`` with theoretical_pct, limiter ('block-slots' = 16 multi-wave workgroups per CU,
        'warps' = wave slots, 'registers', 'shared-memory'; None at 100 %), workgroups per CU each
        resource allows and max_warps_per_sm (waves per CU).
    """
    if arch_vgpr is None or workgroup_size <= 0 or wave_size <= 0:
        return None
    waves_per_wg = math.ceil(workgroup_size / wave_size)
    vgprs = _round_up(max(arch_vgpr, 1) + (accum_vgpr or 0), VGPR_GRANULE)
    per_simd = min(WAVES_PER_SIMD, VGPRS_PER_SIMD_LANE // vgprs)
    if sgpr:
        per_simd = min(per_simd, SGPRS_PER_SIMD // _round_up(sgpr, SGPR_GRANULE))
    slots = max_waves_per_cu if waves_per_wg == 1 else MAX_BARRIER_WORKGROUPS_PER_CU
    limits = {
        "block-slots": slots,
        "warps": max_waves_per_cu // waves_per_wg,
        "registers": (per_simd * SIMDS_PER_CU) // waves_per_wg,
        "shared-memory": (lds_bytes_per_cu // lds_bytes_per_workgroup)
        if lds_bytes_per_workgroup > 0
        else 10**6,
    }
    workgroups = min(limits.values())
    waves = min(workgroups * waves_per_wg, max_waves_per_cu)
    pct = 100.0 * waves / max_waves_per_cu
    limiter = None
    if pct < 100.0:
        limiter = next(k for k in LIMITER_ORDER if limits[k] == workgroups)
    shown = {k: v for k, v in limits.items() if v < 10**6}
    return Occupancy(
        theoretical_pct=pct,
        limiter=limiter,
        blocks_per_sm_limits=shown,
        max_warps_per_sm=max_waves_per_cu,
    )


def _round_up(value: int, granule: int) -> int:
    return ((value + granule - 1) // granule) * granule
