"""The roofline chart as PNG bytes, embedded by the Markdown and HTML reports.

Log-log axes; memory roofs (DRAM, plus L2/L1 where the device peaks give them) and one horizontal
compute roof per precision the kernels use; each kernel a point at its DRAM arithmetic intensity and
achieved FLOP/s of its busiest precision.

A kernel that executes no floating-point instruction (a transpose, a copy, a histogram) has no
arithmetic intensity, so it has no place on those axes. It is drawn instead as a bandwidth bar: its
achieved DRAM bandwidth against the DRAM roof (the device's peak bandwidth), labelled with the % of peak.
Such bars go in a panel under the roofline, or make up the whole picture when no kernel has FLOPs.
Kernels that can be drawn neither way (no roofline, no DRAM traffic measured) are listed with the reason
by ``chart_plan`` and in a caption inside the image.

This module decides what the chart shows, without matplotlib (the TUI's chart and the reports' captions read
the plan too); ``perfagent.render.chart_png`` draws it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from perfagent.records import RunRecord
from perfagent.render.roofline_text import level_rates, pick_point
from perfagent.render.units import fmt_bandwidth, fmt_pct, fmt_share
from profilers.model import DevicePeaks, KernelDiagnosis
from profilers.ncu.tensor import uncounted_tensor_work

__all__ = [
    "BARS_CAPTION",
    "MAX_POINTS",
    "BandwidthBar",
    "ChartPlan",
    "PlottedKernel",
    "chart_plan",
    "describe_bars",
    "summarize_not_plotted",
    "why_no_chart",
]

_LABEL_CHARS = 28
MAX_POINTS = 12
"""Kernels placed on the chart (points, and bandwidth bars, each), in record (priority) order; more would be
unreadable."""
BARS_CAPTION = "Kernels without FLOPs (no arithmetic intensity), achieved DRAM bandwidth vs the DRAM roof"
"""How the reports introduce ``describe_bars``' text under the chart."""
_LEVELS = (("dram", "DRAM"), ("l2", "L2"), ("l1", "L1"))
_PRECISION_ORDER = ("fp64", "fp32", "fp16", "tensor")


@dataclass(frozen=True)
class PlottedKernel:
    """One kernel's point on the chart."""

    label: str
    intensity: float
    """DRAM arithmetic intensity, FLOP/byte."""
    flops_per_s: float
    precision: str


@dataclass(frozen=True)
class BandwidthBar:
    """A kernel without FLOPs: its achieved DRAM bandwidth against the DRAM roof."""

    label: str
    achieved_bytes_per_s: float
    peak_bytes_per_s: float | None
    """The DRAM roof (device peak, byte/s); None when neither the report nor the GPU table gives it."""

    @property
    def share(self) -> float | None:
        """Achieved / peak (0..1, can exceed 1 slightly with measurement noise), None without a peak."""
        return self.achieved_bytes_per_s / self.peak_bytes_per_s if self.peak_bytes_per_s else None

    def describe(self) -> str:
        """``596 GB/s = 12.4 % of 4.81 TB/s DRAM peak`` (or ``596 GB/s DRAM`` without a peak)."""
        if self.share is None:
            return f"{fmt_bandwidth(self.achieved_bytes_per_s)} DRAM (peak unknown)"
        return (
            f"{fmt_bandwidth(self.achieved_bytes_per_s)} = {fmt_share(self.share)} of "
            f"{fmt_bandwidth(self.peak_bytes_per_s)} DRAM peak"
        )


@dataclass(frozen=True)
class ChartPlan:
    """What the chart shows, decided without matplotlib (also used for captions in md/html)."""

    points: tuple[PlottedKernel, ...]
    not_plotted: tuple[tuple[str, str], ...]
    """(short kernel name, why it is not on the chart)."""
    memory_roofs: tuple[tuple[str, float], ...] = field(default=())
    """(label, byte/s)."""
    compute_roofs: tuple[tuple[str, float], ...] = field(default=())
    """(label, FLOP/s)."""
    device: str | None = None
    bars: tuple[BandwidthBar, ...] = field(default=())
    """Kernels without FLOPs, drawn as achieved DRAM bandwidth vs the DRAM roof."""


def describe_bars(bars: tuple[BandwidthBar, ...], limit: int = 6) -> str:
    """``[1] k: 596 GB/s = 12.4 % of 4.81 TB/s DRAM peak; ...`` for the first ``limit`` bars, then ``+N more``."""
    shown = "; ".join(f"{b.label}: {b.describe()}" for b in bars[:limit])
    rest = len(bars) - limit
    return shown + (f"; +{rest} more" if rest > 0 else "")


def _short(kd: KernelDiagnosis, rank: int) -> str:
    base = kd.profile.base_name or kd.name
    if len(base) > _LABEL_CHARS:
        base = base[: _LABEL_CHARS - 1] + "…"
    return f"[{rank}] {base}"


def summarize_not_plotted(not_plotted: tuple[tuple[str, str], ...], limit: int = 6) -> str:
    """``name (why); ...`` for the first ``limit`` kernels left off the chart, then ``+N more``."""
    shown = "; ".join(f"{name} ({why})" for name, why in not_plotted[:limit])
    rest = len(not_plotted) - limit
    return shown + (f"; +{rest} more" if rest > 0 else "")


def why_no_chart(record: RunRecord) -> str:
    """Why a measured record has no chart: each kernel's reason, or that nothing was measured."""
    skipped = chart_plan(record).not_plotted
    return summarize_not_plotted(skipped) if skipped else "no kernel has FLOPs or DRAM traffic"


def _why_not(kd: KernelDiagnosis) -> str:
    if kd.roofline is None:
        return "no roofline data"
    busy = uncounted_tensor_work(kd.profile.metrics)
    if busy is not None:
        return f"tensor pipe busy {fmt_pct(busy)} but no tensor FLOP count in this report"
    has_flops = any(v and v > 0 for v in kd.profile.metrics.flops.values())
    bw, peak = level_rates(kd, "dram")
    if has_flops and bw is None:
        return "no DRAM traffic measured, so no DRAM arithmetic intensity"
    if bw is None:
        return "no FLOPs or DRAM traffic measured"
    what = "no FLOPs measured (pure data movement)" if not has_flops else "FLOPs not placeable"
    if peak:
        return f"{what}; achieved DRAM {fmt_bandwidth(bw)} = {fmt_share(bw / peak)} of peak"
    return f"{what}; achieved DRAM {fmt_bandwidth(bw)}"


@dataclass
class _PlanDraft:
    """The chart plan while the kernels are placed one by one, in record order."""

    points: list[PlottedKernel] = field(default_factory=list)
    bars: list[BandwidthBar] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    used_precisions: set[str] = field(default_factory=set)
    reference: KernelDiagnosis | None = None
    """The first plotted kernel: its device gives the roofs."""
    first_bar: KernelDiagnosis | None = None

    def place(self, kd: KernelDiagnosis, rank: int) -> None:
        """Place one kernel: a point, a bandwidth bar, or a reason why it is left off."""
        label = _short(kd, rank)
        if kd.profile.harness:
            self.skipped.append((label, "harness kernel, outside the workload's forward()"))
            return
        point = _plotted_point(kd, label)
        if point is None:
            self._place_bar(kd, label)
        elif len(self.points) >= MAX_POINTS:
            self.skipped.append((label, f"only the first {MAX_POINTS} plottable kernels are drawn"))
        else:
            self._place_point(kd, point)

    def _place_bar(self, kd: KernelDiagnosis, label: str) -> None:
        bar = _bandwidth_bar(kd, label)
        if bar is None:
            self.skipped.append((label, _why_not(kd)))
        elif len(self.bars) >= MAX_POINTS:
            self.skipped.append((label, f"only the first {MAX_POINTS} bandwidth bars are drawn"))
        else:
            self.bars.append(bar)
            self.first_bar = self.first_bar or kd

    def _place_point(self, kd: KernelDiagnosis, point: PlottedKernel) -> None:
        self.points.append(point)
        self.used_precisions.add(point.precision)
        self.used_precisions.update(p for p, v in kd.profile.metrics.flops.items() if v and v > 0)
        self.reference = self.reference or kd


def _plotted_point(kd: KernelDiagnosis, label: str) -> PlottedKernel | None:
    """The kernel's DRAM point when it has an arithmetic intensity and a FLOP rate above 0, else None."""
    point = pick_point(kd, level="dram")
    if (
        point is None
        or point.arithmetic_intensity is None
        or point.achieved_flops_per_s is None
        or point.arithmetic_intensity <= 0
        or point.achieved_flops_per_s <= 0
    ):
        return None
    return PlottedKernel(label, point.arithmetic_intensity, point.achieved_flops_per_s, point.precision)


def chart_plan(record: RunRecord) -> ChartPlan:
    """Decide which kernels, roofs and peaks the roofline chart shows.

    Args:
        record: the run.

    Returns:
        The points (kernels with a DRAM point and FLOPs > 0), the kernels left out with reasons, and the
        roofs taken from the first plotted kernel's device peaks (and its points' peaks as a fallback).
    """
    draft = _PlanDraft()
    for rank, kd in enumerate(record.kernels, 1):
        draft.place(kd, rank)
    if draft.reference is None:
        device = draft.first_bar.profile.device.name if draft.first_bar else None
        return ChartPlan(points=(), not_plotted=tuple(draft.skipped), device=device, bars=tuple(draft.bars))

    memory_roofs, compute_roofs = _roofs(record, draft.reference.profile.device.peaks, draft.used_precisions)
    return ChartPlan(
        points=tuple(draft.points),
        not_plotted=tuple(draft.skipped),
        memory_roofs=memory_roofs,
        compute_roofs=compute_roofs,
        device=draft.reference.profile.device.name,
        bars=tuple(draft.bars),
    )


def _roofs(
    record: RunRecord, peaks: DevicePeaks, used_precisions: set[str]
) -> tuple[tuple[tuple[str, float], ...], tuple[tuple[str, float], ...]]:
    """(memory roofs, compute roofs) as (label, peak) pairs, in level and precision order.

    The device peaks of the first plotted kernel come first; the peaks stored on the roofline points fill
    the gaps (the roofline may have completed the report's peaks from the datasheet table).
    """
    memory: dict[str, float] = {}
    compute: dict[str, float] = {}
    for level, label in _LEVELS:
        bw = {"dram": peaks.dram_bytes_per_s, "l2": peaks.l2_bytes_per_s, "l1": peaks.l1_bytes_per_s}[level]
        if bw:
            memory[label] = bw
    for precision in sorted(used_precisions, key=lambda p: (_PRECISION_ORDER + (p,)).index(p)):
        peak = peaks.flops_per_s.get(precision)
        if peak:
            compute[precision.upper()] = peak
    for kd in record.kernels:
        for p in kd.roofline.points if kd.roofline else []:
            level_label = dict(_LEVELS)[p.level]
            if p.peak_bytes_per_s and level_label not in memory:
                memory[level_label] = p.peak_bytes_per_s
            if p.precision in used_precisions and p.peak_flops_per_s and p.precision.upper() not in compute:
                compute[p.precision.upper()] = p.peak_flops_per_s
    order = [label for _, label in _LEVELS]
    precision_order = [p.upper() for p in _PRECISION_ORDER]
    return (
        tuple(sorted(memory.items(), key=lambda kv: order.index(kv[0]))),
        tuple(sorted(compute.items(), key=lambda kv: (precision_order + [kv[0]]).index(kv[0]))),
    )


def _bandwidth_bar(kd: KernelDiagnosis, label: str) -> BandwidthBar | None:
    """A bar for a kernel with a roofline, DRAM traffic and no FLOPs; None for any other kernel."""
    if kd.roofline is None or any(v and v > 0 for v in kd.profile.metrics.flops.values()):
        return None
    if uncounted_tensor_work(kd.profile.metrics) is not None:  # it has FLOPs, only not counted
        return None
    achieved, peak = level_rates(kd, "dram")
    if achieved is None or achieved <= 0:
        return None
    return BandwidthBar(label, achieved, peak)
