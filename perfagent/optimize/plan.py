"""The planner: a diagnosis and the transform catalog in, ranked (finding, transform) pairs out.

Tiers, in order (a transform appears once, at its first tier):

1. ``requested`` — transforms named by the caller (``--transform``); nothing else is planned then.
2. ``diagnosis`` — each finding's own transforms, findings in rank order (recoverable time).
   ``headroom`` — a kernel "at its bound" on DRAM but still below the practical ceiling
   (``PRACTICAL_DRAM_PCT``) gets the cheap tuning transforms a recipe can do (its finding's own, and
   the catalog's for its category): launch geometry and vector width, nothing structural.
3. ``catalog`` — catalog transforms that fix the finding's category and whose measured indicators
   (``applies_when``) hold on the kernel (``Transform.applicable``).
4. ``indicated`` — any other transform whose indicators hold.
5. ``recipe`` — only without a measured profile (no GPU, static analysis): transforms whose
   deterministic recipe's precondition holds on the source.

A diagnosis transform whose indicators were all measured and none holds is skipped with that reason;
a kernel whose only findings are "at its bound" (severity info) gets no busywork. Every pair is then
asked of the rewriter (``Rewriter.applies``): a pair it cannot do is kept in the plan as skipped, with
its reason, so the report shows what was considered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from knowledge.transforms import Transform, catalog
from perfagent.errors import BadInput
from perfagent.models import Finding, KernelDiagnosis
from perfagent.optimize.record import PlanOrigin, PlanStep
from perfagent.rewrite.base import Rewriter, RewriteRequest

PRACTICAL_DRAM_PCT = 88.0
"""DRAM throughput (% of peak) a well-tuned streaming kernel reaches: 86.7-88.8 % of the datasheet
peak on an H200 (float4, one vector per thread; torch's own copy 86.9 %), measured with
scripts/gpu_dram_ceiling.py (BENCHMARKS.md). Below it, "at its bound" still leaves tuning headroom."""

RequestFor = Callable[[str, Finding | None], RewriteRequest]
"""Builds the rewrite request for (transform id, finding) on the current source."""


@dataclass(frozen=True)
class PlannedTransform:
    """One ranked pair, ready for the rewriter (or skipped, with the reason)."""

    transform: Transform
    finding: Finding | None
    origin: PlanOrigin
    indicators: tuple[str, ...] = ()
    skipped: str | None = None

    def record(self, *, tried: bool = False) -> PlanStep:
        """The saved form."""
        return PlanStep(
            transform=self.transform.id,
            finding=self.finding.category if self.finding else None,
            finding_title=self.finding.title if self.finding else None,
            origin=self.origin,
            indicators=list(self.indicators),
            skipped=self.skipped,
            tried=tried,
        )


def indicator_state(entry: Transform, kernel: KernelDiagnosis | None) -> tuple[list[str], bool]:
    """(conditions that hold, in words; True when every condition was measured)."""
    if kernel is None:
        return [], False
    results = [(c, c.evaluate(kernel.profile)) for c in entry.applies_when]
    holding = [c.describe() for c, ok in results if ok]
    return holding, all(ok is not None for _, ok in results)


def make_plan(
    kernel: KernelDiagnosis | None,
    *,
    rewriter: Rewriter,
    request_for: RequestFor,
    transforms: Sequence[str] = (),
    finding: str | None = None,
    measured: bool,
    recipe_check: Rewriter | None = None,
) -> list[PlannedTransform]:
    """Ranked (finding, transform) pairs for ``kernel``.

    Args:
        kernel: the targeted kernel's diagnosis (None: nothing was profiled).
        rewriter: the backend that will propose (its ``applies`` filters the plan).
        request_for: builds the request ``applies`` is asked about.
        transforms: explicit transform ids (tier ``requested``; nothing else is planned).
        finding: restrict to findings of this category.
        measured: the diagnosis comes from hardware counters (False: static, timing-only or none).
        recipe_check: the recipes backend, for tier ``recipe`` (unmeasured runs only).

    Raises:
        BadInput: an unknown transform id, or a finding category the diagnosis does not hold.
    """
    entries = catalog()
    findings = list(kernel.findings) if kernel is not None else []
    if finding is not None:
        findings = [f for f in findings if f.category == finding]
        if kernel is not None and not findings and not transforms:
            raise BadInput(
                f"the diagnosis has no '{finding}' finding",
                hint="choose one of: " + ", ".join(sorted({f.category for f in kernel.findings}))
                if kernel.findings
                else "",
            )
    out: list[PlannedTransform] = []
    if transforms:
        for tid in transforms:
            if tid not in entries:
                raise BadInput(f"unknown transform '{tid}'", hint="known: " + ", ".join(sorted(entries)))
            entry = entries[tid]
            holding, _ = indicator_state(entry, kernel)
            out.append(PlannedTransform(entry, _finding_for(entry, findings), "requested", tuple(holding)))
        return _ask(out, rewriter, request_for)

    actionable = [f for f in findings if f.severity != "info"]
    at_bound = measured and bool(findings) and not actionable
    for f in findings:
        for tid in f.transforms:
            found = entries.get(tid)
            if found is None:
                continue
            entry = found
            holding, all_measured = indicator_state(entry, kernel)
            skipped = None
            origin: PlanOrigin = "diagnosis"
            if measured and f.severity == "info" and _dram_headroom(f, kernel) and entry.recipes:
                origin = "headroom"
            elif measured and f.severity == "info":
                skipped = f"the kernel is at its bound ({f.title}): little headroom, no busywork"
            elif measured and all_measured and not holding and not _targets(entry, f.category):
                skipped = "its measured indicators do not hold: " + "; ".join(
                    c.describe() for c in entry.applies_when
                )
            out.append(PlannedTransform(entry, f, origin, tuple(holding), skipped))
    for f in findings:
        if measured and f.severity == "info" and _dram_headroom(f, kernel):
            out.extend(
                PlannedTransform(entry, f, "headroom", ())
                for entry in entries.values()
                if f.category in entry.fixes and entry.recipes
            )
    if kernel is not None and measured and actionable:
        for f in actionable:
            for entry in entries.values():
                holding, _ = indicator_state(entry, kernel)
                if f.category in entry.fixes and holding:
                    out.append(PlannedTransform(entry, f, "catalog", tuple(holding)))
        for entry in entries.values():
            holding, _ = indicator_state(entry, kernel)
            if holding:
                out.append(
                    PlannedTransform(entry, _finding_for(entry, actionable), "indicated", tuple(holding))
                )
    if not measured and not at_bound and recipe_check is not None:
        for entry in entries.values():
            if not entry.recipes:
                continue
            attach = _finding_for(entry, actionable)
            if recipe_check.applies(request_for(entry.id, attach)) is None:
                out.append(PlannedTransform(entry, attach, "recipe", ()))
    return _ask(_dedupe(out), rewriter, request_for)


def _targets(entry: Transform, category: str) -> bool:
    """The entry names an effect for ``category``: its general indicators (``applies_when``) are about
    other categories and do not veto it (launch-config's are about occupancy, not DRAM bytes in flight)."""
    return any(category in effect.categories for effect in entry.expected_effect)


def _dram_headroom(f: Finding, kernel: KernelDiagnosis | None) -> bool:
    """An "at its bound" DRAM finding on a kernel still below the practical DRAM ceiling."""
    if f.category != "dram-bandwidth" or kernel is None:
        return False
    pct = kernel.profile.metrics.dram_throughput_pct
    return pct is not None and pct < PRACTICAL_DRAM_PCT


def _finding_for(entry: Transform, findings: Sequence[Finding]) -> Finding | None:
    for f in findings:
        if entry.id in f.transforms:
            return f
    for f in findings:
        if f.category in entry.fixes:
            return f
    return None


def _dedupe(steps: list[PlannedTransform]) -> list[PlannedTransform]:
    seen: set[str] = set()
    out = []
    for step in steps:
        if step.transform.id not in seen:
            seen.add(step.transform.id)
            out.append(step)
    return out


def _ask(
    steps: list[PlannedTransform], rewriter: Rewriter, request_for: RequestFor
) -> list[PlannedTransform]:
    out = []
    for step in steps:
        if step.skipped is None:
            why = rewriter.applies(request_for(step.transform.id, step.finding))
            if why is not None:
                step = replace(step, skipped=f"{rewriter.name}: {why}")
        out.append(step)
    return out


def runnable(steps: Sequence[PlannedTransform]) -> list[PlannedTransform]:
    """The steps that were not skipped, in order."""
    return [s for s in steps if s.skipped is None]
