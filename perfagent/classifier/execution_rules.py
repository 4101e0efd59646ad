"""Rules about instruction execution: divergence, latency, being at a roof, host overhead."""

from __future__ import annotations

from perfagent.classifier.context import RuleContext, Skip, cap, finding, pct
from profilers.model import Evidence, Finding, Metrics

WARP = 32.0
# ncu's ThreadDivergence rule fires below 24 active threads per warp instruction.
DIVERGENCE_TPI_THRESHOLD = 24.0
# Fraction of the speed of light at which a kernel counts as being at its roof.
AT_BOUND_FRAC = 0.75
# ncu's SOL rule: both units under 60 % means latency, not throughput, limits the kernel.
LATENCY_FRAC = 0.6
ISSUE_ACTIVE_PCT_THRESHOLD = 60.0
# Kernels this short, launched this often, are dominated by launch overhead.
TINY_KERNEL_S = 5e-6
MANY_LAUNCHES = 50

_STALL_ADVICE = {
    "long_scoreboard": (
        "waiting on global/local memory (L1TEX) results",
        ["vectorize-access", "async-copy", "thread-coarsening"],
    ),
    "barrier": ("waiting at __syncthreads()", ["warp-shuffle-reduction", "launch-config"]),
    "short_scoreboard": (
        "waiting on shared memory or special-function results",
        ["smem-padding", "smem-swizzle"],
    ),
    "mio_throttle": ("the shared-memory/MIO queue is full", ["smem-padding", "vectorize-access"]),
    "lg_throttle": (
        "the global/local load-store queue is full",
        ["vectorize-access", "reduce-register-pressure"],
    ),
    "wait": ("fixed-latency dependencies between instructions", ["loop-unroll", "thread-coarsening"]),
    "math_pipe_throttle": ("an execution pipe is oversubscribed", ["use-tensor-cores", "fast-math"]),
    "not_selected": ("eligible warps were not picked (spare warps)", ["thread-coarsening"]),
    "no_instruction": ("instruction-cache misses or a very short kernel", ["loop-unroll", "kernel-fusion"]),
    "membar": ("memory barriers", ["privatize-atomics"]),
    "drain": ("stores draining at exit", ["kernel-fusion"]),
    "dispatch_stall": ("dispatch stalls", ["loop-unroll"]),
    "tex_throttle": ("the texture queue is full", ["vectorize-access"]),
    "branch_resolving": ("resolving branch targets", ["avoid-divergence"]),
    "sleeping": ("sleeping or yielding warps", ["launch-config"]),
    "gmma": ("waiting on warpgroup MMA (Hopper wgmma)", ["async-copy"]),
    "imc_miss": ("immediate-constant cache misses", ["restrict-pointers"]),
    "misc": ("miscellaneous stalls", ["loop-unroll"]),
}


def warp_divergence(ctx: RuleContext) -> Finding | Skip | None:
    """Threads of a warp taking different paths: many lanes idle per instruction."""
    skip = ctx.missing("threads_per_instruction")
    if skip:
        return skip
    m = ctx.m
    tpi = m.threads_per_instruction or WARP
    pred = m.predicated_threads_per_instruction
    worst = min(tpi, pred) if pred is not None else tpi
    if worst >= DIVERGENCE_TPI_THRESHOLD:
        return None
    sm = ctx.sm_frac if ctx.sm_frac is not None else 1.0
    speedup = cap(1.0 / max(1.0 - (1.0 - worst / WARP) * sm, 1e-3), ctx.sol_cap)
    return finding(
        ctx,
        rule="warp_divergence",
        category="warp-divergence",
        title=f"Warp divergence: {worst:.1f} of 32 threads active per instruction",
        explanation=(
            f"On average only {worst:.1f} of a warp's 32 lanes execute each instruction: branches such as "
            f"`if (tid % (2*s) == 0)` send neighbouring threads down different paths. Make the active threads "
            f"contiguous (sequential addressing) or move the branch out of the warp."
        ),
        evidence=[
            Evidence(
                metric="threads_per_instruction",
                value=round(tpi, 2),
                threshold=DIVERGENCE_TPI_THRESHOLD,
                comparison="<",
                unit="thread",
            ),
            Evidence(
                metric="predicated_threads_per_instruction",
                value=None if pred is None else round(pred, 2),
                unit="thread",
            ),
            Evidence(metric="sm_throughput_pct", value=m.sm_throughput_pct, unit="%"),
        ],
        transforms=["avoid-divergence", "sequential-addressing", "warp-shuffle-reduction"],
        speedup=speedup,
        formula=f"1 / (1 - (1 - {worst:.1f}/32) × SM throughput {sm:.2f}) (ncu's ThreadDivergence weighting), "
        f"capped at 1 / fraction of speed of light",
        ncu_rules=("ThreadDivergence",),
    )


def at_roofline_bound(ctx: RuleContext) -> Finding | Skip | None:
    """The kernel runs near its speed of light: say so instead of inventing work."""
    rl = ctx.roofline
    m = ctx.m
    frac = rl.fraction_of_sol if rl else None
    resource = rl.bounding_resource if rl else None
    if resource in ("l1", "l2"):
        # An on-chip roof is not a dead end: more reuse moves fewer bytes (onchip_bandwidth_saturated).
        frac, resource = _dram_or_compute_fraction(ctx)
    # ncu's own speed-of-light percentages settle it when the roofline lacks data.
    if (
        (frac is None or frac < AT_BOUND_FRAC)
        and m.dram_throughput_pct is not None
        and m.dram_throughput_pct >= AT_BOUND_FRAC * 100
    ):
        frac, resource = m.dram_throughput_pct / 100.0, "dram"
    if (
        (frac is None or frac < AT_BOUND_FRAC)
        and m.sm_throughput_pct is not None
        and m.sm_throughput_pct >= AT_BOUND_FRAC * 100
    ):
        # FLOPs may be uncounted (e.g. tensor ops in older reports) while the SM is saturated.
        pipe = _busiest_pipe_name(m.pipe_utilization_pct)
        if pipe is not None and pipe not in _FLOP_PIPES:
            return _instruction_overhead(ctx, pipe)
        frac, resource = m.sm_throughput_pct / 100.0, f"{pipe} pipe" if pipe else "sm"
    if frac is None:
        return Skip("no speed-of-light estimate (needs bytes or FLOPs and device peaks)")
    if frac < AT_BOUND_FRAC or resource is None:
        return None
    category, what, transforms = _bound_vocabulary(resource)
    sol = rl.speed_of_light_s if rl else None
    return finding(
        ctx,
        rule="at_roofline_bound",
        category=category,
        title=f"At {frac:.0%} of {what} peak: little headroom",
        explanation=(
            f"The kernel runs at {frac:.0%} of the {what} roof"
            + (
                f" (speed of light {sol * 1e6:.1f} µs vs {m.duration_s * 1e6:.1f} µs measured)"
                if sol and m.duration_s
                else ""
            )
            + ". Tuning the same work cannot gain much more; only "
            + (
                "moving fewer bytes (fusion, smaller types, reuse) "
                if category != "compute-bound"
                else "doing less or cheaper arithmetic (tensor cores, fast math) "
            )
            + "makes it substantially faster."
        ),
        evidence=[
            Evidence(
                metric="fraction_of_speed_of_light",
                value=round(frac, 3),
                threshold=AT_BOUND_FRAC,
                comparison=">=",
            ),
            Evidence(metric="dram_throughput_pct", value=m.dram_throughput_pct, unit="%"),
            Evidence(metric="sm_throughput_pct", value=m.sm_throughput_pct, unit="%"),
        ],
        transforms=transforms,
        speedup=cap(1.0 / frac),
        formula="1 / fraction of speed of light",
        severity="info",
        ncu_rules=("SOLBottleneck",),
    )


def _dram_or_compute_fraction(ctx: RuleContext) -> tuple[float | None, str | None]:
    rl, d = ctx.roofline, ctx.m.duration_s
    if rl is None or not d:
        return None, None
    rest = {k: v for k, v in rl.floors_s.items() if k not in ("l1", "l2")}
    if not rest:
        return None, None
    name, floor = max(rest.items(), key=lambda kv: kv[1])
    return min(floor / d, 1.0), name


def _wasteful_access(m: Metrics) -> bool:
    """True when a known access defect explains high on-chip traffic."""
    uncoalesced = any(
        b is not None and 0 < b < 24.0
        for b in (m.global_load_bytes_per_sector, m.global_store_bytes_per_sector)
    )
    conflicts = (m.shared_bank_conflict_pct or 0.0) >= 10.0
    local = (m.local_load_bytes or 0.0) + (m.local_store_bytes or 0.0)
    spills = m.l1_bytes is not None and local > 0.05 * (m.l1_bytes + local)
    return uncoalesced or conflicts or spills


def onchip_bandwidth_saturated(ctx: RuleContext) -> Finding | Skip | None:
    """L1/shared or L2 near its throughput limit while DRAM is not: on-chip traffic is the roof,
    and more reuse per byte loaded (bigger tiles, registers) lowers it."""
    skip = ctx.missing("l1_throughput_pct", "l2_throughput_pct")
    if skip:
        return skip
    m = ctx.m
    l1, l2, dram = m.l1_throughput_pct or 0.0, m.l2_throughput_pct or 0.0, m.dram_throughput_pct or 0.0
    level, hot = ("L1/shared", l1) if l1 >= l2 else ("L2", l2)
    if hot < AT_BOUND_FRAC * 100 or dram >= hot - 15.0:
        return None
    if _wasteful_access(m):
        return (
            None  # the traffic is a symptom: the coalescing / bank-conflict / spill finding names the cause
        )
    # If on-chip traffic stopped limiting, the next roof is DRAM or compute.
    next_frac, next_roof = _dram_or_compute_fraction(ctx)
    speedup = cap(1.0 / next_frac) if next_frac else None
    return finding(
        ctx,
        rule="onchip_bandwidth_saturated",
        category="onchip-bandwidth",
        title=f"{level} bandwidth saturated: {hot:.0f} % of peak while DRAM is at {dram:.0f} %",
        explanation=(
            f"The {level} level runs at {hot:.0f} % of its throughput limit but DRAM only at {dram:.0f} %: the same data "
            f"is fetched from on-chip memory again and again. Raise reuse per load — larger tiles (bigger BLOCK sizes in "
            f"Triton), register tiling, or staging in shared memory — so each byte feeds more arithmetic."
            + (
                f" The next roof is {next_roof} at {next_frac:.0%} of the current time."
                if next_frac and next_roof
                else ""
            )
        ),
        evidence=[
            Evidence(
                metric="l1_throughput_pct",
                value=round(l1, 1),
                threshold=AT_BOUND_FRAC * 100,
                comparison=">=",
                unit="%",
            ),
            Evidence(metric="l2_throughput_pct", value=round(l2, 1), unit="%"),
            Evidence(metric="dram_throughput_pct", value=round(dram, 1), unit="%"),
        ],
        transforms=["register-tiling", "smem-tiling", "launch-config"],
        speedup=speedup,
        formula=f"1 / (time floor of the next roof ({next_roof}) / duration): the gain if on-chip traffic stopped limiting"
        if speedup
        else None,
        ncu_rules=("SOLBottleneck", "MemoryWorkloadAnalysis"),
    )


# Pipes whose saturation means useful floating-point work; anything else busy is overhead.
_FLOP_PIPES = ("fma", "fp64", "tensor", "fp16", "fmaheavy", "mfma", "valu")


def _busiest_pipe_name(pipes: dict[str, float]) -> str | None:
    if not pipes:
        return None
    name, value = max(pipes.items(), key=lambda kv: kv[1])
    return name if value > 0 else None


def _instruction_overhead(ctx: RuleContext, pipe: str) -> Finding:
    """The SM is saturated by a non-FLOP pipe (integer ALU, XU special functions, LSU): overhead, not work."""
    m = ctx.m
    mem = ctx.mem_frac or 0.0
    speedup = cap(AT_BOUND_FRAC / mem, ctx.sol_cap) if mem > 0 else None
    pipes = sorted(m.pipe_utilization_pct.items(), key=lambda kv: kv[1], reverse=True)[:3]
    return finding(
        ctx,
        rule="instruction_overhead",
        category="compute-bound",
        title=f"Issue-bound on {pipe.upper()} instructions, not FLOPs: SM {pct(m.sm_throughput_pct)}, memory {pct(m.memory_throughput_pct)}",
        explanation=(
            f"The SM is {pct(m.sm_throughput_pct)} busy, but its busiest pipe is {pipe.upper()} (integer arithmetic, "
            f"special functions such as division/modulo, or address math) rather than floating-point work. Index "
            f"arithmetic like `tid % (2*s)`, divergent branch bookkeeping or per-element integer division are the usual "
            f"causes: restructure the indexing (sequential addressing, strength reduction, fewer iterations per element)."
        ),
        evidence=[
            Evidence(
                metric="sm_throughput_pct",
                value=m.sm_throughput_pct,
                threshold=AT_BOUND_FRAC * 100,
                comparison=">=",
                unit="%",
            )
        ]
        + [Evidence(metric=f"pipe_{name}_pct", value=round(v, 1), unit="%") for name, v in pipes]
        + [Evidence(metric="issue_slot_utilization_pct", value=m.issue_slot_utilization_pct, unit="%")],
        transforms=["sequential-addressing", "avoid-divergence", "thread-coarsening", "fast-math"],
        speedup=speedup,
        formula="0.8 / memory throughput (the gain if the kernel became memory-bound at 80 % of peak), capped at 1 / fraction of speed of light"
        if speedup
        else None,
        ncu_rules=("HighPipeUtilization", "SOLBottleneck"),
    )


def _bound_vocabulary(resource: str) -> tuple[str, str, list[str]]:
    if resource == "dram":
        return "dram-bandwidth", "DRAM bandwidth", ["kernel-fusion", "vectorize-access"]
    if resource in ("l2", "l1"):
        return "onchip-bandwidth", f"{resource.upper()} bandwidth", ["smem-tiling", "register-tiling"]
    label = resource.upper() if resource in ("fp64", "fp32", "fp16", "tensor", "sm") else resource
    return "compute-bound", f"{label} compute", ["use-tensor-cores", "fast-math"]


def memory_bound_with_headroom(ctx: RuleContext) -> Finding | Skip | None:
    """Memory-bound, not yet at peak, with no more specific cause found."""
    skip = ctx.missing("memory_throughput_pct", "sm_throughput_pct")
    if skip:
        return skip
    m = ctx.m
    mem, sm = ctx.mem_frac or 0.0, ctx.sm_frac or 0.0
    if not (LATENCY_FRAC <= mem < AT_BOUND_FRAC and mem - sm >= 0.1):
        return None
    onchip = max(m.l1_throughput_pct or 0.0, m.l2_throughput_pct or 0.0)
    dram = m.dram_throughput_pct or 0.0
    roof = ctx.roofline.bounding_resource if ctx.roofline else None
    if roof in ("l1", "l2") or (roof is None and onchip > dram):
        category, what, transforms = (
            "onchip-bandwidth",
            "L1/L2",
            ["smem-tiling", "register-tiling", "vectorize-access"],
        )
    else:
        category, what, transforms = (
            "dram-bandwidth",
            "DRAM",
            ["vectorize-access", "launch-config", "kernel-fusion"],
        )
    speedup = cap(AT_BOUND_FRAC / mem + 0.0, ctx.sol_cap)
    return finding(
        ctx,
        rule="memory_bound_with_headroom",
        category=category,
        title=f"Memory-bound at {mem:.0%} of peak ({what})",
        explanation=(
            f"Memory throughput ({mem:.0%}) leads compute ({sm:.0%}); the busiest level is {what}. Wider accesses "
            f"(16-byte vector loads), more bytes in flight per thread, or fusing neighbouring kernels move it closer to the roof."
        ),
        evidence=[
            Evidence(
                metric="memory_throughput_pct",
                value=m.memory_throughput_pct,
                threshold=AT_BOUND_FRAC * 100,
                comparison="<",
                unit="%",
            ),
            Evidence(metric="dram_throughput_pct", value=m.dram_throughput_pct, unit="%"),
            Evidence(metric="l1_throughput_pct", value=m.l1_throughput_pct, unit="%"),
            Evidence(metric="l2_throughput_pct", value=m.l2_throughput_pct, unit="%"),
        ],
        transforms=transforms,
        speedup=speedup,
        formula="0.8 / memory throughput (the gain up to 80 % of peak), capped at 1 / fraction of speed of light",
        ncu_rules=("SOLBottleneck",),
    )


def latency_bound(ctx: RuleContext) -> Finding | Skip | None:
    """Neither compute nor memory is busy: warps wait; name what they wait on."""
    skip = ctx.missing("sm_throughput_pct", "memory_throughput_pct")
    if skip:
        return skip
    m = ctx.m
    busiest = ctx.busiest_frac or 0.0
    waves = ctx.kernel.launch.waves_per_sm
    if busiest >= LATENCY_FRAC or (waves is not None and waves < 1.0):
        return None  # busy enough, or the small-grid rule explains it
    lacking = ctx.not_collected("B")  # the stall reasons decide the finding: absent is not zero
    if lacking:
        return lacking
    issue = m.issue_slot_utilization_pct
    if issue is not None and issue >= ISSUE_ACTIVE_PCT_THRESHOLD:
        return None
    stalls = sorted(m.warp_stalls.items(), key=lambda kv: kv[1], reverse=True)
    cpi = m.cycles_per_issued_instruction
    top = [(r, v) for r, v in stalls if v > 0][:3]
    if top:
        reason, cycles = top[0]
        meaning, transforms = _STALL_ADVICE.get(reason, (reason.replace("_", " "), ["increase-parallelism"]))
        share = f" ({cycles / cpi:.0%} of the {cpi:.1f}-cycle CPI)" if cpi else ""
        why = f"Warps mostly stall on {reason.replace('_', ' ')}{share}: {meaning}."
    else:
        transforms = ["increase-parallelism", "thread-coarsening"]
        why = "Warp-stall reasons were not collected, so the cause of the waiting is not known."
    speedup = cap(AT_BOUND_FRAC / max(busiest, 0.05), ctx.sol_cap)
    evidence = [
        Evidence(
            metric="sm_throughput_pct",
            value=m.sm_throughput_pct,
            threshold=LATENCY_FRAC * 100,
            comparison="<",
            unit="%",
        ),
        Evidence(
            metric="memory_throughput_pct",
            value=m.memory_throughput_pct,
            threshold=LATENCY_FRAC * 100,
            comparison="<",
            unit="%",
        ),
        Evidence(
            metric="issue_slot_utilization_pct",
            value=None if issue is None else round(issue, 1),
            threshold=ISSUE_ACTIVE_PCT_THRESHOLD,
            comparison="<",
            unit="%",
        ),
        Evidence(metric="eligible_warps_per_scheduler", value=m.eligible_warps_per_scheduler, unit="warp"),
    ]
    evidence += [Evidence(metric=f"stall_{r}", value=round(v, 2), unit="cycle/inst") for r, v in top]
    return finding(
        ctx,
        rule="latency_bound",
        category="latency-bound",
        title=f"Latency-bound: SM {pct(m.sm_throughput_pct)}, memory {pct(m.memory_throughput_pct)} of peak"
        + (f"; top stall {top[0][0].replace('_', ' ')}" if top else ""),
        explanation=f"Neither compute nor memory is busy, so the time goes to waiting. {why} "
        f"More independent work per thread (ILP), more warps, or shorter dependency chains hide it.",
        evidence=evidence,
        transforms=transforms,
        speedup=speedup,
        formula="0.8 / max(SM, memory throughput): the gain if the busiest unit reached 80 % of peak, "
        "capped at 1 / fraction of speed of light (estimate)",
        ncu_rules=("CPIStall", "IssueSlotUtilization", "SOLBottleneck"),
    )


def host_overhead(ctx: RuleContext) -> Finding | Skip | None:
    """Many launches of a tiny kernel: launch overhead rivals the work."""
    k = ctx.kernel
    d = k.metrics.duration_s
    if d is None:
        return Skip("no duration")
    if k.invocations < MANY_LAUNCHES or d >= TINY_KERNEL_S:
        return None
    return finding(
        ctx,
        rule="host_overhead",
        category="host-overhead",
        title=f"{k.invocations} launches of {d * 1e6:.1f} µs each: launch overhead rivals the work",
        explanation=(
            f"Each launch costs a few microseconds of CPU and GPU front-end time, comparable to this kernel's "
            f"{d * 1e6:.1f} µs. Fuse it with its neighbours, batch the launches, or capture them in a CUDA graph."
        ),
        evidence=[
            Evidence(metric="invocations", value=k.invocations, threshold=MANY_LAUNCHES, comparison=">="),
            Evidence(metric="duration_s", value=d, threshold=TINY_KERNEL_S, comparison="<", unit="s"),
        ],
        transforms=["kernel-fusion"],
        speedup=None,
        formula=None,
        severity="medium",
    )


def no_dominant_limiter(ctx: RuleContext) -> Finding | Skip | None:
    """Fallback so every kernel says where it stands (added only when no other rule fired)."""
    m = ctx.m
    rl = ctx.roofline
    if ctx.static:
        occ = ctx.kernel.occupancy
        return finding(
            ctx,
            rule="no_dominant_limiter",
            category="low-occupancy" if (occ.theoretical_pct or 100) < 100 else "latency-bound",
            title="No resource problem visible to static analysis"
            + (
                f" (theoretical occupancy {occ.theoretical_pct:.0f} %)"
                if occ.theoretical_pct is not None
                else ""
            ),
            explanation="The compiler's resource usage shows no spills and no occupancy limiter worth fixing. "
            "Only a run under the profiler (a GPU with ncu) can show what the kernel waits on.",
            evidence=[
                Evidence(metric="theoretical_occupancy_pct", value=occ.theoretical_pct, unit="%"),
                Evidence(
                    metric="registers_per_thread",
                    value=ctx.kernel.launch.registers_per_thread,
                    unit="register",
                ),
            ],
            transforms=[],
            speedup=None,
            formula=None,
            severity="info",
        )
    frac = rl.fraction_of_sol if rl else None
    sm, mem = m.sm_throughput_pct, m.memory_throughput_pct
    if sm is None and mem is None and frac is None:
        return finding(
            ctx,
            rule="no_dominant_limiter",
            category="no-counters",
            title="Duration only: no hardware counters were collected for this kernel",
            explanation="The profile holds this kernel's time"
            + (f" ({m.duration_s * 1e6:.1f} µs per launch)" if m.duration_s else "")
            + " but no throughput, memory or occupancy counters, so no bottleneck can be named. "
            "Profile it with counters (ncu, or rocprofv3 --pmc / rocprof-compute on AMD).",
            evidence=[Evidence(metric="duration_s", value=m.duration_s, unit="s")],
            transforms=[],
            speedup=None,
            formula=None,
            severity="info",
        )
    if sm is not None and mem is not None and max(sm, mem) >= LATENCY_FRAC * 100:
        category = "compute-bound" if sm >= mem else "dram-bandwidth"
    else:
        category = "latency-bound"
    return finding(
        ctx,
        rule="no_dominant_limiter",
        category=category,
        title=f"No dominant limiter: SM {pct(sm)}, memory {pct(mem)}"
        + (f", {frac:.0%} of speed of light" if frac is not None else ""),
        explanation="No rule found a specific cause"
        + (
            f"; the kernel runs at {frac:.0%} of its speed of light, so up to {1 / frac:.1f}× is theoretically left"
            if frac
            else ""
        )
        + ". Collect the full metric set (--full) for stall reasons and memory tables.",
        evidence=[
            Evidence(metric="sm_throughput_pct", value=sm, unit="%"),
            Evidence(metric="memory_throughput_pct", value=mem, unit="%"),
            Evidence(metric="fraction_of_speed_of_light", value=None if frac is None else round(frac, 3)),
        ],
        transforms=[],
        speedup=None,
        formula=None,
        severity="low",
    )
