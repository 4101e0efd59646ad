"""Rules about instruction execution: divergence, latency, host overhead, and no dominant limiter (the rules
about being at or near a roof are ``bound_rules``)."""

from __future__ import annotations

from perfagent.classifier.bound_rules import AT_BOUND_FRAC, LATENCY_FRAC
from perfagent.classifier.context import RuleContext, Skip, cap, finding, pct
from profilers.model import Evidence, Finding, Metrics

WARP = 32.0
# ncu's ThreadDivergence rule fires below 24 active threads per warp instruction.
DIVERGENCE_TPI_THRESHOLD = 24.0
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
        *_waiting_evidence(m),
        *(Evidence(metric=f"stall_{r}", value=round(v, 2), unit="cycle/inst") for r, v in top),
    ]
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


def _waiting_evidence(m: Metrics) -> list[Evidence]:
    """Neither unit busy, few instructions issued: the numbers that say the warps wait."""
    issue = m.issue_slot_utilization_pct
    return [
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
        return _static_standing(ctx)
    frac = rl.fraction_of_sol if rl else None
    sm, mem = m.sm_throughput_pct, m.memory_throughput_pct
    if sm is None and mem is None and frac is None:
        return _duration_only(ctx)
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


def _static_standing(ctx: RuleContext) -> Finding:
    """Where a kernel stands when only the compiler's resource usage is known (static analysis)."""
    occ = ctx.kernel.occupancy
    return finding(
        ctx,
        rule="no_dominant_limiter",
        category="low-occupancy" if (occ.theoretical_pct or 100) < 100 else "latency-bound",
        title="No resource problem visible to static analysis"
        + (
            f" (theoretical occupancy {occ.theoretical_pct:.0f} %)" if occ.theoretical_pct is not None else ""
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


def _duration_only(ctx: RuleContext) -> Finding:
    """Where a kernel stands when the profile holds its time and no counter."""
    m = ctx.m
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
