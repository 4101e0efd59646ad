"""The accept rule: a candidate is kept when it is correct and faster beyond noise; its metric says how it won.

``decide`` applies, in order (the first failing step is the reason):

1. it builds (nvcc without a GPU; NVRTC inside verification on one);
2. it was verified — a launch-spec kernel without a GPU is "not verified (no GPU)";
3. the verifier's verdict is ``pass`` (``fail`` → "incorrect: <the verifier's reason>", ``inconclusive``
   → rejected too: a reference that cannot tell right from wrong proves nothing);
4. it was timed — without a GPU: ``NOT_TIMED`` ("correct but not timed (no GPU): speed-up not
   measured"); a speed-up is never claimed without a measurement;
5. the timing is plausible (no time below the speed of light, no bandwidth/FLOP rate above peak, no
   speed-up above 10x) — flagged results wait for a human;
6. it is faster beyond the noise threshold of ``perfagent.timing`` (significant, verdict 'faster') and,
   when an earlier candidate was accepted, faster than that one by more than the noise threshold;
7. the route (``Decision.route``), which no longer rejects: when the workload could be re-profiled, the
   transform's targeted metric (``ExpectedEffect``: the one naming the finding's category, else the
   primary, else the first expected effect both profiles measured) is compared.

   - it moved the right way by more than ``METRIC_MIN_CHANGE`` → ``route="targeted"``;
   - it did not move, or moved the wrong way → ``route="another"``, "won by another route: <metric>
     unmoved (<before> -> <after>); improved: kernel time <x> faster, <the finding's evidence that
     moved>". The kernel time is the bottleneck evidence every finding shares and step 6 already proved
     it beyond noise; the profile metrics that improved (the profiler's duration, DRAM throughput %, the
     category's ``evidence`` in taxonomy.toml) are named beside it. The metric is a proxy for the
     transform's mechanism: an engineer keeps a correct kernel that is significantly faster, and the
     reason says that the proxy did not confirm the mechanism (a GEMV 1.67x faster after a launch
     change that left ``launch.waves_per_sm`` where it was; a shuffle reduction 1.93x faster);
   - it could not be compared (no ncu, counters denied, the metric missing) → ``route="unchecked"``,
     and the reason says the metric was not checked, and why.

``metric-unmoved`` stays a verdict so that records written before this rule still load; ``decide`` no
longer returns it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from knowledge.taxonomy import categories
from knowledge.transforms import ExpectedEffect, Transform, metric_value
from perfagent.optimize.measure import BuildOutcome, Timing
from perfagent.records import (
    NOT_TIMED,
    AcceptRoute,
    CandidateVerdict,
    CheckRecord,
    VerificationSummary,
)
from profilers.model import KernelProfile

METRIC_MIN_CHANGE = 0.01
"""Smallest relative move of the targeted metric that counts (1 %)."""

SHARED_EVIDENCE = (
    ExpectedEffect(metric="metrics.duration_s", direction="down", text="the profiler's kernel time"),
    ExpectedEffect(metric="metrics.dram_throughput_pct", direction="up", text="DRAM bandwidth used"),
)
"""Profile evidence of a win whatever the finding: the kernel time under ncu, and DRAM throughput %
(most kernels the loop sees are memory-bound). The category's own ``evidence`` follows them."""


@dataclass
class MetricCheck:
    """The targeted metric before and after, and whether it moved the right way."""

    metric: str
    direction: str
    before: float | None = None
    after: float | None = None
    moved: bool | None = None
    """None: not measured on both sides."""
    note: str | None = None
    """Why it was not measured (no GPU, ncu unavailable, counters denied, metric missing)."""
    improved: list[str] = field(default_factory=list)
    """Other bottleneck evidence that moved the right way between the profiles ('metric before -> after'):
    what a faster candidate won through when the targeted metric did not move."""


def check_metric(
    transform: Transform,
    before: KernelProfile | None,
    after: KernelProfile | None,
    *,
    unavailable: str | None = None,
    category: str | None = None,
) -> MetricCheck:
    """Compare the transform's expected effects between two profiles of the kernel.

    The effect for the targeted finding's ``category`` decides (the primary effect when none names
    it); when a profile lacks it, the first effect both profiles measured decides (said in ``note``).
    """
    primary = transform.effect_for(category)
    if before is None or after is None:
        why = unavailable or (
            "the original was not profiled" if before is None else "the candidate was not profiled"
        )
        return MetricCheck(primary.metric, primary.direction, note=why)
    chosen: ExpectedEffect | None = None
    for effect in [primary, *transform.expected_effect]:
        if metric_value(before, effect.metric) is not None and metric_value(after, effect.metric) is not None:
            chosen = effect
            break
    if chosen is None:
        return MetricCheck(
            primary.metric,
            primary.direction,
            metric_value(before, primary.metric),
            metric_value(after, primary.metric),
            note=f"{primary.metric} was not measured in both profiles",
        )
    b, a = metric_value(before, chosen.metric), metric_value(after, chosen.metric)
    note = None if chosen is primary else f"{primary.metric} not measured; checked {chosen.metric} instead"
    improved = bottleneck_evidence(before, after, category, exclude=chosen.metric)
    return MetricCheck(
        chosen.metric,
        chosen.direction,
        b,
        a,
        chosen.moved(b, a, min_change=METRIC_MIN_CHANGE),
        note,
        improved,
    )


def bottleneck_evidence(
    before: KernelProfile, after: KernelProfile, category: str | None, *, exclude: str = ""
) -> list[str]:
    """The shared and the category's evidence metrics that moved the right way by > ``METRIC_MIN_CHANGE``.

    Each as 'metric before -> after'; metrics missing on either side are left out (not measured is
    not evidence), and so is ``exclude`` (the targeted metric, reported on its own).
    """
    cat = categories().get(category) if category else None
    effects = [*SHARED_EVIDENCE, *(cat.evidence if cat else [])]
    out: list[str] = []
    seen = {exclude}
    for effect in effects:
        if effect.metric in seen:
            continue
        seen.add(effect.metric)
        b, a = metric_value(before, effect.metric), metric_value(after, effect.metric)
        if effect.moved(b, a, min_change=METRIC_MIN_CHANGE):
            out.append(f"{effect.metric} {_fmt(b)} -> {_fmt(a)}")
    return out


@dataclass
class Decision:
    """The verdict, whether to keep the candidate, the one-line reason and the checks behind it."""

    verdict: CandidateVerdict
    accepted: bool
    reason: str
    checks: list[CheckRecord] = field(default_factory=list)
    route: AcceptRoute | None = None
    """How an accepted candidate won (step 7 of the module docstring); None when rejected."""
    improved: list[str] = field(default_factory=list)
    """What improved besides the targeted metric (route 'another': the kernel time first)."""


def beats_best(timing: Timing, best_speedup: float | None) -> bool:
    """Faster than the best accepted candidate so far by more than the noise threshold (True when none)."""
    if best_speedup is None or timing.speedup is None:
        return True
    return timing.speedup > best_speedup * (1.0 + (timing.noise_threshold or 0.0))


EXCESSIVE = "excessive-speedup"


def hard_flags(timing: Timing) -> list[str]:
    """Plausibility flags that reject a timing: faster than the speed of light, above a peak, work
    escaping the timed interval. A >10x speed-up of a verified kernel is possible (a bad config fixed)
    but rare: it is kept, flagged for a human look."""
    return [f for f in timing.implausible if f != EXCESSIVE]


def would_accept(timing: Timing, best_speedup: float | None) -> bool:
    """The accept rule's timing steps pass for ``timing`` against the best so far: a correct candidate
    with this timing is accepted (the targeted-metric step only says how it won, ``_route``)."""
    return (
        timing.error is None
        and timing.speedup is not None
        and not hard_flags(timing)
        and timing.significant
        and timing.verdict == "faster"
        and beats_best(timing, best_speedup)
    )


def _fmt(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.4g}"


def decide(
    *,
    build: BuildOutcome,
    verification: VerificationSummary,
    timing: Timing | None,
    metric: MetricCheck | None,
    best_speedup: float | None = None,
    best_id: str | None = None,
) -> Decision:
    """Apply the accept rule (module docstring) to what was measured.

    Args:
        build: the build check.
        verification: the verifier's verdict ('not-verified' when it could not run here).
        timing: the measurement (None: no GPU; ``error`` set: timing failed).
        metric: the targeted-metric comparison (None: not reached).
        best_speedup: speed-up (against the same baseline) of the best accepted candidate so far.
        best_id: its id, for the reason.
    """
    checks: list[CheckRecord] = []
    if build.ok is False:
        checks.append(CheckRecord(name="build", passed=False, detail=build.detail))
        return Decision("build-failed", False, f"build failed: {build.detail}", checks)
    checks.append(
        CheckRecord(
            name="build", passed=True, detail=build.detail, severity="error" if build.ok else "skipped"
        )
    )
    if verification.verdict == "not-verified":
        checks.append(
            CheckRecord(name="correctness", passed=False, detail=verification.reason, severity="skipped")
        )
        return Decision("not-verified", False, f"{verification.reason}; speed-up not measured", checks)
    checks.append(
        CheckRecord(name="correctness", passed=verification.verdict == "pass", detail=verification.reason)
    )
    if verification.verdict == "fail":
        return Decision("incorrect", False, f"incorrect: {verification.reason}", checks)
    if verification.verdict == "inconclusive":
        return Decision("inconclusive", False, f"verification inconclusive: {verification.reason}", checks)
    if timing is None:
        checks.append(
            CheckRecord(name="speed-up", passed=False, detail="no GPU: not timed", severity="skipped")
        )
        return Decision("not-timed", False, NOT_TIMED, checks)
    if timing.error is not None or timing.speedup is None:
        detail = timing.error or "no comparison came back"
        checks.append(CheckRecord(name="speed-up", passed=False, detail=detail))
        return Decision("error", False, f"correct, but timing failed: {detail}", checks)
    return _judge_speed(timing, metric, best_speedup, best_id, checks)


def _judge_speed(
    timing: Timing,
    metric: MetricCheck | None,
    best_speedup: float | None,
    best_id: str | None,
    checks: list[CheckRecord],
) -> Decision:
    """Steps 5-7 for a correct, timed candidate: plausible, faster beyond noise, faster than the best."""
    noise = timing.noise_threshold or 0.0
    ctx = f"noise threshold {noise * 100:.1f} %, {timing.timer or 'timer unknown'}"
    speed = f"{timing.speedup:.3g}x"
    hard = hard_flags(timing)
    review = (
        f" — FLAGGED FOR REVIEW: {speed} exceeds the 10x plausibility bound"
        if EXCESSIVE in timing.implausible
        else ""
    )
    if hard:
        flags = ", ".join(hard)
        checks.append(CheckRecord(name="plausibility", passed=False, detail=f"{flags} at {speed}"))
        return Decision(
            "implausible",
            False,
            f"correct, but the timing is implausible ({flags}) at {speed}: needs a human look",
            checks,
        )
    if review:
        checks.append(
            CheckRecord(name="plausibility", passed=True, detail=review.strip(" —"), severity="warning")
        )
    if not timing.significant or timing.verdict != "faster":
        what = "slower" if timing.verdict == "slower" else "not faster beyond noise"
        checks.append(CheckRecord(name="speed-up", passed=False, detail=f"{speed} ({ctx})"))
        return Decision("not-faster", False, f"correct, but {what}: {speed} ({ctx})", checks)
    if not beats_best(timing, best_speedup):
        assert best_speedup is not None
        best = f"the best so far ({best_id + ', ' if best_id else ''}{best_speedup:.3g}x)"
        checks.append(CheckRecord(name="speed-up", passed=False, detail=f"{speed} ({ctx}); {best}"))
        return Decision(
            "not-faster",
            False,
            f"correct and {speed} faster than the original, but not faster than {best} beyond noise ({ctx})",
            checks,
        )
    checks.append(CheckRecord(name="speed-up", passed=True, detail=f"{speed} ({ctx})"))
    return _route(metric, timing, f"correct, {speed} faster ({ctx})", review, checks)


def _route(
    metric: MetricCheck | None, timing: Timing, head: str, review: str, checks: list[CheckRecord]
) -> Decision:
    """Step 7: accept a correct, significantly faster candidate and say how it won."""
    if metric is None or metric.moved is None:
        why = (metric.note if metric else None) or "not re-profiled"
        checks.append(
            CheckRecord(name="targeted-metric", passed=True, detail=f"not checked: {why}", severity="skipped")
        )
        name = metric.metric if metric else "the targeted metric"
        return Decision(
            "accepted", True, f"{head}; {name} not checked: {why}{review}", checks, route="unchecked"
        )
    values = f"{_fmt(metric.before)} -> {_fmt(metric.after)}"
    moved = f"{metric.metric} {values} (expected {metric.direction})"
    if metric.note:
        moved += f"; {metric.note}"
    if metric.moved:
        checks.append(CheckRecord(name="targeted-metric", passed=True, detail=moved))
        return Decision("accepted", True, f"{head}, {moved}{review}", checks, route="targeted")
    # The metric is a proxy for the transform's mechanism; the time is what the user wants. A correct
    # kernel faster beyond noise is kept, and the record says the proxy did not confirm why.
    how = "moved the wrong way" if _moved_back(metric) else "unmoved"
    improved = [f"kernel time {timing.speedup:.3g}x faster ({timing.timer or 'timer unknown'})"]
    improved += metric.improved
    checks.append(CheckRecord(name="targeted-metric", passed=False, detail=moved, severity="warning"))
    checks.append(CheckRecord(name="bottleneck-evidence", passed=True, detail="; ".join(improved)))
    note = f"; {metric.note}" if metric.note else ""
    reason = (
        f"{head}; won by another route: {metric.metric} {how} ({values}, expected {metric.direction}{note}); "
        f"improved: {', '.join(improved)} — the targeted metric did not confirm the transform's mechanism"
    )
    return Decision("accepted", True, reason + review, checks, route="another", improved=improved)


def _moved_back(metric: MetricCheck) -> bool:
    """The targeted metric moved against its expected direction by more than ``METRIC_MIN_CHANGE``."""
    back = ExpectedEffect(metric=metric.metric, direction="up" if metric.direction == "down" else "down")
    return bool(back.moved(metric.before, metric.after, min_change=METRIC_MIN_CHANGE))
