"""Theoretical occupancy: how many warps an SM can hold for a kernel's launch and resource usage.

The formulas are those of the CUDA Occupancy Calculator and ``cuda_occupancy.h``
(``cudaOccMaxBlocksPerSM{WarpsLimit,RegsLimit,SmemLimit}``), with the default cache configuration
(the largest shared-memory carveout) and no partitioned global caching, cluster or barrier limits.
Pure functions: the static profiler uses them, and so can anything that knows registers and shared
memory per block (e.g. a report without ncu's occupancy section).
"""

from __future__ import annotations

from knowledge.arch import ArchLimits
from profilers.model import Occupancy

# Tie-break when two resources allow the same number of blocks: name the one whose relief would
# actually raise occupancy. Block slots and warps come first because they are fixed by the block size
# alone; trimming registers or shared memory cannot help while either of them binds as well.
LIMITER_ORDER = ("block-slots", "warps", "registers", "shared-memory")


def theoretical_occupancy(
    limits: ArchLimits, block_size: int, registers_per_thread: int, shared_bytes_per_block: int
) -> Occupancy:
    """Theoretical occupancy of a kernel launch.

    Args:
        limits: the SM limits of the target architecture (``knowledge.arch.limits_for``).
        block_size: threads per block.
        registers_per_thread: registers ptxas allocated per thread.
        shared_bytes_per_block: static + dynamic shared memory per block, byte (the driver's
            per-block reservation is added here, do not include it).

    Returns:
        ``Occupancy`` with ``theoretical_pct``, the ``limiter`` (None at 100 %), the blocks per SM
        each resource allows (capped at the block slots, as ncu reports them) and
        ``max_warps_per_sm``. A launch that cannot run at all (block too large, too many registers or
        too much shared memory) gives 0 % with the resource that allows 0 blocks as the limiter.

    Raises:
        ValueError: a negative or zero block size, or negative registers/shared memory.
    """
    if block_size <= 0 or registers_per_thread < 0 or shared_bytes_per_block < 0:
        raise ValueError(
            f"invalid launch: block_size={block_size}, registers={registers_per_thread}, "
            f"shared={shared_bytes_per_block}"
        )
    warps_per_block = _ceil_div(block_size, limits.warp_size)
    by_resource = {
        "block-slots": limits.max_blocks_per_sm,
        "warps": _blocks_by_warps(limits, block_size, warps_per_block),
        "registers": _blocks_by_registers(limits, warps_per_block, registers_per_thread),
        "shared-memory": _blocks_by_shared_memory(limits, shared_bytes_per_block),
    }
    capped = {name: min(blocks, limits.max_blocks_per_sm) for name, blocks in by_resource.items()}
    blocks = min(capped.values())
    active_warps = blocks * warps_per_block
    pct = 100.0 * active_warps / limits.max_warps_per_sm
    limiter = None
    if active_warps < limits.max_warps_per_sm:
        limiter = next(name for name in LIMITER_ORDER if capped[name] == blocks)
    return Occupancy(
        theoretical_pct=pct,
        limiter=limiter,
        blocks_per_sm_limits=capped,
        max_warps_per_sm=limits.max_warps_per_sm,
    )


def _blocks_by_warps(limits: ArchLimits, block_size: int, warps_per_block: int) -> int:
    if block_size > limits.max_threads_per_block:
        return 0
    return limits.max_warps_per_sm // warps_per_block


def _blocks_by_registers(limits: ArchLimits, warps_per_block: int, registers_per_thread: int) -> int:
    if registers_per_thread == 0:
        return limits.max_blocks_per_sm
    # Registers go to whole warps, rounded up to the allocation unit (256 registers).
    regs_per_warp = _round_up(registers_per_thread * limits.warp_size, limits.register_allocation_unit)
    # The hardware checks the per-block limit as if warps filled every sub-partition evenly.
    assumed_per_block = regs_per_warp * _round_up(warps_per_block, limits.warp_allocation_granularity)
    if (
        registers_per_thread > limits.max_registers_per_thread
        or assumed_per_block > limits.max_registers_per_block
    ):
        return 0
    # Each sub-partition has its own slice of the register file; a warp cannot straddle two.
    sub_partitions = limits.warp_allocation_granularity
    warps_per_sub_partition = (limits.registers_per_sm // sub_partitions) // regs_per_warp
    return (warps_per_sub_partition * sub_partitions) // warps_per_block


def _blocks_by_shared_memory(limits: ArchLimits, shared_bytes_per_block: int) -> int:
    allocated = _round_up(
        shared_bytes_per_block + limits.reserved_shared_memory_per_block_bytes,
        limits.shared_memory_allocation_unit_bytes,
    )
    if allocated == 0:
        return limits.max_blocks_per_sm
    if allocated > limits.max_shared_memory_per_block_bytes + limits.reserved_shared_memory_per_block_bytes:
        return 0
    return limits.shared_memory_per_sm_bytes // allocated


def _ceil_div(x: int, y: int) -> int:
    return -(-x // y)


def _round_up(x: int, unit: int) -> int:
    return _ceil_div(x, unit) * unit
