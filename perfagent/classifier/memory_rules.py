"""Rules about how the kernel uses memory: coalescing, bank conflicts, local memory, atomics."""

from __future__ import annotations

from perfagent.classifier.context import RuleContext, Skip, cap, finding, pct
from profilers.model import Evidence, Finding

FULL_SECTOR_BYTES = 32.0
# Below this many useful bytes per 32-byte sector, a quarter or more of the traffic is wasted.
COALESCING_BPS_THRESHOLD = 24.0
# ncu's SharedMemoryConflicts fires at 10 % conflict wavefronts.
BANK_CONFLICT_PCT_THRESHOLD = 10.0
# Local (spill/stack) bytes as a share of all L1 traffic worth reporting.
LOCAL_TRAFFIC_SHARE_THRESHOLD = 0.01
# Global atomics per executed warp instruction that point at contention when the kernel is not busy.
ATOMIC_SHARE_THRESHOLD = 0.02


def uncoalesced_global_access(ctx: RuleContext) -> Finding | Skip | None:
    """Global loads/stores that use only part of each 32-byte sector they move."""
    m = ctx.m
    if m.global_load_bytes_per_sector is None and m.global_store_bytes_per_sector is None:
        if ctx.static:
            return Skip("needs hardware counters; static analysis has none")
        return Skip(
            "bytes-per-sector metrics not in this profile (older ncu versions report sectors per "
            "request instead; see the profiler's own MemoryCacheAccessPattern result)"
        )
    ops: list[tuple[str, float, float | None]] = []
    for op, bps, sectors in (
        ("load", m.global_load_bytes_per_sector, m.global_load_sectors),
        ("store", m.global_store_bytes_per_sector, m.global_store_sectors),
    ):
        if bps is not None and 0 < bps < COALESCING_BPS_THRESHOLD:
            ops.append((op, bps, sectors))
    if not ops:
        return None
    worst_op, worst_bps, _ = min(ops, key=lambda o: o[1])
    # Share of sector traffic that would remain if every access were coalesced.
    remaining, formula_traffic = _coalesced_traffic_ratio(ctx)
    mem = ctx.mem_frac if ctx.mem_frac is not None else 1.0
    speedup = cap(1.0 / ((1.0 - mem) + mem * remaining))
    evidence = [
        Evidence(
            metric=f"global_{op}_bytes_per_sector",
            value=round(bps, 2),
            threshold=COALESCING_BPS_THRESHOLD,
            comparison="<",
            unit="byte/sector",
            note=f"{FULL_SECTOR_BYTES:.0f} = fully coalesced",
        )
        for op, bps, _ in ops
    ]
    evidence.append(Evidence(metric="memory_throughput_pct", value=m.memory_throughput_pct, unit="%"))
    waste = 1.0 - worst_bps / FULL_SECTOR_BYTES
    return finding(
        ctx,
        rule="uncoalesced_global_access",
        category="global-coalescing",
        title=f"Uncoalesced global {' and '.join(o[0] + 's' for o in ops)}: "
        f"{worst_bps:.1f} of 32 bytes used per sector",
        explanation=(
            f"Each warp-wide global {worst_op} uses only {worst_bps:.1f} of the 32 bytes in every sector it "
            f"moves, so {waste:.0%} of that traffic is wasted. Neighbouring threads should touch neighbouring "
            f"addresses (or stage the access through shared memory). Memory throughput is {pct(m.memory_throughput_pct)} "
            f"of peak, so the wasted sectors cost time directly."
        ),
        evidence=evidence,
        transforms=["coalesce-access", "smem-tiling", "vectorize-access"],
        speedup=speedup,
        formula=f"1 / ((1 - mem) + mem × r) with mem = memory throughput {mem:.2f} and r = {remaining:.2f}, "
        f"the share of sector traffic left once coalesced ({formula_traffic})",
        ncu_rules=("MemoryCacheAccessPattern", "UncoalescedGlobalAccess"),
    )


def _coalesced_traffic_ratio(ctx: RuleContext) -> tuple[float, str]:
    m = ctx.m
    actual = ideal = 0.0
    for bps, sectors in (
        (m.global_load_bytes_per_sector, m.global_load_sectors),
        (m.global_store_bytes_per_sector, m.global_store_sectors),
    ):
        if bps is None or sectors is None:
            continue
        actual += sectors
        ideal += sectors * bps / FULL_SECTOR_BYTES
    if actual > 0:
        return ideal / actual, "from measured load/store sector counts"
    # Without sector counts assume the worst op carries half of the traffic.
    worst = min(b for b in (m.global_load_bytes_per_sector, m.global_store_bytes_per_sector) if b)
    return (
        0.5 + 0.5 * worst / FULL_SECTOR_BYTES,
        "sector counts missing: assumed half the traffic is affected",
    )


def shared_bank_conflicts(ctx: RuleContext) -> Finding | Skip | None:
    """Shared-memory accesses serialised into several wavefronts by bank conflicts."""
    skip = ctx.missing("shared_bank_conflict_pct")
    if skip:
        return skip
    m = ctx.m
    conflict_pct = m.shared_bank_conflict_pct or 0.0
    if conflict_pct < BANK_CONFLICT_PCT_THRESHOLD:
        return None
    ways = _ways(m.shared_load_wavefronts, m.shared_load_requests)
    st_ways = _ways(m.shared_store_wavefronts, m.shared_store_requests)
    if m.l1_throughput_pct is None:
        # Without the L1/shared throughput the conflicts' share of the time is unknown.
        l1 = None
        speedup = None
    else:
        l1 = m.l1_throughput_pct / 100.0
        speedup = cap(1.0 / max(1.0 - conflict_pct / 100.0 * l1, 1e-3), ctx.sol_cap)
    evidence = [
        Evidence(
            metric="shared_bank_conflict_pct",
            value=round(conflict_pct, 1),
            threshold=BANK_CONFLICT_PCT_THRESHOLD,
            comparison=">=",
            unit="%",
            note="conflict wavefronts / all shared wavefronts",
        )
    ]
    if ways:
        evidence.append(
            Evidence(metric="shared_load_wavefronts_per_request", value=round(ways, 2), unit="way")
        )
    if st_ways:
        evidence.append(
            Evidence(metric="shared_store_wavefronts_per_request", value=round(st_ways, 2), unit="way")
        )
    evidence.append(Evidence(metric="l1_throughput_pct", value=m.l1_throughput_pct, unit="%"))
    worst = max(w for w in (ways, st_ways, 1.0) if w is not None)
    return finding(
        ctx,
        rule="shared_bank_conflicts",
        category="shared-bank-conflicts",
        title=f"Shared-memory bank conflicts: {conflict_pct:.0f} % of wavefronts"
        + (f", up to {worst:.1f}-way" if worst > 1.05 else ""),
        explanation=(
            f"{conflict_pct:.0f} % of shared-memory wavefronts are extra passes caused by threads of a warp "
            f"hitting the same bank at different addresses. A column read of a [32][32] float tile is the classic "
            f"case: pad the row (tile[32][33]) or swizzle the index so a warp's addresses spread over all 32 banks."
        ),
        evidence=evidence,
        transforms=["smem-padding", "smem-swizzle"],
        speedup=speedup,
        formula=None
        if l1 is None
        else f"1 / (1 - conflicts {conflict_pct / 100:.2f} × L1 throughput {l1:.2f}) (ncu's SharedMemoryConflicts "
        f"weighting), capped at 1 / fraction of speed of light",
        severity=None if speedup is not None else ("high" if conflict_pct >= 50 else "medium"),
        ncu_rules=("SharedMemoryConflicts", "UncoalescedSharedAccess"),
    )


def _ways(wavefronts: float | None, requests: float | None) -> float | None:
    if wavefronts is None or not requests:
        return None
    return wavefronts / requests


def _static_spills(ctx: RuleContext) -> Finding | None:
    """Spills and stack frames as ptxas reports them (static analysis: no traffic measured)."""
    launch = ctx.kernel.launch
    spill = (launch.spill_store_bytes_per_thread or 0) + (launch.spill_load_bytes_per_thread or 0)
    stack = launch.local_memory_per_thread_bytes or 0
    if spill == 0 and stack == 0:
        return None
    return finding(
        ctx,
        rule="local_memory_spills",
        category="register-spills",
        title=f"Local memory: {spill} B/thread of spills, {stack} B/thread stack frame (compiler report)",
        explanation=(
            f"ptxas reports {launch.spill_store_bytes_per_thread or 0} bytes of spill stores and "
            f"{launch.spill_load_bytes_per_thread or 0} bytes of spill loads per thread, and a {stack}-byte stack "
            f"frame, with {launch.registers_per_thread} registers per thread. Every spill is a round trip "
            f"through L1/L2. Static analysis cannot say how often that code runs."
        ),
        evidence=[
            Evidence(
                metric="spill_store_bytes_per_thread",
                value=launch.spill_store_bytes_per_thread,
                unit="byte",
            ),
            Evidence(
                metric="spill_load_bytes_per_thread",
                value=launch.spill_load_bytes_per_thread,
                unit="byte",
            ),
            Evidence(metric="local_memory_per_thread_bytes", value=stack, unit="byte"),
            Evidence(metric="registers_per_thread", value=launch.registers_per_thread, unit="register"),
        ],
        transforms=["reduce-register-pressure", "launch-config"],
        speedup=None,
        formula=None,
        severity="medium" if spill else "low",
    )


def local_memory_spills(ctx: RuleContext) -> Finding | Skip | None:
    """Register spills or stack arrays that send register traffic to (slow) local memory."""
    if ctx.static:
        return _static_spills(ctx)
    m = ctx.m
    local = (m.local_load_bytes or 0.0) + (m.local_store_bytes or 0.0)
    if m.local_load_bytes is None and m.local_store_bytes is None and m.spill_instructions is None:
        return ctx.missing("local_load_bytes", "local_store_bytes")
    if local <= 0 and not m.spill_instructions:
        return None
    denom = (m.l1_bytes or 0.0) + local
    share = local / denom if denom > 0 else None
    if share is not None and share < LOCAL_TRAFFIC_SHARE_THRESHOLD and not m.spill_instructions:
        return None
    mem = ctx.mem_frac if ctx.mem_frac is not None else 0.5
    speedup = cap(1.0 / (1.0 - (share or 0.0) * mem), ctx.sol_cap) if share is not None else None
    return finding(
        ctx,
        rule="local_memory_spills",
        category="register-spills",
        title=f"Local-memory traffic: {_bytes(local)} moved for spills / stack arrays"
        + (f" ({share:.0%} of L1 traffic)" if share is not None else ""),
        explanation=(
            f"The kernel moves {_bytes(local)} through local memory, which is what registers spill to and where "
            f"dynamically indexed per-thread arrays live; with {ctx.kernel.launch.registers_per_thread} registers per "
            f"thread. Reduce live values, avoid runtime-indexed local arrays, or relax __launch_bounds__."
        ),
        evidence=[
            Evidence(metric="local_load_bytes", value=m.local_load_bytes, unit="byte"),
            Evidence(metric="local_store_bytes", value=m.local_store_bytes, unit="byte"),
            Evidence(metric="spill_instructions", value=m.spill_instructions, unit="inst"),
            Evidence(
                metric="local_share_of_l1_traffic",
                value=None if share is None else round(share, 3),
                threshold=LOCAL_TRAFFIC_SHARE_THRESHOLD,
                comparison=">=",
            ),
        ],
        transforms=["reduce-register-pressure", "launch-config"],
        speedup=speedup,
        formula=None
        if speedup is None
        else f"1 / (1 - local share {share:.2f} × memory throughput {mem:.2f}), capped at 1 / fraction of speed of light",
        ncu_rules=("MemoryCacheAccessPattern",),
    )


def atomic_contention(ctx: RuleContext) -> Finding | Skip | None:
    """Many global atomics in a kernel that is not busy: updates serialise on a few addresses."""
    skip = ctx.missing("atomic_instructions", "instructions_executed")
    if skip:
        return skip
    m = ctx.m
    atomics = m.atomic_instructions or 0.0
    share = atomics / m.instructions_executed if m.instructions_executed else 0.0
    busiest = ctx.busiest_frac
    if share < ATOMIC_SHARE_THRESHOLD or (busiest is not None and busiest >= 0.6):
        return None
    speedup = cap(0.8 / busiest, ctx.sol_cap) if busiest else None
    return finding(
        ctx,
        rule="atomic_contention",
        category="atomic-contention",
        title=f"Atomic contention: {share:.1%} of instructions are global atomics, yet no unit is busy",
        explanation=(
            f"{atomics:,.0f} warp-level global atomic instructions make up {share:.1%} of the instruction stream while "
            f"the busiest unit runs at {pct((busiest or 0) * 100)} of peak: updates to the same addresses serialise in "
            f"L2. Accumulate privately (shared memory or registers, warp-aggregated) and merge once per block."
        ),
        evidence=[
            Evidence(metric="atomic_instructions", value=atomics, unit="inst"),
            Evidence(
                metric="atomic_share_of_instructions",
                value=round(share, 4),
                threshold=ATOMIC_SHARE_THRESHOLD,
                comparison=">=",
            ),
            Evidence(
                metric="max(sm, memory) throughput",
                value=None if busiest is None else round(busiest * 100, 1),
                threshold=60.0,
                comparison="<",
                unit="%",
            ),
        ],
        transforms=["privatize-atomics", "warp-shuffle-reduction"],
        speedup=speedup,
        formula="0.8 / max(SM, memory throughput): the gain if the busiest unit reached 80 % of peak (estimate)",
        ncu_rules=(),
    )


def _bytes(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


# L2 traffic at least this many times the DRAM traffic means data is re-read through L2.
L2_REUSE_FACTOR = 2.0
# Below this L2 hit rate that reuse is mostly lost.
XCD_L2_HIT_PCT = 60.0


def xcd_unaware_block_order(ctx: RuleContext) -> Finding | Skip | None:
    """AMD MI300-class GPUs split L2 per XCD and hand consecutive workgroups to different XCDs: data
    that neighbouring workgroups share is fetched into several L2s. Reused data with a low L2 hit
    rate on a multi-XCD device points at block order."""
    device = ctx.kernel.device
    if device.vendor != "amd" or not device.xcd_count or device.xcd_count < 2:
        return None
    skip = ctx.missing("l2_hit_rate_pct", "l2_bytes", "dram_bytes")
    if skip:
        return skip
    m = ctx.m
    assert m.l2_bytes is not None and m.dram_bytes is not None and m.l2_hit_rate_pct is not None
    reuse = m.l2_bytes / m.dram_bytes if m.dram_bytes > 0 else 0.0
    if reuse < L2_REUSE_FACTOR or m.l2_hit_rate_pct >= XCD_L2_HIT_PCT:
        return None  # streaming (no reuse to win), or L2 already serves the reuse
    xcds = device.xcd_count
    return finding(
        ctx,
        rule="xcd_unaware_block_order",
        category="dram-bandwidth",
        title=f"L2 reuse lost across {xcds} XCDs: data read {reuse:.1f}× through L2, {m.l2_hit_rate_pct:.0f} % hit rate",
        explanation=(
            f"{device.name or 'This GPU'} has {xcds} XCDs with separate L2 caches, and the hardware hands consecutive "
            f"workgroups to different XCDs. Data that neighbouring workgroups share is then fetched into several L2s "
            f"from HBM. Remap the workgroup id so that neighbours land on one XCD: "
            f"pid = (pid % {xcds}) * (num_pids / {xcds}) + pid / {xcds}, then apply grouped (swizzled) tile ordering."
        ),
        evidence=[
            Evidence(
                metric="l2_hit_rate_pct",
                value=round(m.l2_hit_rate_pct, 1),
                threshold=XCD_L2_HIT_PCT,
                comparison="<",
                unit="%",
            ),
            Evidence(
                metric="l2_bytes / dram_bytes",
                value=round(reuse, 2),
                threshold=L2_REUSE_FACTOR,
                comparison=">=",
            ),
            Evidence(metric="xcd_count", value=xcds),
        ],
        transforms=["grid-swizzle"],
        speedup=None,
        formula=None,
        severity="medium",
    )
