"""The classifier: an ordered list of small pure rules over canonical metrics, and the ranking.

``classify(profile)`` runs every rule on every kernel, keeps the rules' findings (or the reason a
rule was skipped), and ranks findings and kernels by recoverable time — the kernel's time × the
share an estimated speed-up would save — so the first finding is the actionable root cause and a
kernel at its roof says so instead of getting busywork. Kernels perfagent's harness launched outside the
workload (``KernelProfile.harness``) are listed last, with no findings and no share of the time.
"""

from __future__ import annotations

from perfagent.classifier.bound_rules import (
    at_roofline_bound,
    memory_bound_with_headroom,
    onchip_bandwidth_saturated,
)
from perfagent.classifier.context import Rule, RuleContext, Skip
from perfagent.classifier.execution_rules import (
    host_overhead,
    latency_bound,
    no_dominant_limiter,
    warp_divergence,
)
from perfagent.classifier.launch_rules import (
    block_size_not_warp_multiple,
    low_occupancy,
    small_grid,
    tail_effect,
)
from perfagent.classifier.memory_rules import (
    atomic_contention,
    local_memory_spills,
    shared_bank_conflicts,
    uncoalesced_global_access,
    xcd_unaware_block_order,
)
from perfagent.classifier.sources import attach_source_lines
from perfagent.roofline import roofline
from profilers.model import Finding, KernelDiagnosis, Profile, SkippedRule

RULES: tuple[Rule, ...] = (
    uncoalesced_global_access,
    shared_bank_conflicts,
    local_memory_spills,
    atomic_contention,
    xcd_unaware_block_order,
    warp_divergence,
    small_grid,
    tail_effect,
    block_size_not_warp_multiple,
    low_occupancy,
    latency_bound,
    onchip_bandwidth_saturated,
    memory_bound_with_headroom,
    host_overhead,
    at_roofline_bound,
)

_SEVERITY_ORDER = {"high": 0, "medium": 1, "low": 2, "info": 3}
HARNESS_REASON = (
    "harness kernel: launched outside the workload's forward() (perfagent's NVTX range), e.g. to prepare "
    "inputs; not diagnosed or ranked"
)

SHALLOW_REASON = "not profiled in depth (durations only)"


def kernel_time(d: KernelDiagnosis) -> float | None:
    """Total time of a kernel over its profiled launches, s."""
    p = d.profile
    if p.total_duration_s is not None:
        return p.total_duration_s
    if p.metrics.duration_s is not None:
        return p.metrics.duration_s * p.invocations
    return None


def classify(profile: Profile, rules: tuple[Rule, ...] = RULES) -> list[KernelDiagnosis]:
    """Diagnose every kernel of ``profile``; kernels and findings come back in priority order."""
    # Timing-only profiles carry static (compiler) facts but no counters: the static rules apply.
    static = profile.mode in ("static", "timing-only")
    diagnoses: list[KernelDiagnosis] = []
    for kernel in profile.kernels:
        if kernel.harness:
            diagnoses.append(
                KernelDiagnosis(
                    name=kernel.name,
                    duration_s=kernel.metrics.duration_s,
                    skipped=[SkippedRule(rule="all rules", reason=HARNESS_REASON)],
                    profile=kernel,
                )
            )
            continue
        if kernel.tiers == ["duration"]:  # stage 1 only: listed with its time, never diagnosed
            diagnoses.append(
                KernelDiagnosis(
                    name=kernel.name,
                    duration_s=kernel.metrics.duration_s,
                    skipped=[SkippedRule(rule="all rules", reason=kernel.tier_reason or SHALLOW_REASON)],
                    profile=kernel,
                )
            )
            continue
        ctx = RuleContext(kernel=kernel, roofline=roofline(kernel), static=static)
        findings: list[Finding] = []
        skipped: list[SkippedRule] = []
        for rule in rules:
            result = rule(ctx)
            if isinstance(result, Skip):
                skipped.append(SkippedRule(rule=rule.__name__, reason=result.reason))
            elif result is not None:
                findings.append(result)
        if not findings:
            fallback = no_dominant_limiter(ctx)
            assert isinstance(fallback, Finding)
            findings.append(fallback)
        diagnoses.append(
            KernelDiagnosis(
                name=kernel.name,
                duration_s=kernel.metrics.duration_s,
                findings=findings,
                skipped=skipped,
                roofline=ctx.roofline,
                profile=kernel,
            )
        )
    return rank(diagnoses)


def rank(diagnoses: list[KernelDiagnosis]) -> list[KernelDiagnosis]:
    """Fill recoverable time and order findings within kernels and kernels within the profile.

    Harness kernels (``KernelProfile.harness``) take no part: they have no findings, no share of the total
    (which is the workload's time) and come after every workload kernel.
    """
    times = [kernel_time(d) for d in diagnoses]
    total = sum(t for d, t in zip(diagnoses, times, strict=True) if t and not d.profile.harness) or None
    ranked: list[KernelDiagnosis] = []
    harness: list[KernelDiagnosis] = []
    for d, t in zip(diagnoses, times, strict=True):
        if d.profile.harness:
            harness.append(
                d.model_copy(update={"findings": [], "share_of_total": None, "recoverable_s": None})
            )
            continue
        findings = []
        for f in d.findings:
            rec_s = rec_share = None
            if t is not None and f.estimated_speedup:
                rec_s = t * (1.0 - 1.0 / f.estimated_speedup)
                rec_share = rec_s / total if total else None
            findings.append(f.model_copy(update={"recoverable_s": rec_s, "recoverable_share": rec_share}))
        findings.sort(key=_finding_key)
        findings = attach_source_lines(findings, d.profile)
        best = max((f.recoverable_s for f in findings if f.recoverable_s is not None), default=None)
        ranked.append(
            d.model_copy(
                update={
                    "findings": findings,
                    "share_of_total": (t / total) if (t is not None and total) else None,
                    "recoverable_s": best,
                }
            )
        )
    ranked.sort(key=lambda d: (-(d.recoverable_s or 0.0), _severity_rank(d), -(kernel_time(d) or 0.0)))
    harness.sort(key=lambda d: -(kernel_time(d) or 0.0))
    return ranked + harness


# Below this estimated speed-up an actionable finding ranks after the "at its roof" statement.
WORTHWHILE_SPEEDUP = 1.05


def _finding_key(f: Finding) -> tuple[int, float, int]:
    # Worthwhile actionable findings first, then the "at its roof" statement, then marginal ones;
    # within each group by recoverable time, then severity.
    if f.severity == "info":
        group = 1
    elif f.estimated_speedup is not None and f.estimated_speedup < WORTHWHILE_SPEEDUP:
        group = 2
    else:
        group = 0
    return (group, -(f.recoverable_s or 0.0), _SEVERITY_ORDER[f.severity])


def _severity_rank(d: KernelDiagnosis) -> int:
    return min((_SEVERITY_ORDER[f.severity] for f in d.findings), default=4)
