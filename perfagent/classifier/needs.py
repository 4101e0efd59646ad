"""What each classifier rule reads, and when a kernel's tier-A evidence calls for tier B.

Staged profiling (``perfagent.staging``) collects counters in tiers (``profilers.ncu.tiers``): tier A
(speed of light, memory, occupancy, FLOPs) for every kernel profiled in depth, tier B (warp stalls,
scheduler state) only where ``tier_b_reason`` says the tier-A evidence calls for it. Each rule
declares its needs in canonical keys (the metric map's ``metrics.<field>`` names; a dict field such as
``metrics.warp_stalls`` means any of its keys): ``always`` = read whenever the rule runs, ``tier_b`` =
read only on a branch taken when ``tier_b_reason`` fires. tests/classifier/test_needs.py checks that every
``always`` key is collected by tier A and every ``tier_b`` key by tiers A+B, and, on a recorded report,
that dropping tier B where ``tier_b_reason`` is None changes no classification.

A rule that reaches a tier-B metric of a kernel profiled without tier B says "not collected" (a Skip),
never reads the absence as 0 (``RuleContext.not_collected``).
"""

from __future__ import annotations

from dataclasses import dataclass

from perfagent.classifier.bound_rules import AT_BOUND_FRAC, LATENCY_FRAC
from perfagent.roofline import roofline
from profilers.model import KernelProfile

COMPUTE_PRECISIONS = ("fp64", "fp32", "fp16", "tensor")


@dataclass(frozen=True)
class RuleNeeds:
    """Canonical keys one rule reads."""

    always: frozenset[str]
    tier_b: frozenset[str] = frozenset()


def _keys(*names: str) -> frozenset[str]:
    return frozenset(names)


_SOL = ("metrics.sm_throughput_pct", "metrics.memory_throughput_pct")
_ROOFLINE = (
    "metrics.duration_s",
    "metrics.dram_bytes",
    "metrics.l2_bytes",
    "metrics.l1_bytes",
    "metrics.flops.fp32",
)
_STALLS = (
    "metrics.issue_slot_utilization_pct",
    "metrics.warp_stalls",
    "metrics.cycles_per_issued_instruction",
    "metrics.eligible_warps_per_scheduler",
)

RULE_NEEDS: dict[str, RuleNeeds] = {
    "uncoalesced_global_access": RuleNeeds(
        _keys(
            "metrics.global_load_bytes_per_sector",
            "metrics.global_store_bytes_per_sector",
            "metrics.global_load_sectors",
            "metrics.global_store_sectors",
            "metrics.memory_throughput_pct",
        )
    ),
    "shared_bank_conflicts": RuleNeeds(
        _keys(
            "metrics.shared_bank_conflict_pct",
            "metrics.shared_load_wavefronts",
            "metrics.shared_load_requests",
            "metrics.shared_store_wavefronts",
            "metrics.shared_store_requests",
            "metrics.l1_throughput_pct",
        )
    ),
    "local_memory_spills": RuleNeeds(
        _keys(
            "metrics.local_load_bytes",
            "metrics.local_store_bytes",
            "metrics.l1_bytes",
            "launch.registers_per_thread",
        )
    ),
    "atomic_contention": RuleNeeds(_keys("metrics.atomic_instructions", "metrics.instructions_executed")),
    "xcd_unaware_block_order": RuleNeeds(
        _keys("metrics.l2_hit_rate_pct", "metrics.l2_bytes", "metrics.dram_bytes")
    ),
    "warp_divergence": RuleNeeds(
        _keys("metrics.threads_per_instruction", "metrics.predicated_threads_per_instruction", *_SOL)
    ),
    "small_grid": RuleNeeds(_keys("launch.grid_size", "launch.waves_per_sm", "device.sm_count")),
    "tail_effect": RuleNeeds(_keys("launch.waves_per_sm")),
    "block_size_not_warp_multiple": RuleNeeds(_keys("launch.block_size")),
    "low_occupancy": RuleNeeds(
        _keys("occupancy.theoretical_pct", "occupancy.achieved_pct", "launch.waves_per_sm", *_SOL)
    ),
    "latency_bound": RuleNeeds(_keys(*_SOL, "launch.waves_per_sm"), tier_b=_keys(*_STALLS)),
    "onchip_bandwidth_saturated": RuleNeeds(
        _keys(
            "metrics.l1_throughput_pct",
            "metrics.l2_throughput_pct",
            "metrics.dram_throughput_pct",
            *_ROOFLINE,
        )
    ),
    "memory_bound_with_headroom": RuleNeeds(
        _keys(*_SOL, "metrics.l1_throughput_pct", "metrics.l2_throughput_pct", "metrics.dram_throughput_pct")
    ),
    "host_overhead": RuleNeeds(_keys("metrics.duration_s")),
    "at_roofline_bound": RuleNeeds(
        _keys(
            *_ROOFLINE,
            "metrics.flops.tensor",
            "metrics.dram_throughput_pct",
            "metrics.sm_throughput_pct",
            "metrics.pipe_utilization_pct",
        )
    ),
    "no_dominant_limiter": RuleNeeds(_keys(*_SOL, *_ROOFLINE)),
}
"""Canonical keys each rule of ``perfagent.classifier.RULES`` (and the fallback) reads."""

TIER_B_KEYS: frozenset[str] = frozenset().union(*(n.tier_b for n in RULE_NEEDS.values()))


def tier_b_reason(kernel: KernelProfile) -> str | None:
    """Why this kernel's tier-A evidence calls for tier B, or None when it does not.

    - **latency-bound**: SM and memory throughput both under 60 % of peak with at least one full wave:
      only the stall reasons and scheduler state say what the warps wait on (``latency_bound``).
    - **compute-bound with no dominant limiter**: SM throughput at 60 % or more of peak but no counted
      FLOPs at 75 % of a compute roof: the SM is busy with something other than useful FLOPs, and the
      stalls and issue state say what (``latency_bound``'s and the plan's evidence).
    """
    m = kernel.metrics
    sm, mem = m.sm_throughput_pct, m.memory_throughput_pct
    if sm is None or mem is None:
        return "speed-of-light throughput not measured: every tier collected to be safe"
    waves = kernel.launch.waves_per_sm
    if max(sm, mem) < LATENCY_FRAC * 100 and (waves is None or waves >= 1.0):
        return f"latency-bound in tier A (SM {sm:.0f} %, memory {mem:.0f} % of peak): stall reasons needed"
    if sm >= LATENCY_FRAC * 100 and not _at_compute_roof(kernel):
        return (
            f"compute-bound in tier A (SM {sm:.0f} % of peak) with no FLOP roof near it: "
            "stall reasons and issue state needed"
        )
    return None


def _at_compute_roof(kernel: KernelProfile) -> bool:
    rl = roofline(kernel)
    if rl is None or rl.fraction_of_sol is None:
        return False
    return rl.bounding_resource in COMPUTE_PRECISIONS and rl.fraction_of_sol >= AT_BOUND_FRAC
