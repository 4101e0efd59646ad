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
   deterministic recipe's precondition holds on the source (the others are kept, skipped, with the
   recipe's reason).

A diagnosis transform whose indicators were all measured and none holds is skipped with that reason;
a kernel whose only findings are "at its bound" (severity info) gets no busywork, unless the bound is
a pipe its data does not need (the fp64 pipe of a float/half/bf16 kernel: ``promoted_bound``), which
makes that finding actionable. Every pair is then
asked of the rewriter (``Rewriter.applies``): a pair it cannot do is kept in the plan as skipped, with
its reason, so the report shows what was considered.

Order (``_order``): structural fixes first, finding by finding. Pairs are grouped by their finding in
rank order (the top finding's pairs first, whatever tier they came from; pairs without a finding
last), and inside an actionable finding's group its *structural fixes* go before everything else:
``kind = "structural"`` transforms the finding names, or whose measured indicator is one of the
finding's own evidence metrics (taxonomy ``evidence``) — cooperative-row on an uncoalesced GEMV,
through ``global_load_bytes_per_sector``. A runnable structural fix attached to a lower finding that
also fixes a higher one (its catalog ``fixes``) moves up into the higher group, after that group's own
fixes: cooperative-row on a one-block row-per-thread softmax cures the small grid too. A ``__restrict__``
or block-size nudge is not tried while a structural fix for the same finding is queued (the nudge won
1.67x on the GEMV, the fix 12.7x).
Without a measurement (tier ``recipe``) every structural transform whose recipe applies goes first.
Each pair carries ``why``: the reason for its place, saved with the rewriter's verdict
(``PlanStep.reason``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from knowledge.taxonomy import categories
from knowledge.transforms import MetricCondition, Transform, catalog
from perfagent.optimize.promoted_bound import unblock
from perfagent.records import PlanOrigin, PlanStep
from perfagent.rewrite.base import Rewriter, RewriteRequest
from profilers.core_errors import BadInput
from profilers.model import Finding, KernelDiagnosis

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
    why: str = ""
    """Why it is in the plan, and at this place (the origin in words; structural fix or nudge)."""

    def record(self, *, tried: bool = False, tried_note: str = "", unreached: str = "") -> PlanStep:
        """The saved form; ``reason`` says why it was tried or not.

        Args:
            tried: the loop asked the rewriter for it.
            tried_note: what the try did (e.g. 'c1 rewrites lines 9-13').
            unreached: why a runnable step was never asked for (budget spent, dropped by a re-plan).
        """
        if self.skipped is not None:
            outcome = f"not tried: {self.skipped}"
        elif tried:
            outcome = "tried: precondition met" + (f"; {tried_note}" if tried_note else "")
        else:
            outcome = f"not reached: {unreached or 'the loop ended first'}"
        return PlanStep(
            transform=self.transform.id,
            finding=self.finding.category if self.finding else None,
            finding_title=self.finding.title if self.finding else None,
            origin=self.origin,
            kind=self.transform.kind,
            indicators=list(self.indicators),
            skipped=self.skipped,
            tried=tried,
            reason=f"{self.why}; {outcome}" if self.why else outcome,
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
    if transforms:
        return _ask(_requested(transforms, kernel, findings), rewriter, request_for)
    if measured:  # "at its bound" on the fp64 pipe of a float kernel is a promotion, not a bound
        findings = unblock(findings, kernel, request_for)
    actionable = [f for f in findings if f.severity != "info"]
    at_bound = measured and bool(findings) and not actionable
    out = _diagnosis_steps(findings, kernel, measured)
    if kernel is not None and measured and actionable:
        out += _catalog_steps(actionable, kernel)
        out += _indicated_steps(actionable, kernel)
    if not measured and not at_bound and recipe_check is not None:
        out += _recipe_steps(actionable, recipe_check, request_for)
    steps = _ask(_dedupe(out), rewriter, request_for)
    return _order(steps, findings, kernel)


def _requested(
    transforms: Sequence[str], kernel: KernelDiagnosis | None, findings: list[Finding]
) -> list[PlannedTransform]:
    entries = catalog()
    out = []
    for tid in transforms:
        if tid not in entries:
            raise BadInput(f"unknown transform '{tid}'", hint="known: " + ", ".join(sorted(entries)))
        entry = entries[tid]
        holding, _ = indicator_state(entry, kernel)
        attach = _finding_for(entry, findings)
        out.append(
            PlannedTransform(entry, attach, "requested", tuple(holding), why="requested (--transform)")
        )
    return out


def _diagnosis_steps(
    findings: list[Finding], kernel: KernelDiagnosis | None, measured: bool
) -> list[PlannedTransform]:
    """Tier ``diagnosis`` (each finding's own transforms), and ``headroom`` for a DRAM kernel at its bound."""
    entries = catalog()
    out: list[PlannedTransform] = []
    for f in findings:
        headroom = measured and f.severity == "info" and _dram_headroom(f, kernel)
        for tid in f.transforms:
            entry = entries.get(tid)
            if entry is None:
                continue
            holding, all_measured = indicator_state(entry, kernel)
            skipped = None
            origin: PlanOrigin = "diagnosis"
            why = f"the {f.category} finding names it"
            if headroom and entry.recipes:
                origin, why = "headroom", _HEADROOM_WHY.format(cat=f.category)
            elif measured and f.severity == "info":
                skipped = f"the kernel is at its bound ({f.title}): little headroom, no busywork"
            elif measured and all_measured and not holding and not _targets(entry, f.category):
                skipped = "its measured indicators do not hold: " + "; ".join(
                    c.describe() for c in entry.applies_when
                )
            out.append(PlannedTransform(entry, f, origin, tuple(holding), skipped, why))
    for f in findings:
        if measured and f.severity == "info" and _dram_headroom(f, kernel):
            why = _HEADROOM_WHY.format(cat=f.category)
            out.extend(
                PlannedTransform(entry, f, "headroom", (), why=why)
                for entry in entries.values()
                if f.category in entry.fixes and entry.recipes
            )
    return out


_HEADROOM_WHY = f"{{cat}} at its bound but below {PRACTICAL_DRAM_PCT:g} % of DRAM peak: cheap tuning"


def _catalog_steps(findings: list[Finding], kernel: KernelDiagnosis) -> list[PlannedTransform]:
    """Tier ``catalog``: transforms that fix a finding's category and whose indicators hold.

    A transform is attached to the first finding whose own evidence its indicator measures, else to the
    first finding it fixes (cooperative-row on a GEMV goes with the coalescing finding, not the small grid).
    """
    out = []
    for on_evidence in (True, False):
        for f in findings:
            for entry in catalog().values():
                held = entry.applicable(kernel.profile)
                if f.category not in entry.fixes or not held:
                    continue
                if on_evidence and not _on_evidence(held, f.category):
                    continue
                why = f"fixes {f.category}; indicator holds: {held[0].describe()}"
                out.append(PlannedTransform(entry, f, "catalog", tuple(c.describe() for c in held), why=why))
    return out


def _indicated_steps(findings: list[Finding], kernel: KernelDiagnosis) -> list[PlannedTransform]:
    """Tier ``indicated``: any other transform whose indicators hold."""
    out = []
    for entry in catalog().values():
        held = entry.applicable(kernel.profile)
        if held:
            why = f"indicator holds: {held[0].describe()}"
            attach = _finding_for(entry, findings)
            out.append(
                PlannedTransform(entry, attach, "indicated", tuple(c.describe() for c in held), why=why)
            )
    return out


def _recipe_steps(
    findings: list[Finding], recipe_check: Rewriter, request_for: RequestFor
) -> list[PlannedTransform]:
    """Tier ``recipe`` (nothing measured): every transform a recipe implements, runnable where the
    recipe's precondition holds on the source; the others stay in the plan with the recipe's reason
    (which names the line), so the record says why each was or was not tried."""
    out = []
    for entry in catalog().values():
        if not entry.recipes:
            continue
        attach = _finding_for(entry, findings)
        why_not = recipe_check.applies(request_for(entry.id, attach))
        if why_not is None:
            why = "nothing measured: its recipe's precondition holds on the source"
            out.append(PlannedTransform(entry, attach, "recipe", (), why=why))
        else:
            why = "nothing measured: planned where its recipe's precondition holds"
            skipped = f"{recipe_check.name}: {why_not}"
            out.append(PlannedTransform(entry, attach, "recipe", (), skipped, why))
    return out


def _on_evidence(held: Sequence[MetricCondition], category: str) -> bool:
    """One of the holding indicators measures the category's own evidence (taxonomy ``evidence``)."""
    cat = categories().get(category)
    metrics = {e.metric for e in cat.evidence} if cat else set()
    return any(c.metric in metrics for c in held)


def _is_fix(step: PlannedTransform, kernel: KernelDiagnosis | None) -> bool:
    """A structural transform that is the step's finding's own fix: named by it, or indicated by its evidence."""
    if step.transform.kind != "structural":
        return False
    if step.finding is None or step.origin in ("diagnosis", "recipe"):
        return True
    held = step.transform.applicable(kernel.profile) if kernel is not None else []
    return _on_evidence(held, step.finding.category)


def _order(
    steps: list[PlannedTransform], findings: list[Finding], kernel: KernelDiagnosis | None
) -> list[PlannedTransform]:
    """Group by finding rank, structural fixes before nudges inside each group (module docstring)."""
    rank = {id(f): i for i, f in enumerate(findings)}
    placed = []
    for step in steps:
        group = rank.get(id(step.finding), len(findings))
        # an "at its bound" finding gets tuning only (headroom): its order is the tier order
        info = step.finding is not None and step.finding.severity == "info"
        fix = not info and _is_fix(step, kernel)
        where = step.finding.category if step.finding else "the kernel"
        sub = 0 if fix or info else 2
        higher = _higher_finding_fixed(step, findings, group) if fix and step.skipped is None else None
        if higher is not None:
            group, sub = rank[id(higher)], 1
        if info or step.skipped is not None:  # its place says nothing: it is not tried
            place = ""
        elif higher is not None:
            place = (
                f"structural fix for {where} that also fixes {higher.category} (ranked higher): "
                f"before {higher.category}'s nudges"
            )
        elif fix:
            place = f"structural fix for {where}: before its nudges"
        elif step.transform.kind == "tuning":
            place = f"tuning nudge: after the structural fixes for {where}"
        else:
            place = f"structural, not indicated by {where}'s evidence: after its fixes"
        why = f"{step.why}; {place}" if place and step.why else step.why or place
        placed.append(((group, sub), replace(step, why=why)))
    placed.sort(key=lambda item: item[0])  # stable: tier order inside each (group, kind)
    return [step for _, step in placed]


def _higher_finding_fixed(step: PlannedTransform, findings: list[Finding], group: int) -> Finding | None:
    """The highest-ranked actionable finding above ``group`` that the structural ``step`` also fixes.

    A transform is attached to the finding whose evidence it measures (cooperative-row to the coalescing
    finding of a row-per-thread softmax), but it may cure a finding ranked above it as well (the same
    rewrite gives the one-block grid 32x the threads). Without this, that finding's block-size nudges
    ran first and spent the iteration budget (KernelBench softmax, matvec and L2 norm on an H200).
    """
    for f in findings[:group]:
        if f.severity != "info" and f.category in step.transform.fixes:
            return f
    return None


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
