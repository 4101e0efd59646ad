"""Two suite results side by side: per entry, time, speed-up, correctness and roofline, with each
entry's own measured noise threshold (from its bench) deciding what counts as a change."""

from __future__ import annotations

from pydantic import Field

from perfagent.compare import PROFILE_NOISE_PCT, GateInput
from perfagent.suite.models import EntryResult, SuiteSummary
from profilers.model import Frozen


class EntryDelta(Frozen):
    """One entry present in both suite results."""

    name: str
    before_s: float | None
    """The entry's time before: the candidate's median when it has one, else the target's, s."""
    after_s: float | None
    change_pct: float | None
    """Time change, % (negative: faster)."""
    noise_pct: float
    """The larger of the two runs' measured noise thresholds, % (profile default when unmeasured)."""
    verdict: str
    """'faster', 'slower', 'same (within noise)', 'unknown', 'broke' (correct → not), 'fixed', or
    'not comparable (FLAGS)' when either side's timing is flagged unreliable."""
    correct_before: bool | None = None
    correct_after: bool | None = None
    speedup_before: float | None = None
    speedup_after: float | None = None


class SuiteComparison(Frozen):
    """Per-entry deltas of two suite runs and their summaries' headline figures."""

    before: str
    after: str
    entries: list[EntryDelta] = Field(default_factory=list)
    only_before: list[str] = Field(default_factory=list)
    only_after: list[str] = Field(default_factory=list)
    geomean_before: float | None = None
    geomean_after: float | None = None
    fast_p_before: dict[str, float] = Field(default_factory=dict)
    fast_p_after: dict[str, float] = Field(default_factory=dict)


def _time(r: EntryResult) -> float | None:
    return r.candidate_s if r.candidate_s is not None else r.baseline_s


UNRELIABLE_FLAGS = frozenset({"cpu-timing", "sm-clock-throttled", "work-after-end-event"})
"""Flags that say a time is not evidence (CPU perf_counter timing, a throttled clock, work the timer
missed): an entry with one on either side is 'not comparable', never a regression."""


def _side_noise(r: EntryResult) -> float | None:
    """One run's measured noise, %: its noise threshold or its time's IQR/median, whichever is larger."""
    measured = [v * 100 for v in (r.noise_threshold, r.spread) if v is not None]
    return max(measured) if measured else None


def _noise(a: EntryResult, b: EntryResult) -> float:
    """The change two runs of the same code can show: the sum of both runs' measured noise (a side
    without a measurement counts as noisy as the other), the profile default when neither measured."""
    measured = [n for n in (_side_noise(a), _side_noise(b)) if n is not None]
    if not measured:
        return PROFILE_NOISE_PCT
    return sum(measured) if len(measured) == 2 else 2 * measured[0]


def entry_delta(a: EntryResult, b: EntryResult) -> EntryDelta:
    before, after = _time(a), _time(b)
    change = (after - before) / before * 100 if before and after is not None else None
    noise = _noise(a, b)
    unreliable = sorted(UNRELIABLE_FLAGS.intersection(a.flags + b.flags))
    if a.correct and b.correct is False:
        verdict = "broke"
    elif a.correct is False and b.correct:
        verdict = "fixed"
    elif unreliable and change is not None:
        verdict = f"not comparable ({', '.join(unreliable)})"
    elif change is None:
        verdict = "unknown"
    elif abs(change) <= noise:
        verdict = "same (within noise)"
    else:
        verdict = "faster" if change < 0 else "slower"
    return EntryDelta(
        name=a.name,
        before_s=before,
        after_s=after,
        change_pct=change,
        noise_pct=noise,
        verdict=verdict,
        correct_before=a.correct,
        correct_after=b.correct,
        speedup_before=a.speedup,
        speedup_after=b.speedup,
    )


def compare_suites(
    before: tuple[str, list[EntryResult], SuiteSummary], after: tuple[str, list[EntryResult], SuiteSummary]
) -> SuiteComparison:
    """Match entries by name."""
    (a_name, a_rows, a_sum), (b_name, b_rows, b_sum) = before, after
    b_by = {r.name: r for r in b_rows}
    a_by = {r.name: r for r in a_rows}
    return SuiteComparison(
        before=a_name,
        after=b_name,
        entries=[entry_delta(r, b_by[r.name]) for r in a_rows if r.name in b_by],
        only_before=[n for n in a_by if n not in b_by],
        only_after=[n for n in b_by if n not in a_by],
        geomean_before=a_sum.geomean_speedup,
        geomean_after=b_sum.geomean_speedup,
        fast_p_before=a_sum.fast_p,
        fast_p_after=b_sum.fast_p,
    )


def suite_changes(c: SuiteComparison) -> GateInput:
    """The gate's input: (name, change %, noise %) per comparable entry, the entries that broke, those
    whose timings are not comparable, and those missing from the second run."""
    comparable = [e for e in c.entries if not e.verdict.startswith("not comparable")]
    return GateInput(
        changes=[(e.name, e.change_pct, e.noise_pct) for e in comparable],
        broken=[e.name for e in c.entries if e.verdict == "broke"],
        not_comparable=[
            f"{e.name}: {e.verdict}" for e in c.entries if e.verdict.startswith("not comparable")
        ],
        missing=list(c.only_before),
    )
