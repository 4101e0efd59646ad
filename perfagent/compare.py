"""Per-kernel deltas between two diagnosed runs (saved runs or recorded reports).

Kernels are matched by name (the demangled base name before any argument list, then in launch order
among kernels of the same name), so a report of the original and one of the rewrite line up even when
the rewrite added or dropped kernels: those are listed as only-before / only-after. A single profile of
each side has no repeated samples, so no significance is claimed here: the result says so, and gives
the relative change with the threshold a caller should treat as noise.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from pydantic import Field

from perfagent.records import RunRecord
from profilers.model import Frozen, KernelDiagnosis

PROFILE_NOISE_PCT = 3.0
"""Relative duration change (%) below which two single ncu profiles are treated as the same: ncu
replays serialise the kernel and fix nothing about clocks, so a few per cent move between runs."""

_WATCHED_METRICS: tuple[str, ...] = (
    "dram_throughput_pct",
    "sm_throughput_pct",
    "memory_throughput_pct",
    "issue_slot_utilization_pct",
    "global_load_bytes_per_sector",
    "global_store_bytes_per_sector",
    "shared_bank_conflict_pct",
    "threads_per_instruction",
    "local_load_bytes",
    "local_store_bytes",
    "atomic_instructions",
    "dram_bytes",
    "instructions_executed",
)


class MetricDelta(Frozen):
    """One canonical metric that moved between the two sides."""

    metric: str
    before: float | None
    after: float | None
    change_pct: float | None
    """(after − before) / before × 100; None when ``before`` is 0 or missing."""


class KernelDelta(Frozen):
    """One kernel present on both sides."""

    name: str
    before_s: float | None
    """Duration before, s."""
    after_s: float | None
    """Duration after, s."""
    speedup: float | None
    """before / after (> 1: faster)."""
    change_pct: float | None
    """Duration change, % (negative: faster)."""
    verdict: str
    """'faster', 'slower', 'same (within noise)' or 'unknown' (a duration is missing)."""
    roofline_before: float | None = None
    """Fraction of the roofline ceiling before, 0–1."""
    roofline_after: float | None = None
    top_finding_before: str | None = None
    top_finding_after: str | None = None
    metrics: list[MetricDelta] = Field(default_factory=list)
    """Watched metrics that moved by more than the noise threshold, largest change first."""
    matched_by: str = "name"
    """'name', or 'position' when the unmatched kernels of both sides were paired in launch order
    (a rewrite usually renames its kernel: 'transpose_naive' → 'transpose_tiled')."""


class Comparison(Frozen):
    """The two sides' per-kernel deltas."""

    before: str
    """What the first side is (target or path)."""
    after: str
    kernels: list[KernelDelta] = Field(default_factory=list)
    only_before: list[str] = Field(default_factory=list)
    only_after: list[str] = Field(default_factory=list)
    total_before_s: float | None = None
    """Summed duration of the matched kernels (both sides timed), s: the same set on both sides."""
    total_after_s: float | None = None
    noise_pct: float = PROFILE_NOISE_PCT
    """Changes smaller than this (%) are 'same (within noise)'."""
    significance: str = "single profiles: no repeated samples, changes within noise_pct are not claimed"


def base_name(name: str) -> str:
    """The kernel's name without template or argument lists ('void k<float>(float*, int)' -> 'k')."""
    head = name.split("(", 1)[0].strip()
    head = head.split("<", 1)[0].strip()
    return head.rsplit(" ", 1)[-1]


def _grouped(kernels: Iterable[KernelDiagnosis]) -> dict[str, list[KernelDiagnosis]]:
    groups: dict[str, list[KernelDiagnosis]] = defaultdict(list)
    for k in kernels:
        groups[base_name(k.name)].append(k)
    return groups


def _pct(before: float | None, after: float | None) -> float | None:
    if before is None or after is None or before == 0:
        return None
    return (after - before) / before * 100.0


def _metric_deltas(before: KernelDiagnosis, after: KernelDiagnosis, noise_pct: float) -> list[MetricDelta]:
    moved: list[MetricDelta] = []
    for metric in _WATCHED_METRICS:
        b = getattr(before.profile.metrics, metric, None)
        a = getattr(after.profile.metrics, metric, None)
        if b is None and a is None:
            continue
        change = _pct(b, a)
        if change is not None and abs(change) < noise_pct:
            continue
        if change is None and b == a:
            continue
        moved.append(MetricDelta(metric=metric, before=b, after=a, change_pct=change))
    return sorted(moved, key=lambda d: -abs(d.change_pct or 0.0))


def _top(k: KernelDiagnosis) -> str | None:
    return f"{k.findings[0].category}: {k.findings[0].title}" if k.findings else None


def _fraction(k: KernelDiagnosis) -> float | None:
    return k.roofline.fraction_of_sol if k.roofline else None


def kernel_delta(before: KernelDiagnosis, after: KernelDiagnosis, noise_pct: float) -> KernelDelta:
    """The delta of one matched kernel."""
    change = _pct(before.duration_s, after.duration_s)
    if change is None:
        verdict = "unknown"
    elif abs(change) < noise_pct:
        verdict = "same (within noise)"
    else:
        verdict = "faster" if change < 0 else "slower"
    speedup = before.duration_s / after.duration_s if before.duration_s and after.duration_s else None
    return KernelDelta(
        name=after.name,
        before_s=before.duration_s,
        after_s=after.duration_s,
        speedup=speedup,
        change_pct=change,
        verdict=verdict,
        roofline_before=_fraction(before),
        roofline_after=_fraction(after),
        top_finding_before=_top(before),
        top_finding_after=_top(after),
        metrics=_metric_deltas(before, after, noise_pct),
    )


def _matched_totals(deltas: Sequence[KernelDelta]) -> tuple[float | None, float | None]:
    """Both sides' summed time over the kernels timed on both: totals over different sets would
    compare an added or dropped kernel's time as if it were a speed-up."""
    timed = [(d.before_s, d.after_s) for d in deltas if d.before_s is not None and d.after_s is not None]
    if not timed:
        return None, None
    return sum(b for b, _ in timed if b is not None), sum(a for _, a in timed if a is not None)


def compare_records(
    before: RunRecord, after: RunRecord, *, noise_pct: float = PROFILE_NOISE_PCT
) -> Comparison:
    """Match the kernels of two diagnosed runs and give each one's time, roofline and metric deltas."""
    b_groups, a_groups = _grouped(before.kernels), _grouped(after.kernels)
    deltas: list[KernelDelta] = []
    only_before: list[str] = []
    only_after: list[str] = []
    for name, b_list in b_groups.items():
        a_list = a_groups.get(name, [])
        deltas.extend(kernel_delta(b, a, noise_pct) for b, a in zip(b_list, a_list, strict=False))
        only_before.extend(k.name for k in b_list[len(a_list) :])
    for name, a_list in a_groups.items():
        only_after.extend(k.name for k in a_list[len(b_groups.get(name, [])) :])
    if only_before and len(only_before) == len(only_after):
        b_left = [k for k in before.kernels if k.name in only_before]
        a_left = [k for k in after.kernels if k.name in only_after]
        deltas.extend(
            kernel_delta(b, a, noise_pct).model_copy(update={"matched_by": "position"})
            for b, a in zip(b_left, a_left, strict=True)
        )
        only_before, only_after = [], []
    total_before, total_after = _matched_totals(deltas)
    return Comparison(
        before=before.target,
        after=after.target,
        kernels=deltas,
        only_before=only_before,
        only_after=only_after,
        total_before_s=total_before,
        total_after_s=total_after,
        noise_pct=noise_pct,
    )


class GateVerdict(Frozen):
    """``perfagent compare --gate``: did anything get slower beyond its noise (or stop being correct)?"""

    passed: bool
    max_regression_pct: float
    """Slow-downs up to this (%) are tolerated even when beyond noise."""
    checked: int
    """Kernels or entries compared."""
    regressions: list[str] = Field(default_factory=list)
    """One line per regression: name, change, the threshold it crossed; a missing kernel/entry; or that
    nothing at all was compared."""
    not_comparable: list[str] = Field(default_factory=list)
    """Entries whose timings are flagged unreliable on either side: neither a pass nor a regression."""
    status: str = "pass"
    """'pass', 'regressed', or 'not comparable' (nothing failed, but no comparable timing was left)."""


class GateInput(Frozen):
    """What the gate judges."""

    changes: list[tuple[str, float | None, float]] = Field(default_factory=list)
    """(name, change %, noise %) per compared kernel or entry."""
    broken: list[str] = Field(default_factory=list)
    """Correct before, not after."""
    not_comparable: list[str] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    """In the first run, absent from the second."""


def gate(judged: GateInput, *, max_regression_pct: float = 0.0) -> GateVerdict:
    """A regression is a slow-down beyond both the noise and ``max_regression_pct``, a kernel/entry that
    stopped being correct or went missing, or nothing compared at all (a gate that checked nothing must
    not pass); entries with unreliable timings are reported as not comparable."""
    regressions = [f"{name}: no longer correct" for name in judged.broken]
    regressions += [f"{name}: missing from the second run" for name in judged.missing]
    for name, change, noise in judged.changes:
        limit = max(noise, max_regression_pct)
        if change is not None and change > limit:
            regressions.append(f"{name}: {change:+.1f} % slower (threshold {limit:.1f} %)")
    if not judged.changes and not judged.not_comparable and not judged.broken:
        regressions.append("nothing was compared: the two sides have no kernel or entry in common")
    status = "regressed" if regressions else "not comparable" if not judged.changes else "pass"
    return GateVerdict(
        passed=not regressions,
        max_regression_pct=max_regression_pct,
        checked=len(judged.changes),
        regressions=regressions,
        not_comparable=list(judged.not_comparable),
        status=status,
    )


def record_changes(c: Comparison) -> GateInput:
    """The gate's input from a record comparison (per kernel, the profile noise threshold)."""
    return GateInput(
        changes=[(k.name, k.change_pct, c.noise_pct) for k in c.kernels], missing=list(c.only_before)
    )
