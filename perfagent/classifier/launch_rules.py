"""Rules about how the kernel is launched: grid size, tail wave, block size, occupancy."""

from __future__ import annotations

import math

from perfagent.classifier.context import RuleContext, Skip, cap, finding, pct
from profilers.model import Evidence, Finding, Occupancy

WARP = 32
# Fewer resident-block waves than this leaves most of the GPU idle.
SMALL_GRID_WAVES = 0.5
# Like ncu, look at tails behind at most 4 full waves; report when the idle share of SM time is >= 10 %.
TAIL_MAX_FULL_WAVES = 4
TAIL_MIN_IDLE_SHARE = 0.1
# Theoretical occupancy below this hides latency poorly for most kernels.
LOW_OCCUPANCY_PCT = 50.0
# A kernel this close to a roof gains little from more warps.
BUSY_FRAC = 0.6


def small_grid(ctx: RuleContext) -> Finding | Skip | None:
    """A grid too small to occupy every SM (or most of the GPU's resident-block capacity)."""
    launch = ctx.kernel.launch
    sms = ctx.kernel.device.sm_count
    if launch.grid_size is None:
        return Skip("grid size unknown")
    if sms is None and launch.waves_per_sm is None:
        return Skip("SM count and waves per SM unknown")
    grid = launch.grid_size
    waves = launch.waves_per_sm
    below_sms = sms is not None and grid < sms
    low_waves = waves is not None and waves < SMALL_GRID_WAVES
    if not (below_sms or low_waves):
        return None
    busiest = ctx.busiest_frac
    if not below_sms and busiest is not None and busiest >= 0.8:
        return None  # few waves but a unit is already near its peak: more blocks will not help
    fill = grid / sms if below_sms and sms else waves
    assert fill is not None
    speedup = cap(1.0 / max(fill, 1e-6), 1.0 / busiest if busiest else None, ctx.sol_cap)
    occ = ctx.kernel.occupancy
    evidence = _small_grid_evidence(grid, sms, waves, occ, busiest)
    if below_sms and sms is not None:
        what = f"{grid} blocks for {sms} SMs: {sms - grid} SMs get no work at all"
    else:
        what = f"{grid} blocks fill only {waves:.0%} of one wave (the blocks all SMs can hold at once)"
    return finding(
        ctx,
        rule="small_grid",
        category="launch-config",
        title=f"Small grid: {what}",
        explanation=(
            f"{what.capitalize()}. With so few warps resident "
            f"(achieved occupancy {pct(occ.achieved_pct)}) the GPU cannot hide memory and instruction latency. "
            f"Launch more blocks — split the work finer, or size the grid from the SM count — so every SM holds "
            f"several blocks."
        ),
        evidence=evidence,
        transforms=["increase-parallelism", "launch-config"],
        speedup=speedup,
        formula="min(1 / fill, 1 / max(SM, memory throughput), 1 / fraction of speed of light) where fill = "
        + ("grid / SMs" if below_sms else "waves per SM"),
        ncu_rules=("LaunchConfiguration", "SOLBottleneck", "AchievedOccupancy"),
    )


def _small_grid_evidence(
    grid: int, sms: int | None, waves: float | None, occ: Occupancy, busiest: float | None
) -> list[Evidence]:
    """Grid size against the SM count, waves per SM, and the occupancy and busiest unit when measured."""
    below_sms = sms is not None and grid < sms
    evidence = [
        Evidence(
            metric="grid_size", value=grid, threshold=sms, comparison="<" if below_sms else None, unit="block"
        ),
        Evidence(metric="sm_count", value=sms, unit="SM"),
        Evidence(
            metric="waves_per_sm",
            value=None if waves is None else round(waves, 3),
            threshold=SMALL_GRID_WAVES,
            comparison="<",
            unit="wave",
        ),
    ]
    if occ.achieved_pct is not None:
        evidence.append(Evidence(metric="achieved_occupancy_pct", value=round(occ.achieved_pct, 1), unit="%"))
    if busiest is not None:
        evidence.append(
            Evidence(metric="max(sm, memory) throughput", value=round(busiest * 100, 1), unit="%")
        )
    return evidence


def tail_effect(ctx: RuleContext) -> Finding | Skip | None:
    """A last partial wave that leaves most SMs idle for a large share of the run."""
    waves = ctx.kernel.launch.waves_per_sm
    if waves is None:
        return Skip("waves per SM unknown")
    whole, partial = math.floor(waves), waves - math.floor(waves)
    if whole < 1 or partial <= 0.0 or whole > TAIL_MAX_FULL_WAVES:
        return None
    idle_share = (1.0 - partial) / math.ceil(waves)
    if idle_share < TAIL_MIN_IDLE_SHARE:
        return None
    speedup = cap(math.ceil(waves) / waves, ctx.sol_cap)
    return finding(
        ctx,
        rule="tail_effect",
        category="launch-config",
        title=f"Tail effect: {waves:.2f} waves, the last one {partial:.0%} full",
        explanation=(
            f"The grid runs as {whole} full wave(s) plus a partial wave that is only {partial:.0%} full, so during the "
            f"last wave most SMs idle. Make the grid a multiple of the resident-block capacity, or give each block "
            f"more (or less) work so the waves divide evenly."
        ),
        evidence=[Evidence(metric="waves_per_sm", value=round(waves, 3), unit="wave")],
        transforms=["launch-config", "thread-coarsening"],
        speedup=speedup,
        formula="ceil(waves) / waves (all waves take equally long), capped at 1 / fraction of speed of light",
        ncu_rules=("LaunchConfiguration",),
    )


def block_size_not_warp_multiple(ctx: RuleContext) -> Finding | Skip | None:
    """A block size that is not a multiple of 32 leaves lanes of the last warp empty."""
    bs = ctx.kernel.launch.block_size
    if bs is None:
        return Skip("block size unknown")
    if bs % WARP == 0:
        return None
    warps = math.ceil(bs / WARP)
    speedup = cap(warps * WARP / bs, ctx.sol_cap)
    return finding(
        ctx,
        rule="block_size_not_warp_multiple",
        category="launch-config",
        title=f"Block size {bs} is not a multiple of 32",
        explanation=f"{bs} threads make {warps} warps, the last with {bs % WARP} of 32 lanes active: "
        f"{warps * WARP - bs} lanes per block do nothing. Use a multiple of 32 (typically 128-256).",
        evidence=[Evidence(metric="block_size", value=bs, unit="thread", note="not a multiple of 32")],
        transforms=["launch-config"],
        speedup=speedup,
        formula="ceil(block / 32) × 32 / block",
        ncu_rules=("LaunchConfiguration",),
    )


_LIMITER_TRANSFORMS = {
    "registers": ["reduce-register-pressure", "launch-config"],
    "shared-memory": ["launch-config", "smem-tiling"],
    "block-slots": ["launch-config", "thread-coarsening"],
    "warps": ["launch-config"],
}


def low_occupancy(ctx: RuleContext) -> Finding | Skip | None:
    """Too few resident warps to hide latency, with the resource that limits them."""
    occ = ctx.kernel.occupancy
    if occ.theoretical_pct is None:
        return Skip("theoretical occupancy unknown")
    if occ.theoretical_pct >= LOW_OCCUPANCY_PCT:
        return None
    busiest = ctx.busiest_frac
    if busiest is not None and busiest >= BUSY_FRAC:
        return None  # a unit is busy: occupancy is not what limits this kernel
    launch = ctx.kernel.launch
    if launch.waves_per_sm is not None and launch.waves_per_sm < 1.0:
        return None  # every block is resident at once: the grid, not occupancy, caps the warps (small_grid)
    limiter = occ.limiter or "unknown"
    detail = {
        "registers": f"{launch.registers_per_thread} registers per thread",
        "shared-memory": f"{_kib(launch.shared_memory_static_bytes, launch.shared_memory_dynamic_bytes)} of shared memory per block",
        "block-slots": f"blocks of only {launch.block_size} threads hit the per-SM block limit",
        "warps": f"{launch.block_size} threads per block",
    }.get(limiter, "an unknown limiter")
    if ctx.static or busiest is None:
        speedup = None
        formula = None
    else:
        speedup = cap(100.0 / occ.theoretical_pct, 0.8 / busiest if busiest else None, ctx.sol_cap)
        formula = "min(100 % / theoretical occupancy, 0.8 / max(SM, memory throughput), 1 / fraction of speed of light)"
    evidence = _occupancy_evidence(occ, limiter, launch.registers_per_thread)
    return finding(
        ctx,
        rule="low_occupancy",
        category="low-occupancy",
        title=f"Low occupancy: {occ.theoretical_pct:.0f} % theoretical, limited by {limiter}",
        explanation=(
            f"Only {occ.theoretical_pct:.0f} % of the SM's warp slots can be filled because of {detail}"
            + (f"; {pct(occ.achieved_pct)} is achieved" if occ.achieved_pct is not None else "")
            + ". With few warps per scheduler, stalls on memory or dependencies go unhidden."
            + (
                " (static analysis: occupancy from the compiler's resource usage and the block size found in the source)"
                if ctx.static
                else ""
            )
        ),
        evidence=evidence,
        transforms=_LIMITER_TRANSFORMS.get(limiter, ["launch-config"]),
        speedup=speedup,
        formula=formula,
        severity=None if not ctx.static else ("high" if occ.theoretical_pct < 25 else "medium"),
        ncu_rules=("TheoreticalOccupancy", "AchievedOccupancy"),
    )


def _occupancy_evidence(occ: Occupancy, limiter: str, registers: int | None) -> list[Evidence]:
    """Theoretical and achieved occupancy, the limiter, the blocks per SM each resource allows, the registers."""
    evidence = [
        Evidence(
            metric="theoretical_occupancy_pct",
            value=None if occ.theoretical_pct is None else round(occ.theoretical_pct, 1),
            threshold=LOW_OCCUPANCY_PCT,
            comparison="<",
            unit="%",
        ),
        Evidence(
            metric="achieved_occupancy_pct",
            value=None if occ.achieved_pct is None else round(occ.achieved_pct, 1),
            unit="%",
        ),
        Evidence(metric="occupancy_limiter", value=limiter),
    ]
    evidence += [
        Evidence(metric=f"blocks_per_sm_by_{k}", value=v, unit="block")
        for k, v in sorted(occ.blocks_per_sm_limits.items())
    ]
    if registers is not None:
        evidence.append(Evidence(metric="registers_per_thread", value=registers, unit="register"))
    return evidence


def _kib(static: int | None, dynamic: int | None) -> str:
    total = (static or 0) + (dynamic or 0)
    return f"{total / 1024:.1f} KiB"
