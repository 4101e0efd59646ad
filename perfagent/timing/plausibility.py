"""Speed of light and plausibility: a candidate time below the roofline floor fails; a > 10× speed-up
is flagged for review.

SOL time = max(FLOPs ÷ peak FLOP/s, bytes ÷ peak DRAM bandwidth) (evaluation reference §4 check
10). ``bytes`` is the minimum traffic (each input read and each output written once), so SOL is a
lower bound: a measured time below it, or a rate above a peak, means the work was not all done (or
not all timed). Those flags (``IMPOSSIBLE``) fail the candidate's timing as implausible; a large
speed-up alone is possible and only flagged.
"""

from __future__ import annotations

from perfagent.timing.models import PlausibilityFlag, RooflineEstimate
from profilers.model import DevicePeaks

EXCESSIVE_SPEEDUP = 10.0
IMPOSSIBLE: tuple[PlausibilityFlag, ...] = (
    "below-speed-of-light",
    "above-peak-bandwidth",
    "above-peak-flops",
)
"""Flags no real kernel can earn: a candidate with one fails its timing (``BenchResult.implausible``)."""


def impossible(flags: list[PlausibilityFlag]) -> list[PlausibilityFlag]:
    """The flags among ``flags`` that fail a timing as implausible (``IMPOSSIBLE``)."""
    return [f for f in flags if f in IMPOSSIBLE]


def peak_flops(peaks: DevicePeaks, precision: str) -> float | None:
    """The highest FLOP rate that could apply to ``precision`` (a lower bound on time must use the highest)."""
    rates = peaks.flops_per_s
    if precision == "fp64":
        keys = ["fp64"]
    elif precision == "fp32":
        keys = ["fp32", "tensor"]  # tf32 tensor cores may run fp32 matmuls
    else:
        keys = ["fp16", "tensor", "fp32"]
    values = [rates[k] for k in keys if rates.get(k)]
    return max(values) if values else None


def roofline(
    flops: float | None,
    nbytes: float | None,
    median_s: float,
    peaks: DevicePeaks | None,
    precision: str = "fp32",
) -> RooflineEstimate:
    """Achieved rates and % of the speed of light for one timed workload."""
    bw = flops_rate = None
    if median_s > 0:
        bw = nbytes / median_s if nbytes else None
        flops_rate = flops / median_s if flops else None
    if peaks is None:
        return RooflineEstimate(
            flops=flops, bytes=nbytes, achieved_bytes_per_s=bw, achieved_flops_per_s=flops_rate
        )
    peak_bw = peaks.dram_bytes_per_s
    peak_f = peak_flops(peaks, precision)
    t_mem = nbytes / peak_bw if nbytes and peak_bw else None
    t_cmp = flops / peak_f if flops and peak_f else None
    terms = [t for t in (t_mem, t_cmp) if t is not None]
    sol = max(terms) if terms else None
    bound = None
    if sol is not None:
        bound = "memory" if sol == t_mem else "compute"
    return RooflineEstimate(
        flops=flops,
        bytes=nbytes,
        achieved_bytes_per_s=bw,
        achieved_flops_per_s=flops_rate,
        sol_time_s=sol,
        pct_of_roofline=100.0 * sol / median_s if sol is not None and median_s > 0 else None,
        bound=bound,
        peak_bytes_per_s=peak_bw,
        peak_flops_per_s=peak_f,
        peaks_source=peaks.source,
    )


def flags_for(estimate: RooflineEstimate | None, median_s: float) -> list[PlausibilityFlag]:
    """Flags for one workload: faster than its speed of light, above peak bandwidth or FLOP/s."""
    out: list[PlausibilityFlag] = []
    if estimate is None:
        return out
    if estimate.sol_time_s is not None and median_s < estimate.sol_time_s:
        out.append("below-speed-of-light")
    if (
        estimate.achieved_bytes_per_s
        and estimate.peak_bytes_per_s
        and estimate.achieved_bytes_per_s > estimate.peak_bytes_per_s
    ):
        out.append("above-peak-bandwidth")
    if (
        estimate.achieved_flops_per_s
        and estimate.peak_flops_per_s
        and estimate.achieved_flops_per_s > estimate.peak_flops_per_s
    ):
        out.append("above-peak-flops")
    return out


def speedup_flags(speedup: float | None) -> list[PlausibilityFlag]:
    return ["excessive-speedup"] if speedup is not None and speedup > EXCESSIVE_SPEEDUP else []
