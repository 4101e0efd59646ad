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

matplotlib is imported inside ``roofline_png`` (it is slow to import and only these formats need it),
drawing goes through the Agg canvas directly (no pyplot, no global figure state), and the output is
deterministic for a given matplotlib: fixed size and dpi, default rc parameters, no 'Software' metadata.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from perfagent.records import RunRecord
from perfagent.render.roofline_text import level_rates, pick_point
from perfagent.render.units import fmt_bandwidth, fmt_flops, fmt_pct, fmt_share
from profilers.model import DevicePeaks, KernelDiagnosis
from profilers.ncu.tensor import uncounted_tensor_work

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "BARS_CAPTION",
    "MAX_POINTS",
    "BandwidthBar",
    "ChartPlan",
    "PlottedKernel",
    "chart_plan",
    "describe_bars",
    "roofline_png",
    "summarize_not_plotted",
    "why_no_chart",
]

FIGSIZE = (8.0, 5.0)
"""Inches."""
DPI = 110
_LABEL_CHARS = 28
MAX_POINTS = 12
"""Kernels placed on the chart (points, and bandwidth bars, each), in record (priority) order; more would be
unreadable."""
BARS_CAPTION = "Kernels without FLOPs (no arithmetic intensity), achieved DRAM bandwidth vs the DRAM roof"
"""How the reports introduce ``describe_bars``' text under the chart."""
_LEVELS = (("dram", "DRAM"), ("l2", "L2"), ("l1", "L1"))
_PRECISION_ORDER = ("fp64", "fp32", "fp16", "tensor")
_COLORS = ("#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")


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


def chart_plan(record: RunRecord) -> ChartPlan:
    """Decide which kernels, roofs and peaks the roofline chart shows.

    Args:
        record: the run.

    Returns:
        The points (kernels with a DRAM point and FLOPs > 0), the kernels left out with reasons, and the
        roofs taken from the first plotted kernel's device peaks (and its points' peaks as a fallback).
    """
    points: list[PlottedKernel] = []
    bars: list[BandwidthBar] = []
    skipped: list[tuple[str, str]] = []
    used_precisions: set[str] = set()
    reference: KernelDiagnosis | None = None
    first_bar: KernelDiagnosis | None = None
    for rank, kd in enumerate(record.kernels, 1):
        if kd.profile.harness:
            skipped.append((_short(kd, rank), "harness kernel, outside the workload's forward()"))
            continue
        point = pick_point(kd, level="dram")
        if (
            point is None
            or point.arithmetic_intensity is None
            or point.achieved_flops_per_s is None
            or point.arithmetic_intensity <= 0
            or point.achieved_flops_per_s <= 0
        ):
            bar = _bandwidth_bar(kd, _short(kd, rank))
            if bar is None:
                skipped.append((_short(kd, rank), _why_not(kd)))
            elif len(bars) >= MAX_POINTS:
                skipped.append((_short(kd, rank), f"only the first {MAX_POINTS} bandwidth bars are drawn"))
            else:
                bars.append(bar)
                first_bar = first_bar or kd
            continue
        if len(points) >= MAX_POINTS:
            skipped.append((_short(kd, rank), f"only the first {MAX_POINTS} plottable kernels are drawn"))
            continue
        points.append(
            PlottedKernel(
                _short(kd, rank), point.arithmetic_intensity, point.achieved_flops_per_s, point.precision
            )
        )
        used_precisions.add(point.precision)
        used_precisions.update(p for p, v in kd.profile.metrics.flops.items() if v and v > 0)
        reference = reference or kd
    if reference is None:
        device = first_bar.profile.device.name if first_bar else None
        return ChartPlan(points=(), not_plotted=tuple(skipped), device=device, bars=tuple(bars))

    memory_roofs, compute_roofs = _roofs(record, reference.profile.device.peaks, used_precisions)
    return ChartPlan(
        points=tuple(points),
        not_plotted=tuple(skipped),
        memory_roofs=memory_roofs,
        compute_roofs=compute_roofs,
        device=reference.profile.device.name,
        bars=tuple(bars),
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


def roofline_png(record: RunRecord) -> bytes | None:
    """The roofline chart of ``record`` as PNG bytes.

    Args:
        record: the run; kernels are numbered in record order, as in the reports.

    Returns:
        PNG bytes: the roofline, with a panel of DRAM bandwidth bars under it for kernels without FLOPs
        (or only that panel when no kernel has FLOPs); None when no kernel can be drawn either way
        (static or timing-only mode, no FLOPs and no DRAM traffic anywhere).
    """
    plan = chart_plan(record)
    if not plan.points and not plan.bars:
        return None

    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    roof_height = FIGSIZE[1] if plan.points else 0.0
    bar_height = _BAR_BASE_INCHES + _BAR_INCHES * len(plan.bars) if plan.bars else 0.0
    caption_height = _CAPTION_INCHES if plan.not_plotted else 0.0
    height = roof_height + bar_height + caption_height
    with matplotlib.rc_context():
        matplotlib.rcdefaults()
        fig = Figure(figsize=(FIGSIZE[0], height), dpi=DPI)
        FigureCanvasAgg(fig)
        device = f" — {plan.device}" if plan.device else ""
        if plan.points and plan.bars:
            roof_ax, bar_ax = fig.subplots(2, 1, height_ratios=[roof_height, bar_height])
            _draw_roofline(roof_ax, plan)
            roof_ax.set_title("Roofline" + device, fontsize=11)
            _draw_bars(bar_ax, plan.bars)
            bar_ax.set_title("Kernels without FLOPs: achieved DRAM bandwidth vs the DRAM roof", fontsize=9)
        elif plan.points:
            roof_ax = fig.add_subplot()
            _draw_roofline(roof_ax, plan)
            roof_ax.set_title("Roofline" + device, fontsize=11)
        else:
            bar_ax = fig.add_subplot()
            _draw_bars(bar_ax, plan.bars)
            bar_ax.set_title(
                "DRAM bandwidth" + device + "\nno FLOPs measured, so no arithmetic intensity: "
                "achieved bandwidth vs the DRAM roof",
                fontsize=10,
            )
        if plan.not_plotted:
            caption = "Not plotted: " + summarize_not_plotted(plan.not_plotted, limit=3)
            fig.text(0.01, 0.01, caption, fontsize=7, color="0.35", wrap=True)
        # Margins in inches, converted to figure fractions: the figure's height varies with the bars.
        fig.subplots_adjust(
            left=0.1 if not plan.bars else 0.25,
            right=0.96,
            top=1 - 0.55 / height,
            bottom=(caption_height + 0.55) / height,
            hspace=1.1 / ((roof_height + bar_height) / 2) if plan.points and plan.bars else None,
        )
        if plan.points and plan.bars:  # the roofline keeps its usual width; only the bars need wide labels
            box = roof_ax.get_position()
            roof_ax.set_position((0.1, box.y0, 0.86, box.height))
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return buffer.getvalue()


_BAR_INCHES = 0.42
"""Height of one bandwidth bar's row."""
_BAR_BASE_INCHES = 1.2
"""The bar panel's axis, labels and title."""
_CAPTION_INCHES = 0.45
"""The "Not plotted" caption at the bottom."""


def _draw_roofline(ax: Axes, plan: ChartPlan) -> None:
    """The log-log roofline: memory and compute roofs, one point per kernel with FLOPs."""
    top_compute = max((v for _, v in plan.compute_roofs), default=None)
    top_memory = max((v for _, v in plan.memory_roofs), default=None)
    xs = [p.intensity for p in plan.points]
    ys = [p.flops_per_s for p in plan.points]
    for _, peak in plan.compute_roofs:
        ys.append(peak)
        xs.extend(peak / bw for _, bw in plan.memory_roofs)
    x_lo, x_hi = min(xs) / 4, max(xs) * 4
    y_lo, y_hi = min(ys) / 4, max(ys) * 3

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, y_hi)
    ax.set_xlabel("DRAM arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("achieved FLOP/s")
    ax.grid(True, which="major", linewidth=0.5, alpha=0.4)

    for i, (label, bw) in enumerate(plan.memory_roofs):
        x_end = top_compute / bw if top_compute else x_hi
        ax.plot(
            [x_lo, x_end],
            [x_lo * bw, x_end * bw],
            color="0.25",
            linestyle=("-", "--", ":")[i % 3],
            lw=1.2,
        )
        # Label where the roof enters the plot, rotated along it (log-log: a straight line).
        x_text = max(x_lo * 1.3, y_lo * 1.6 / bw)
        if x_text < x_end:
            (px0, py0), (px1, py1) = ax.transData.transform(
                [(x_text, x_text * bw), (x_text * 10, x_text * 10 * bw)]
            )
            ax.annotate(
                f"{label} {fmt_bandwidth(bw)}",
                (x_text, x_text * bw),
                textcoords="offset points",
                xytext=(-2, 5),
                fontsize=8,
                color="0.25",
                rotation=math.degrees(math.atan2(py1 - py0, px1 - px0)),
                rotation_mode="anchor",
            )
    for label, peak in plan.compute_roofs:
        x_start = peak / top_memory if top_memory else x_lo
        ax.plot([x_start, x_hi], [peak, peak], color="0.45", lw=1.2)
        ax.annotate(
            f"{label} {fmt_flops(peak)}",
            (x_hi, peak),
            textcoords="offset points",
            xytext=(-4, 3),
            ha="right",
            fontsize=8,
            color="0.35",
        )
    for i, p in enumerate(plan.points):
        color = _COLORS[i % len(_COLORS)]
        ax.scatter([p.intensity], [p.flops_per_s], s=40, color=color, zorder=3)
        ax.annotate(
            f"{p.label} ({p.precision.upper()})",
            (p.intensity, p.flops_per_s),
            textcoords="offset points",
            xytext=(6, -10 - 9 * (i % 2)),
            fontsize=8,
            color=color,
        )


def _draw_bars(ax: Axes, bars: tuple[BandwidthBar, ...]) -> None:
    """One horizontal bar per kernel without FLOPs, on a linear axis from 0: a grey bar up to the DRAM roof
    (the peak bandwidth, closed by a dark tick), the achieved bandwidth over it in colour, and
    ``achieved = share of peak`` written beside it."""
    top = max(max(b.achieved_bytes_per_s, b.peak_bytes_per_s or 0.0) for b in bars)
    rows = list(range(len(bars)))[::-1]  # the first kernel on top
    for row, b in zip(rows, bars, strict=True):
        if b.peak_bytes_per_s:
            ax.barh(row, b.peak_bytes_per_s, height=0.7, color="0.92", edgecolor="0.75", lw=0.6)
            ax.plot([b.peak_bytes_per_s] * 2, [row - 0.4, row + 0.4], color="0.2", lw=1.6)
        ax.barh(row, b.achieved_bytes_per_s, height=0.42, color=_COLORS[1])
        # The label right of the bar, or inside it (white, right-aligned) when the bar is too long for it.
        inside = b.achieved_bytes_per_s > 0.5 * top
        ax.annotate(
            b.describe(),
            (b.achieved_bytes_per_s, row),
            textcoords="offset points",
            xytext=(-4, 0) if inside else (4, 0),
            ha="right" if inside else "left",
            va="center",
            fontsize=8,
            color="white" if inside else "0.1",
        )
    ax.set_yticks(rows, [b.label for b in bars], fontsize=8)
    ax.set_ylim(-0.6, len(bars) - 0.4)
    ax.set_xlim(0, top * 1.04)
    ticks = [t for t in ax.get_xticks() if 0 <= t <= top * 1.04]
    ax.set_xticks(ticks, [fmt_bandwidth(t) if t else "0" for t in ticks], fontsize=8)
    ax.set_xlabel("achieved DRAM bandwidth (grey bar: the DRAM roof, peak bandwidth)", fontsize=9)
    ax.grid(True, axis="x", linewidth=0.5, alpha=0.4)
