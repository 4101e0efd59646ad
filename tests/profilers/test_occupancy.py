"""Theoretical occupancy against hand-computed cases.

sm_90 limits used below (knowledge/data/arch_limits.toml): 64 warps/SM, 32 block slots, 65,536
registers/SM in 4 sub-partitions of 16,384, registers allocated per warp in units of 256, 233,472 B
(228 KiB) shared memory/SM, 232,448 B (227 KiB) max per block, 128 B allocation unit, 1 KiB reserved
per block. Formulas (cuda_occupancy.h):
  warps/block      = ceil(threads / 32)
  warps limit      = 64 // warps/block                        (0 if threads > 1024)
  regs/warp        = roundup(regs * 32, 256)
  registers limit  = ((16384 // regs/warp) * 4) // warps/block
  smem/block       = roundup(smem + 1024, 128)
  smem limit       = 233472 // smem/block
  blocks           = min(all limits, 32 block slots); occupancy = blocks * warps/block / 64
"""

from __future__ import annotations

import pytest

from knowledge.arch import limits_for
from profilers.occupancy import theoretical_occupancy

SM90 = limits_for("sm_90")


def test_256_threads_32_registers_is_full() -> None:
    # regs/warp = 1024 -> 16 warps per sub-partition -> 64 warps -> 8 blocks; warps limit 64 // 8 = 8;
    # smem/block = 1024 (reserved only) -> 228 blocks, capped at 32.
    occ = theoretical_occupancy(SM90, 256, 32, 0)
    assert occ.theoretical_pct == 100.0
    assert occ.limiter is None
    assert occ.max_warps_per_sm == 64
    assert occ.blocks_per_sm_limits == {"block-slots": 32, "warps": 8, "registers": 8, "shared-memory": 32}


def test_255_registers_limit_by_registers() -> None:
    # regs/warp = roundup(255 * 32 = 8160, 256) = 8192 -> 16384 // 8192 = 2 warps per sub-partition
    # -> 8 warps -> 8 // 8 = 1 block of 8 warps -> 8 / 64 = 12.5 %.
    occ = theoretical_occupancy(SM90, 256, 255, 0)
    assert occ.limiter == "registers"
    assert occ.blocks_per_sm_limits["registers"] == 1
    assert occ.theoretical_pct == pytest.approx(12.5)


def test_100_kib_shared_memory_gives_two_blocks() -> None:
    # smem/block = roundup(102400 + 1024, 128) = 103424 -> 233472 // 103424 = 2 blocks of 4 warps
    # -> 8 / 64 = 12.5 %; warps would allow 16 and registers (1024/warp) 16.
    occ = theoretical_occupancy(SM90, 128, 32, 100 * 1024)
    assert occ.limiter == "shared-memory"
    assert occ.blocks_per_sm_limits["shared-memory"] == 2
    assert occ.theoretical_pct == pytest.approx(12.5)


def test_1024_threads_64_registers_is_half() -> None:
    # warps/block = 32; regs/warp = 2048 -> 16384 // 2048 = 8 per sub-partition -> 32 warps -> 1 block;
    # warps limit 64 // 32 = 2 -> 1 block of 32 warps = 50 %.
    occ = theoretical_occupancy(SM90, 1024, 64, 0)
    assert occ.limiter == "registers"
    assert occ.blocks_per_sm_limits["registers"] == 1
    assert occ.blocks_per_sm_limits["warps"] == 2
    assert occ.theoretical_pct == pytest.approx(50.0)


def test_register_rounding_to_allocation_unit() -> None:
    # 33 regs: 33 * 32 = 1056 -> 1280 per warp -> 16384 // 1280 = 12 per sub-partition -> 48 warps
    # -> 48 // 8 = 6 blocks -> 48 / 64 = 75 %.
    occ = theoretical_occupancy(SM90, 256, 33, 0)
    assert occ.blocks_per_sm_limits["registers"] == 6
    assert occ.limiter == "registers"
    assert occ.theoretical_pct == pytest.approx(75.0)


def test_small_blocks_limited_by_block_slots() -> None:
    # 32 threads = 1 warp; 32 block slots -> 32 warps = 50 %.
    occ = theoretical_occupancy(SM90, 32, 16, 0)
    assert occ.limiter == "block-slots"
    assert occ.theoretical_pct == pytest.approx(50.0)


def test_odd_block_size_limited_by_warps() -> None:
    # 96 threads = 3 warps: warps limit 64 // 3 = 21, registers (32/thread) 64 // 3 = 21 too:
    # the tie names 'warps' (only the block size can fix it). 21 * 3 = 63 warps -> 98.4375 %.
    occ = theoretical_occupancy(SM90, 96, 32, 0)
    assert occ.limiter == "warps"
    assert occ.theoretical_pct == pytest.approx(100.0 * 63 / 64)


def test_partial_warp_counts_as_whole_warp() -> None:
    # 100 threads -> 4 warps: 64 // 4 = 16 blocks -> 64 warps = 100 %.
    occ = theoretical_occupancy(SM90, 100, 32, 0)
    assert occ.theoretical_pct == 100.0
    assert occ.limiter is None


def test_block_too_large_cannot_launch() -> None:
    occ = theoretical_occupancy(SM90, 2048, 32, 0)
    assert occ.theoretical_pct == 0.0
    assert occ.limiter == "warps"


def test_too_many_registers_for_block_cannot_launch() -> None:
    # 1024 threads * 255 regs: 8192 regs/warp * 32 warps = 262144 > 65536 registers per block.
    occ = theoretical_occupancy(SM90, 1024, 255, 0)
    assert occ.theoretical_pct == 0.0
    assert occ.limiter == "registers"


def test_too_much_shared_memory_cannot_launch() -> None:
    # 228 KiB + 1 KiB reserved = 234496 > 227 KiB + 1 KiB.
    occ = theoretical_occupancy(SM90, 128, 32, 228 * 1024)
    assert occ.theoretical_pct == 0.0
    assert occ.limiter == "shared-memory"


def test_max_opt_in_shared_memory_fits_one_block() -> None:
    # 227 KiB + 1 KiB = 233472 = the whole SM -> 1 block of 8 warps = 12.5 %.
    occ = theoretical_occupancy(SM90, 256, 32, 227 * 1024)
    assert occ.blocks_per_sm_limits["shared-memory"] == 1
    assert occ.theoretical_pct == pytest.approx(12.5)


def test_sm86_48_warps() -> None:
    # sm_86: 48 warps, 16 slots. 256 threads: warps 48 // 8 = 6 blocks -> 48 warps = 100 %.
    occ = theoretical_occupancy(limits_for("sm_86"), 256, 32, 0)
    assert occ.theoretical_pct == 100.0
    assert occ.max_warps_per_sm == 48
    assert occ.blocks_per_sm_limits["warps"] == 6


def test_sm75_shared_memory_unit_256_no_reservation() -> None:
    # sm_75: 64 KiB/SM, unit 256 B, nothing reserved. 49153 B -> 49408 -> 65536 // 49408 = 1 block
    # of 8 warps out of 32 = 25 %.
    occ = theoretical_occupancy(limits_for("sm_75"), 256, 32, 48 * 1024 + 1)
    assert occ.limiter == "shared-memory"
    assert occ.blocks_per_sm_limits["shared-memory"] == 1
    assert occ.theoretical_pct == pytest.approx(25.0)


@pytest.mark.parametrize(("block", "regs", "smem"), [(0, 32, 0), (256, -1, 0), (256, 32, -1)])
def test_invalid_input(block: int, regs: int, smem: int) -> None:
    with pytest.raises(ValueError):
        theoretical_occupancy(SM90, block, regs, smem)
