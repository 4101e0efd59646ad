"""How the review shows a candidate of the core (``perfagent.records.CandidateOutcome``): pure functions.

The live walkthrough and the saved-run screen hand the review the loop's own outcomes; what is derived
for display (check marks, the before/after rows, the measured speed-up, the launch-settings note) is
computed here, outside the widgets, from the outcome's fields.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from perfagent.optimize.apply import needs_settings_note
from perfagent.records import CandidateOutcome, CheckRecord, RunRecord
from perfagent.render.units import fmt_bytes, fmt_count, fmt_number, fmt_pct, fmt_seconds, fmt_speedup

__all__ = [
    "MetricChange",
    "Outcome",
    "check_mark",
    "measured_speedup",
    "metric_rows",
    "outcome_of",
    "settings_note",
    "speedup_text",
    "summary_counts",
]


@dataclass(frozen=True)
class Outcome:
    """What a run of the loop produced: its candidates in the order tried, and its notes."""

    candidates: tuple[CandidateOutcome, ...]
    notes: tuple[str, ...] = ()


def outcome_of(record: RunRecord) -> Outcome:
    """The candidates and notes of an optimize run's record (live or saved)."""
    result = record.optimize
    if result is None:
        return Outcome(candidates=tuple(record.candidates))
    return Outcome(candidates=tuple(result.candidates), notes=tuple(result.notes))


@dataclass(frozen=True)
class MetricChange:
    """One row of the before/after table, already formatted."""

    name: str
    before: str
    after: str
    change: str
    """``-42 %``, ``1.8×``, or '' when not comparable."""


def check_mark(check: CheckRecord) -> str:
    """✓ passed, ✗ failed, ! warning or inconclusive, – skipped."""
    if check.severity == "skipped":
        return "–"
    if check.passed:
        return "✓"
    return "!" if check.severity in ("warning", "inconclusive") else "✗"


def measured_speedup(c: CandidateOutcome) -> float | None:
    """Time before / time after from the same interleaved run (None when either is missing)."""
    if c.time_s_before and c.time_s:
        return c.time_s_before / c.time_s
    return None


def speedup_text(c: CandidateOutcome) -> str:
    """``1.8×`` or ``n/a``."""
    return fmt_speedup(measured_speedup(c))


def settings_note(c: CandidateOutcome) -> str | None:
    """Why accepting also writes a launch spec (None: the source alone carries the win)."""
    return needs_settings_note(c.defines, c.launch, f"{Path(c.file).stem}.launch.toml")


def metric_rows(c: CandidateOutcome) -> tuple[MetricChange, ...]:
    """The before/after rows: the median time, then every metric measured before or after."""
    rows = []
    before_t, after_t = _finite(c.time_s_before), _finite(c.time_s)
    if before_t is not None or after_t is not None:
        speed = fmt_speedup(before_t / after_t) if before_t and after_t else ""
        rows.append(MetricChange("time (median)", fmt_seconds(before_t), fmt_seconds(after_t), speed))
    before, after = _finite_values(c.metrics_before), _finite_values(c.metrics_after)
    for name in dict.fromkeys([*before, *after]):
        b, a = before.get(name), after.get(name)
        rows.append(MetricChange(name, _fmt_metric(name, b), _fmt_metric(name, a), _change(b, a, name)))
    return tuple(rows)


def summary_counts(candidates: tuple[CandidateOutcome, ...] | list[CandidateOutcome]) -> str:
    """``3 candidates: 1 accepted by the loop, 2 rejected``."""
    accepted = sum(c.accepted for c in candidates)
    n = len(candidates)
    return f"{n} candidate{'s' if n != 1 else ''}: {accepted} accepted by the loop, {n - accepted} rejected"


def _finite(value: float | None) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


def _finite_values(values: dict[str, float]) -> dict[str, float]:
    return {k: v for k, v in ((k, _finite(v)) for k, v in values.items()) if v is not None}


def _fmt_metric(name: str, value: float | None) -> str:
    if name.endswith("_pct"):
        return fmt_pct(value)
    if name.endswith("_s"):
        return fmt_seconds(value)
    if name.endswith("_bytes"):
        return fmt_bytes(value)
    if name.endswith(("_sectors", "_requests", "_instructions", "_conflicts", "_wavefronts")):
        return fmt_count(value)
    return fmt_number(value)


def _change(before: float | None, after: float | None, name: str) -> str:
    if before is None or after is None:
        return ""
    if name.endswith("_pct"):
        return f"{after - before:+.3g} pt"
    if before == 0:
        return ""
    return f"{(after - before) / before * 100:+.3g} %"
