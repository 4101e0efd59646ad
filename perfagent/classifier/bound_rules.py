"""Rules about being at or near a roof: at the roofline's bound, on-chip bandwidth saturated, memory-bound with
headroom left (the other execution rules are ``execution_rules``)."""

from __future__ import annotations

from perfagent.classifier.context import RuleContext, Skip, cap, finding, pct
from profilers.model import Evidence, Finding, Metrics

# Fraction of the speed of light at which a kernel counts as being at its roof.
AT_BOUND_FRAC = 0.75
# ncu's SOL rule: both units under 60 % means latency, not throughput, limits the kernel.
LATENCY_FRAC = 0.6


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
        explanation=_at_bound_explanation(frac, what, sol, m.duration_s, compute=category == "compute-bound"),
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


def _at_bound_explanation(
    frac: float, what: str, sol: float | None, duration: float | None, *, compute: bool
) -> str:
    """Why tuning the same work gains little at the roof, and what still would."""
    measured = (
        f" (speed of light {sol * 1e6:.1f} µs vs {duration * 1e6:.1f} µs measured)"
        if sol and duration
        else ""
    )
    remedy = (
        "doing less or cheaper arithmetic (tensor cores, fast math) "
        if compute
        else "moving fewer bytes (fusion, smaller types, reuse) "
    )
    return (
        f"The kernel runs at {frac:.0%} of the {what} roof{measured}. Tuning the same work cannot gain much more; "
        f"only {remedy}makes it substantially faster."
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
