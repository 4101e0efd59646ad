"""A kernel's roofline as plain strings: which point of the roofline to show, the achieved and peak rates at a
memory level, and the one-line summary (``DRAM-bound: 2.9 TB/s = 86.7 % of 3.35 TB/s peak; ...``). Pure."""

from __future__ import annotations

from perfagent.render.units import NA, fmt_bandwidth, fmt_flops, fmt_seconds, fmt_share
from perfagent.roofline import level_peak, peaks_for
from profilers.model import DeviceInfo, KernelDiagnosis, KernelProfile, Roofline, RooflinePoint

__all__ = ["LEVEL_LABELS", "level_rates", "pick_point", "roofline_summary"]

LEVEL_LABELS = {"dram": "DRAM", "l2": "L2", "l1": "L1"}
"""How a memory level is named in reports."""


def _main_precision(kp: KernelProfile) -> str | None:
    flops = {k: v for k, v in kp.metrics.flops.items() if v and v > 0}
    return max(flops, key=lambda k: flops[k]) if flops else None


def pick_point(
    kd: KernelDiagnosis, *, level: str | None = None, precision: str | None = None
) -> RooflinePoint | None:
    """The roofline point for ``level``/``precision``; unset ones prefer DRAM and the busiest precision."""
    rl = kd.roofline
    if rl is None or not rl.points:
        return None
    busiest = _main_precision(kd.profile)

    def score(p: RooflinePoint) -> tuple[bool, bool, bool, bool]:
        return (
            level is None or p.level == level,
            precision is None or p.precision == precision,
            p.level == "dram",
            p.precision == busiest,
        )

    best = max(rl.points, key=score)
    if (level is not None and best.level != level) or (precision is not None and best.precision != precision):
        return None
    return best


def _level_bytes(kp: KernelProfile, level: str) -> float | None:
    m = kp.metrics
    return {"dram": m.dram_bytes, "l2": m.l2_bytes, "l1": m.l1_bytes}.get(level)


def _level_peak(dev: DeviceInfo, level: str) -> float | None:
    p = dev.peaks
    return {"dram": p.dram_bytes_per_s, "l2": p.l2_bytes_per_s, "l1": p.l1_bytes_per_s}.get(level)


def level_rates(kd: KernelDiagnosis, level: str) -> tuple[float | None, float | None]:
    """(achieved, peak) byte/s at a memory level.

    From the roofline point when there is one; else from the bytes moved / duration, and the peak from
    the device (or, when the roofline's speed of light is set by this level, bytes / speed of light:
    the peak the roofline itself used, e.g. a datasheet peak the report lacked; else the GPU table's
    datasheet peak, as ``perfagent.roofline.peaks_for`` completes it).
    """
    point = pick_point(kd, level=level)
    achieved = point.achieved_bytes_per_s if point else None
    peak = point.peak_bytes_per_s if point else None
    kp = kd.profile
    moved = _level_bytes(kp, level)
    duration = kd.duration_s if kd.duration_s is not None else kp.metrics.duration_s
    if achieved is None and moved is not None and duration:
        achieved = moved / duration
    if peak is None:
        peak = _level_peak(kp.device, level)
    rl = kd.roofline
    if peak is None and rl is not None and rl.bounding_resource == level and rl.speed_of_light_s and moved:
        peak = moved / rl.speed_of_light_s
    if peak is None:  # the GPU table's datasheet peak, as the roofline itself completes the report's peaks
        peak = level_peak(peaks_for(kp), level)
    return achieved, peak


def roofline_summary(kd: KernelDiagnosis) -> str:
    """One line: the bound, achieved vs peak, speed of light vs measured.

    ``DRAM-bound: 2.9 TB/s = 86.7 % of 3.35 TB/s peak; speed of light 41.8 µs vs 48.2 µs measured``
    """
    rl: Roofline | None = kd.roofline
    kp = kd.profile
    if rl is None:
        return "n/a (no roofline: needs measured traffic or FLOPs and device peaks)"
    resource = rl.bounding_resource
    duration = kd.duration_s if kd.duration_s is not None else kp.metrics.duration_s
    head: str
    if resource in LEVEL_LABELS:
        achieved, peak = level_rates(kd, resource)
        share = fmt_share(achieved / peak) if achieved is not None and peak else NA
        head = f"{LEVEL_LABELS[resource]}-bound: {fmt_bandwidth(achieved)} = {share} of {fmt_bandwidth(peak)} peak"
    elif resource:
        point = pick_point(kd, precision=resource)
        achieved = point.achieved_flops_per_s if point else None
        peak = point.peak_flops_per_s if point else kp.device.peaks.flops_per_s.get(resource)
        if achieved is None and peak is None:  # a resource we have no rate for: name it, nothing more
            head = f"{resource}-bound ({rl.bound})"
        else:
            share = fmt_share(achieved / peak) if achieved is not None and peak else NA
            head = f"{resource.upper()}-bound: {fmt_flops(achieved)} = {share} of {fmt_flops(peak)} peak"
    elif rl.bound != "unknown":
        head = f"{rl.bound}-bound"
    else:
        head = "bound unknown (missing peaks or traffic)"
    parts = [head]
    if rl.speed_of_light_s is not None:
        sol = f"speed of light {fmt_seconds(rl.speed_of_light_s)} vs {fmt_seconds(duration)} measured"
        if rl.fraction_of_sol is not None:
            sol += f" ({fmt_share(rl.fraction_of_sol)} of speed of light)"
        parts.append(sol)
    if rl.headroom_s is not None:
        parts.append(f"headroom {fmt_seconds(rl.headroom_s)}")
    return "; ".join(parts)
