"""Roofline: arithmetic intensity per memory level and precision, the bound it implies, and the
speed of light every estimate is measured against.

Peaks come from the report (measured at the profiled clocks) and fall back to the knowledge GPU
table (datasheet, labelled ``knowledge:<id>``).
"""

from __future__ import annotations

from typing import Literal

from knowledge.gpus import GpuSpec, spec_for
from profilers.model import DevicePeaks, KernelProfile, Roofline, RooflinePoint

LEVELS: tuple[Literal["dram", "l2", "l1"], ...] = ("dram", "l2", "l1")


def peaks_for(kernel: KernelProfile) -> DevicePeaks:
    """The kernel's device peaks: the report's own, completed from the knowledge table where missing."""
    own = kernel.device.peaks
    spec = spec_for(kernel.device.name)
    if spec is None:
        return own
    fallback = datasheet_peaks(spec)
    flops = dict(fallback.flops_per_s)
    flops.update({k: v for k, v in own.flops_per_s.items() if v})
    used_fallback = (
        own.dram_bytes_per_s is None
        or any(k not in own.flops_per_s for k in flops)
        or (own.l2_bytes_per_s is None and fallback.l2_bytes_per_s is not None)
    )
    source = own.source
    if used_fallback:
        source = (
            f"{own.source}+knowledge:{spec.id}"
            if own.source not in ("unknown", "")
            else f"knowledge:{spec.id}"
        )
    return DevicePeaks(
        dram_bytes_per_s=own.dram_bytes_per_s or fallback.dram_bytes_per_s,
        l2_bytes_per_s=own.l2_bytes_per_s or fallback.l2_bytes_per_s,
        l1_bytes_per_s=own.l1_bytes_per_s,
        flops_per_s=flops,
        source=source,
    )


def datasheet_peaks(spec: GpuSpec) -> DevicePeaks:
    """Peaks from a datasheet entry (boost clocks; an upper bound on what profiling clocks give)."""
    flops: dict[str, float] = {}
    for key, value in (
        ("fp64", spec.fp64_tflops),
        ("fp32", spec.fp32_tflops),
        ("fp16", spec.fp16_tflops),
        ("tensor", spec.tensor_fp16_tflops),
    ):
        if value:
            flops[key] = value * 1e12
    return DevicePeaks(
        dram_bytes_per_s=spec.dram_bandwidth_gbs * 1e9,
        l2_bytes_per_s=spec.l2_bandwidth_gbs * 1e9 if spec.l2_bandwidth_gbs else None,
        flops_per_s=flops,
        source=f"knowledge:{spec.id}",
    )


def level_bytes(kernel: KernelProfile, level: str) -> float | None:
    m = kernel.metrics
    return {"dram": m.dram_bytes, "l2": m.l2_bytes, "l1": m.l1_bytes}[level]


def level_peak(peaks: DevicePeaks, level: str) -> float | None:
    return {"dram": peaks.dram_bytes_per_s, "l2": peaks.l2_bytes_per_s, "l1": peaks.l1_bytes_per_s}[level]


def roofline(kernel: KernelProfile) -> Roofline | None:
    """Place ``kernel`` on the roofline; None when it has no duration (static analysis)."""
    duration = kernel.metrics.duration_s
    if not duration or duration <= 0:
        return None
    peaks = peaks_for(kernel)
    flops = {p: f for p, f in kernel.metrics.flops.items() if f and f > 0}
    points: list[RooflinePoint] = []
    # Lower bounds on the kernel's time from each resource: the speed of light is the largest.
    floors: dict[str, float] = {}
    for level in LEVELS:
        moved = level_bytes(kernel, level)
        peak_b = level_peak(peaks, level)
        if moved and peak_b:
            floors[level] = moved / peak_b
        for precision, count in flops.items():
            peak_f = peaks.flops_per_s.get(precision)
            points.append(_point(level, precision, count, moved, duration, peak_f, peak_b))
    for precision, count in flops.items():
        peak_f = peaks.flops_per_s.get(precision)
        if peak_f:
            floors[precision] = count / peak_f
    if not floors:
        return Roofline(points=points, peaks_source=peaks.source, floors_s=floors)
    resource, sol = max(floors.items(), key=lambda kv: kv[1])
    bound: Literal["memory", "compute"] = "memory" if resource in LEVELS else "compute"
    return Roofline(
        points=points,
        bound=bound,
        bounding_resource=resource,
        speed_of_light_s=sol,
        fraction_of_sol=min(sol / duration, 1.0),
        headroom_s=max(duration - sol, 0.0),
        floors_s=floors,
        peaks_source=peaks.source,
    )


def _point(
    level: Literal["dram", "l2", "l1"],
    precision: str,
    flop_count: float,
    moved: float | None,
    duration: float,
    peak_f: float | None,
    peak_b: float | None,
) -> RooflinePoint:
    intensity = flop_count / moved if moved else None
    achieved_f = flop_count / duration
    achieved_b = moved / duration if moved else None
    ridge = peak_f / peak_b if peak_f and peak_b else None
    attainable = None
    bound: Literal["memory", "compute"] | None = None
    if peak_f and peak_b and intensity is not None:
        attainable = min(peak_f, intensity * peak_b)
        bound = "memory" if ridge is not None and intensity < ridge else "compute"
    return RooflinePoint(
        level=level,
        precision=precision,
        arithmetic_intensity=intensity,
        achieved_flops_per_s=achieved_f,
        achieved_bytes_per_s=achieved_b,
        peak_flops_per_s=peak_f,
        peak_bytes_per_s=peak_b,
        ridge_intensity=ridge,
        bound=bound,
        attainable_flops_per_s=attainable,
        fraction_of_roof=achieved_f / attainable if attainable else None,
    )
