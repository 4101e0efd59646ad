"""Statistics of timing samples: median, IQR, the noise threshold, and when a speed-up is real.

Pure functions on lists of seconds (tested with synthetic samples). The noise threshold comes from
running the *baseline twice*, interleaved with the candidate: two series of the same code differ
only by noise, so their difference (and the spread inside them) bounds what counts as a change.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from perfagent.timing.models import Comparison, TimingStats

NOISE_FLOOR = 0.01
"""Changes below 1 % are never called significant."""


def rounds_for(budget_s: float, round_s: float, min_runs: int, max_runs: int) -> int:
    """Timed rounds that fill ``budget_s`` at ``round_s`` of wall time a round: at least ``min_runs`` and at
    most ``max_runs`` (``max_runs`` wins when it is the smaller); no budget (<= 0) takes ``max_runs``."""
    floor = min(min_runs, max_runs)
    if budget_s <= 0 or round_s <= 0:
        return max_runs
    return max(floor, min(max_runs, int(budget_s / round_s)))


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile, ``q`` in [0, 100]."""
    if not values:
        raise ValueError("no samples")
    data = sorted(values)
    if len(data) == 1:
        return data[0]
    pos = (len(data) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(data) - 1)
    return data[lo] + (data[hi] - data[lo]) * (pos - lo)


def summarize(label: str, samples: Sequence[float]) -> TimingStats:
    """Median, quartiles, IQR, mean, min, max of one series (seconds)."""
    if not samples:
        raise ValueError(f"no samples for {label}")
    p25, p75 = percentile(samples, 25), percentile(samples, 75)
    return TimingStats(
        label=label,
        n=len(samples),
        median_s=statistics.median(samples),
        p25_s=p25,
        p75_s=p75,
        iqr_s=p75 - p25,
        mean_s=statistics.fmean(samples),
        min_s=min(samples),
        max_s=max(samples),
        samples_s=list(samples),
    )


def noise_threshold(
    baseline: Sequence[float], repeat: Sequence[float], floor: float = NOISE_FLOOR
) -> tuple[float, float]:
    """(threshold, drift) as fractions.

    drift = |median(baseline) / median(repeat) - 1| — how far two runs of the same code disagree.
    threshold = max(floor, 2 × drift, half the relative IQR of both baseline series pooled).
    Without a repeat series, the drift is estimated from the two halves of ``baseline``.
    """
    if not repeat:
        half = len(baseline) // 2
        first, second = baseline[:half], baseline[half:]
        if not first or not second:
            return max(floor, _rel_iqr(baseline) / 2), 0.0
        baseline, repeat = first, second
    drift = abs(statistics.median(baseline) / statistics.median(repeat) - 1.0)
    pooled = list(baseline) + list(repeat)
    return max(floor, 2.0 * drift, _rel_iqr(pooled) / 2.0), drift


def _rel_iqr(samples: Sequence[float]) -> float:
    med = statistics.median(samples)
    return (percentile(samples, 75) - percentile(samples, 25)) / med if med > 0 else 0.0


def compare(
    baseline: Sequence[float], repeat: Sequence[float], candidate: Sequence[float], floor: float = NOISE_FLOOR
) -> Comparison:
    """Speed-up of ``candidate`` over the baseline (both baseline series pooled), and whether it is beyond noise.

    Significant when |ln(speed-up)| exceeds ln(1 + noise threshold) *and* the candidate's
    interquartile range does not overlap the baseline's.
    """
    threshold, drift = noise_threshold(baseline, repeat, floor)
    pooled = list(baseline) + list(repeat)
    base_med = statistics.median(pooled)
    cand_med = statistics.median(candidate)
    speedup = base_med / cand_med if cand_med > 0 else float("inf")
    b25, b75 = percentile(pooled, 25), percentile(pooled, 75)
    c25, c75 = percentile(candidate, 25), percentile(candidate, 75)
    separated = c75 < b25 or c25 > b75
    # Symmetric in log space: 2x faster and 2x slower are equally far from "no change".
    significant = separated and speedup > 0 and abs(math.log(speedup)) > math.log1p(threshold)
    verdict = "no-change"
    if significant:
        verdict = "faster" if speedup > 1.0 else "slower"
    return Comparison(
        speedup=speedup,
        noise_threshold=threshold,
        baseline_drift=drift,
        significant=significant,
        verdict=verdict,
    )
