"""What every classifier rule sees, and the small vocabulary rules return.

Rules are pure functions ``rule(ctx) -> Finding | Skip | None``: a ``Finding`` when the rule
fires, ``Skip`` when it cannot decide (a metric it needs is missing — the reason is shown to
the user), ``None`` when it looked and found nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from profilers.model import Evidence, Finding, KernelProfile, Metrics, Roofline, Severity

Rule = Callable[["RuleContext"], "Finding | Skip | None"]

# An estimate that would save less than this fraction of the kernel's time is not worth a high rank.
HIGH_SPEEDUP = 1.5
MEDIUM_SPEEDUP = 1.15


@dataclass(frozen=True)
class Skip:
    """The rule could not run; ``reason`` says why in plain words."""

    reason: str


@dataclass(frozen=True)
class RuleContext:
    """One kernel with its roofline, as the rules see it."""

    kernel: KernelProfile
    roofline: Roofline | None
    static: bool
    """True when the profile has no hardware counters (static analysis)."""

    @property
    def m(self) -> Metrics:
        """Shorthand for the kernel's canonical metrics."""
        return self.kernel.metrics

    @property
    def sm_frac(self) -> float | None:
        v = self.kernel.metrics.sm_throughput_pct
        return None if v is None else v / 100.0

    @property
    def mem_frac(self) -> float | None:
        v = self.kernel.metrics.memory_throughput_pct
        return None if v is None else v / 100.0

    @property
    def busiest_frac(self) -> float | None:
        """max(SM, memory) throughput as a fraction of peak: how close the kernel is to any roof."""
        vals = [v for v in (self.sm_frac, self.mem_frac) if v is not None]
        return max(vals) if vals else None

    @property
    def sol_cap(self) -> float | None:
        """Largest speed-up possible without moving fewer bytes or doing fewer FLOPs: 1 / fraction of SOL."""
        if self.roofline and self.roofline.fraction_of_sol:
            return 1.0 / self.roofline.fraction_of_sol
        return None

    def not_collected(self, tier: str) -> Skip | None:
        """Skip saying ``tier`` (staged profiling: 'A', 'B') was not collected for this kernel, or None
        when it was. A kernel without a staged record (``KernelProfile.tiers`` empty) holds every tier."""
        tiers = self.kernel.tiers
        if not tiers or tier in tiers:
            return None
        why = f" ({self.kernel.tier_reason})" if self.kernel.tier_reason else ""
        return Skip(f"not collected: tier {tier} was not profiled for this kernel{why}")

    def missing(self, *fields: str) -> Skip | None:
        """Skip naming the metrics (fields of Metrics) that are None, or None when all are present."""
        absent = [f for f in fields if getattr(self.kernel.metrics, f) is None]
        if not absent:
            return None
        if self.static:
            return Skip("needs hardware counters; static analysis has none")
        return Skip(f"metric(s) not in this profile: {', '.join(absent)}")


def cap(speedup: float, *limits: float | None) -> float:
    """``speedup`` limited by every known bound, never below 1."""
    for limit in limits:
        if limit is not None:
            speedup = min(speedup, limit)
    return max(speedup, 1.0)


def severity_for(speedup: float | None) -> Severity:
    if speedup is None:
        return "medium"
    if speedup >= HIGH_SPEEDUP:
        return "high"
    if speedup >= MEDIUM_SPEEDUP:
        return "medium"
    return "low"


def tool_rules(ctx: RuleContext, ids: Sequence[str]) -> list[str]:
    """The profiler's own rules among ``ids`` that reported something for this kernel."""
    seen = {t.rule_id for t in ctx.kernel.tool_findings}
    return [i for i in ids if i in seen]


def finding(
    ctx: RuleContext,
    *,
    rule: str,
    category: str,
    title: str,
    explanation: str,
    evidence: list[Evidence],
    transforms: list[str],
    speedup: float | None,
    formula: str | None,
    severity: Severity | None = None,
    ncu_rules: Sequence[str] = (),
) -> Finding:
    """Assemble a Finding (ranking fields are filled by the ranker)."""
    return Finding(
        category=category,
        severity=severity or severity_for(speedup),
        title=title,
        explanation=explanation,
        evidence=evidence,
        estimated_speedup=round(speedup, 3) if speedup is not None else None,
        speedup_formula=formula,
        transforms=transforms,
        rule=rule,
        tool_rules=tool_rules(ctx, ncu_rules),
    )


def pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.0f} %" if v >= 10 else f"{v:.1f} %"
