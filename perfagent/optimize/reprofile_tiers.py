"""Which counter tiers a candidate's re-profile collects (issue 27): only what the accept rule and the
next plan need.

The candidate is profiled for its changed kernel only (the workload's kernel filter) in one run. Tier A
always (the accept rule's metric and most findings read it); tier B (warp stall reasons and scheduler
state) only when the original kernel's tier-A evidence called for it, when the accept rule's metric is a
tier-B one, or, after the run, when the candidate's own tier-A evidence calls for it (then a second run
collects tier B for it: the next plan must not read a missing stall breakdown as an empty one).

That second run is one more application start under ncu (a launch-spec harness: Python, torch, the CUDA
context and ncu's injection, most of a 9-10 s re-profile on the H200 unseen2 runs), while tier B's 8
passes on the one changed kernel cost its duration plus ~15 ms each. So when those passes cost less than
a start, tier B is folded into the first run (``fold_pays``, the staged profiler's rule in
``perfagent.staging.plan``): a candidate never pays a second run for a stall breakdown.
"""

from __future__ import annotations

from perfagent.classifier.needs import tier_b_reason
from perfagent.staging.assemble import find_same, merge_tier_b
from perfagent.staging.plan import PASS_S, TIER_PASSES
from profilers.model import KernelProfile, MetricTier, Profile
from profilers.ncu.tiers import fields_provided

BOTH: tuple[MetricTier, ...] = ("A", "B")
TIER_A: tuple[MetricTier, ...] = ("A",)
REPROFILE_START_S = 3.0
"""A low estimate of one more application start of a candidate's re-profile, s (the staged profiler
measured 3.6 s for a small C++ program; the Python harness of a launch spec takes more): folding is
chosen only when tier B's passes cost less than this."""


def metric_in_tier_a(metric: str) -> bool:
    """Whether tier A fills the canonical metric an accept rule checks (the catalog's effect names,
    ``metrics.shared_bank_conflict_pct``, ``metrics.warp_stalls.long_scoreboard``; a bare field name is read
    as ``metrics.<name>``); a key no tier fills counts as tier A (more tiers would not measure it)."""
    key = (
        metric
        if metric.split(".")[0] in ("metrics", "launch", "occupancy", "device")
        else f"metrics.{metric}"
    )
    provided = fields_provided(TIER_A)
    if key in provided or any(k.startswith(key + ".") for k in provided):
        return True
    return key not in fields_provided(BOTH) and not any(
        k.startswith(key + ".") for k in fields_provided(BOTH)
    )


def tiers_for_candidate(
    before: KernelProfile | None, accept_metric: str | None, start_s: float = REPROFILE_START_S
) -> tuple[MetricTier, ...]:
    """The tiers of a candidate's first re-profile run (module docstring); ``start_s``: the estimated
    cost of a second run's application start (0: never fold)."""
    if before is None or tier_b_reason(before) is not None:
        return BOTH
    if accept_metric is not None and not metric_in_tier_a(accept_metric):
        return BOTH
    return BOTH if fold_pays(before, start_s) else TIER_A


def tier_b_extra_s(kernel: KernelProfile) -> float | None:
    """Estimated cost of tier B's passes on the kernel's profiled launches, s (None: duration unknown)."""
    duration = kernel.metrics.duration_s
    if duration is None:
        return None
    return TIER_PASSES["B"] * (PASS_S + duration) * max(1, kernel.invocations)


def fold_pays(kernel: KernelProfile, start_s: float) -> bool:
    """Whether tier B's passes on ``kernel`` (the changed kernel, as last profiled) cost no more than one
    more application start: then they go in the first run, and no second run can follow."""
    extra = tier_b_extra_s(kernel)
    return extra is not None and extra <= start_s


def needs_second_run(tiers: tuple[MetricTier, ...], after: KernelProfile | None) -> bool:
    """True when a tier-A-only re-profile shows the candidate now calls for tier B."""
    return "B" not in tiers and after is not None and tier_b_reason(after) is not None


def tiers_needing_b(tiers: tuple[MetricTier, ...], prof: Profile) -> bool:
    """A tier-A-only profile whose kernels' tier-A evidence calls for tier B (see ``reprofile``)."""
    return any(needs_second_run(tiers, k) for k in prof.kernels)


def with_tier_b_merged(tier_a: Profile, tier_b: Profile) -> Profile:
    """``tier_a`` with each kernel's tier-B counters from ``tier_b`` (same name, grid and block)."""
    kernels = []
    for kernel in tier_a.kernels:
        same = find_same(kernel, tier_b.kernels)
        kernels.append(merge_tier_b(kernel, same) if same is not None else kernel)
    return tier_a.model_copy(update={"kernels": kernels, "notes": [*tier_a.notes, *tier_b.notes]})
