"""One kernel dispatch as every AMD reader produces it, and the robust aggregation of repeated dispatches.

Readers of each format (rocprofv3 CSV, rocpd, rocprof v1, rocprof-compute) turn rows into ``Dispatch``
records; ``split_outliers`` then decides which dispatches of a kernel describe its steady state.

Why: identical dispatches are not equally fast. On the MI300A kernel-trace fixture the first of three
``vecCopy`` dispatches takes 8292 ns against 5528 and 5488 ns (page migration and cold caches on an APU);
first-touch migration can make a first dispatch hundreds of times slower (rocprof.md pitfall 3). A mean
over all dispatches (what IntelliPerf/GT report) is then meaningless. The rules, applied per kernel and
launch configuration, in dispatch order:

1. Warm-up: while the earliest remaining dispatch is slower than every later one AND more than
   ``WARMUP_RATIO`` (1.25x) the median of the later ones, it is dropped (at least two later dispatches must
   remain to compare against).
2. Gross outliers: any dispatch slower than ``GROSS_RATIO`` (10x) the median of all dispatches is dropped
   (with exactly two dispatches: the first when it is 10x the second).
3. At most ``(n - 1) // 2`` dispatches are dropped (one of two), so the median always rests on a majority.

The kernel's duration is the median of the kept dispatches; what was dropped is said in a note.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

WARMUP_RATIO = 1.25
"""A leading dispatch this much slower than the median of the later ones (and slower than all of them) is warm-up."""
GROSS_RATIO = 10.0
"""A dispatch this much slower than the median of all is an outlier wherever it sits."""


@dataclass(frozen=True)
class Dispatch:
    """One kernel dispatch with whatever the source file recorded about it."""

    kernel: str
    """Kernel name as the tool printed it."""
    index: int
    """Position in the file (dispatch order when no dispatch id is recorded)."""
    dispatch_id: int | None = None
    start_ns: int | None = None
    end_ns: int | None = None
    grid: tuple[int, int, int] | None = None
    """Grid size in work-items (x, y, z), as AMD tools report it."""
    grid_size: int | None = None
    """Total work-items, when only the product is known."""
    workgroup: tuple[int, int, int] | None = None
    workgroup_size: int | None = None
    """Work-items per workgroup, when only the product is known."""
    lds_bytes: int | None = None
    """LDS (group segment) per workgroup, byte."""
    scratch_bytes: int | None = None
    """Scratch (private segment) per work-item, byte."""
    arch_vgpr: int | None = None
    accum_vgpr: int | None = None
    sgpr: int | None = None
    wave_size: int | None = None
    agent: str | None = None
    """The agent/GPU identifier the tool printed ('Agent 2', GPU_ID, gpu-id)."""
    counters: dict[str, float] = field(default_factory=dict)
    """Counter name -> value for this dispatch."""

    @property
    def duration_ns(self) -> int | None:
        """End minus start, ns (None when either timestamp is missing or the span is not positive)."""
        if self.start_ns is None or self.end_ns is None or self.end_ns <= self.start_ns:
            return None
        return self.end_ns - self.start_ns

    @property
    def total_workitems(self) -> int | None:
        """Grid size in work-items (product of the dimensions when given per dimension)."""
        if self.grid is not None:
            return self.grid[0] * self.grid[1] * self.grid[2]
        return self.grid_size

    @property
    def workgroup_items(self) -> int | None:
        """Work-items per workgroup."""
        if self.workgroup is not None:
            return self.workgroup[0] * self.workgroup[1] * self.workgroup[2]
        return self.workgroup_size

    @property
    def launch_key(self) -> tuple[int | None, int | None]:
        """(grid work-items, workgroup work-items): dispatches are compared only within one key."""
        return (self.total_workitems, self.workgroup_items)


@dataclass(frozen=True)
class OutlierSplit:
    """Which dispatches (indices into the input order) were kept and dropped, and why."""

    kept: list[int]
    dropped: list[int]
    warmup: list[int]
    """The dropped ones that were leading warm-up dispatches."""
    reference_ns: float | None
    """Median duration the dropped ones were compared against, ns."""


def split_outliers(durations: Sequence[float | None]) -> OutlierSplit:
    """Apply the module's rules to one kernel's dispatch durations (in dispatch order).

    Args:
        durations: ns per dispatch; None for a dispatch without timestamps (always kept).

    Returns:
        The kept and dropped indices (each sorted) and the median the dropped ones were judged against.
    """
    timed = [i for i, d in enumerate(durations) if d is not None and d > 0]
    n = len(timed)
    value = {i: float(durations[i] or 0.0) for i in timed}
    cap = (n - 1) // 2 if n >= 3 else (1 if n == 2 else 0)
    dropped: list[int] = []
    warmup: list[int] = []
    reference: float | None = None
    if n == 2:
        first, second = timed
        if value[first] > GROSS_RATIO * value[second]:
            dropped, warmup, reference = [first], [first], value[second]
    elif n >= 3:
        pos = 0
        while len(dropped) < cap and n - pos - 1 >= 2:
            head = timed[pos]
            rest = [value[i] for i in timed[pos + 1 :]]
            rest_median = statistics.median(rest)
            if value[head] > max(rest) and value[head] > WARMUP_RATIO * rest_median:
                dropped.append(head)
                warmup.append(head)
                reference = rest_median
                pos += 1
            else:
                break
        remaining = [i for i in timed if i not in dropped]
        overall = statistics.median(value[i] for i in timed)
        gross = sorted((i for i in remaining if value[i] > GROSS_RATIO * overall), key=lambda i: -value[i])
        for i in gross:
            if len(dropped) >= cap:
                break
            dropped.append(i)
        if gross and reference is None:
            reference = overall
        if dropped and not warmup:
            reference = overall
    kept = [i for i in range(len(durations)) if i not in dropped]
    return OutlierSplit(kept=kept, dropped=sorted(dropped), warmup=sorted(warmup), reference_ns=reference)


def format_ns(ns: float) -> str:
    """A duration with a readable unit: '8.29 µs', '5.80 ms', '412 ns'."""
    if ns >= 1e9:
        return f"{ns / 1e9:.3g} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.3g} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.3g} µs"
    return f"{ns:.0f} ns"


def drop_note(kernel: str, durations: Sequence[float | None], split: OutlierSplit) -> str | None:
    """The plain-language note for what ``split`` dropped, or None when nothing was dropped.

    Example: "vecCopy: dropped 1 warm-up dispatch of 3 (first took 8.29 µs vs median 5.51 µs of the rest)".
    """
    if not split.dropped or split.reference_ns is None:
        return None
    total = len(durations)
    parts: list[str] = []
    if split.warmup:
        first = durations[split.warmup[0]] or 0.0
        count = len(split.warmup)
        noun = "dispatch" if count == 1 else "dispatches"
        parts.append(
            f"dropped {count} warm-up {noun} of {total} (first took {format_ns(first)} vs median "
            f"{format_ns(split.reference_ns)} of the rest)"
        )
    others = [i for i in split.dropped if i not in split.warmup]
    if others:
        slowest = max(durations[i] or 0.0 for i in others)
        noun = "dispatch" if len(others) == 1 else "dispatches"
        parts.append(
            f"dropped {len(others)} outlier {noun} of {total} slower than {GROSS_RATIO:g}x the median "
            f"(slowest took {format_ns(slowest)})"
        )
    return f"{kernel}: " + "; ".join(parts)
