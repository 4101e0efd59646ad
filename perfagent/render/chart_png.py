"""The roofline chart of ``perfagent.render.chart.chart_plan`` drawn as PNG bytes, for the Markdown and HTML
reports.

matplotlib is imported inside ``roofline_png`` (it is slow to import and only these formats need it),
drawing goes through the Agg canvas directly (no pyplot, no global figure state), and the output is
deterministic for a given matplotlib: fixed size and dpi, default rc parameters, no 'Software' metadata.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from perfagent.records import RunRecord
from perfagent.render.chart import BandwidthBar, ChartPlan, PlottedKernel, chart_plan, summarize_not_plotted
from perfagent.render.units import fmt_bandwidth, fmt_flops

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["DPI", "FIGSIZE", "roofline_png"]

FIGSIZE = (8.0, 5.0)
"""Inches."""
DPI = 110
_COLORS = ("#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")


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

    # matplotlib takes about a second to import; only the md/html reports draw a chart.
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    heights = _Heights.of(plan)
    with matplotlib.rc_context():
        matplotlib.rcdefaults()
        fig = Figure(figsize=(FIGSIZE[0], heights.total), dpi=DPI)
        FigureCanvasAgg(fig)
        roof_ax = _draw_panels(fig, plan, heights)
        if plan.not_plotted:
            caption = "Not plotted: " + summarize_not_plotted(plan.not_plotted, limit=3)
            fig.text(0.01, 0.01, caption, fontsize=7, color="0.35", wrap=True)
        _set_margins(fig, plan, heights, roof_ax)
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return buffer.getvalue()


@dataclass(frozen=True)
class _Heights:
    """The figure's parts, in inches: the roofline, the bar panel, the caption (0 for a part not drawn)."""

    roof: float
    bars: float
    caption: float

    @classmethod
    def of(cls, plan: ChartPlan) -> _Heights:
        return cls(
            roof=FIGSIZE[1] if plan.points else 0.0,
            bars=_BAR_BASE_INCHES + _BAR_INCHES * len(plan.bars) if plan.bars else 0.0,
            caption=_CAPTION_INCHES if plan.not_plotted else 0.0,
        )

    @property
    def total(self) -> float:
        return self.roof + self.bars + self.caption


def _draw_panels(fig: Figure, plan: ChartPlan, heights: _Heights) -> Axes | None:
    """The roofline panel, the bar panel, or both (roofline on top); returns the roofline's axes if drawn."""
    device = f" — {plan.device}" if plan.device else ""
    if plan.points and plan.bars:
        roof_ax: Axes
        roof_ax, bar_ax = fig.subplots(2, 1, height_ratios=[heights.roof, heights.bars])
        _draw_roofline(roof_ax, plan)
        roof_ax.set_title("Roofline" + device, fontsize=11)
        _draw_bars(bar_ax, plan.bars)
        bar_ax.set_title("Kernels without FLOPs: achieved DRAM bandwidth vs the DRAM roof", fontsize=9)
        return roof_ax
    if plan.points:
        roof_ax = fig.add_subplot()
        _draw_roofline(roof_ax, plan)
        roof_ax.set_title("Roofline" + device, fontsize=11)
        return roof_ax
    bar_ax = fig.add_subplot()
    _draw_bars(bar_ax, plan.bars)
    bar_ax.set_title(
        "DRAM bandwidth" + device + "\nno FLOPs measured, so no arithmetic intensity: "
        "achieved bandwidth vs the DRAM roof",
        fontsize=10,
    )
    return None


def _set_margins(fig: Figure, plan: ChartPlan, heights: _Heights, roof_ax: Axes | None) -> None:
    """Margins in inches, converted to figure fractions: the figure's height varies with the bars."""
    both = bool(plan.points and plan.bars)
    fig.subplots_adjust(
        left=0.1 if not plan.bars else 0.25,
        right=0.96,
        top=1 - 0.55 / heights.total,
        bottom=(heights.caption + 0.55) / heights.total,
        hspace=1.1 / ((heights.roof + heights.bars) / 2) if both else None,
    )
    if both and roof_ax is not None:  # the roofline keeps its usual width; only the bars need wide labels
        box = roof_ax.get_position()
        roof_ax.set_position((0.1, box.y0, 0.86, box.height))


_BAR_INCHES = 0.42
"""Height of one bandwidth bar's row."""
_BAR_BASE_INCHES = 1.2
"""The bar panel's axis, labels and title."""
_CAPTION_INCHES = 0.45
"""The "Not plotted" caption at the bottom."""


def _draw_roofline(ax: Axes, plan: ChartPlan) -> None:
    """The log-log roofline: memory and compute roofs, one point per kernel with FLOPs."""
    limits = _Limits.of(plan)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(limits.x_lo, limits.x_hi)
    ax.set_ylim(limits.y_lo, limits.y_hi)
    ax.set_xlabel("DRAM arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("achieved FLOP/s")
    ax.grid(True, which="major", linewidth=0.5, alpha=0.4)
    _draw_memory_roofs(ax, plan, limits)
    _draw_compute_roofs(ax, plan, limits)
    _draw_points(ax, plan.points)


@dataclass(frozen=True)
class _Limits:
    """The roofline's axis limits: every point and every ridge (where a memory roof meets a compute roof)."""

    x_lo: float
    x_hi: float
    y_lo: float
    y_hi: float
    top_compute: float | None
    top_memory: float | None

    @classmethod
    def of(cls, plan: ChartPlan) -> _Limits:
        xs = [p.intensity for p in plan.points]
        ys = [p.flops_per_s for p in plan.points]
        for _, peak in plan.compute_roofs:
            ys.append(peak)
            xs.extend(peak / bw for _, bw in plan.memory_roofs)
        return cls(
            x_lo=min(xs) / 4,
            x_hi=max(xs) * 4,
            y_lo=min(ys) / 4,
            y_hi=max(ys) * 3,
            top_compute=max((v for _, v in plan.compute_roofs), default=None),
            top_memory=max((v for _, v in plan.memory_roofs), default=None),
        )


def _draw_memory_roofs(ax: Axes, plan: ChartPlan, limits: _Limits) -> None:
    """One sloped line per memory level, up to the top compute roof, labelled along its slope."""
    x_lo = limits.x_lo
    for i, (label, bw) in enumerate(plan.memory_roofs):
        x_end = limits.top_compute / bw if limits.top_compute else limits.x_hi
        ax.plot(
            [x_lo, x_end],
            [x_lo * bw, x_end * bw],
            color="0.25",
            linestyle=("-", "--", ":")[i % 3],
            lw=1.2,
        )
        # Label where the roof enters the plot, rotated along it (log-log: a straight line).
        x_text = max(x_lo * 1.3, limits.y_lo * 1.6 / bw)
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


def _draw_compute_roofs(ax: Axes, plan: ChartPlan, limits: _Limits) -> None:
    """One flat line per precision, from the top memory roof's ridge, labelled at its right end."""
    for label, peak in plan.compute_roofs:
        x_start = peak / limits.top_memory if limits.top_memory else limits.x_lo
        ax.plot([x_start, limits.x_hi], [peak, peak], color="0.45", lw=1.2)
        ax.annotate(
            f"{label} {fmt_flops(peak)}",
            (limits.x_hi, peak),
            textcoords="offset points",
            xytext=(-4, 3),
            ha="right",
            fontsize=8,
            color="0.35",
        )


def _draw_points(ax: Axes, points: tuple[PlottedKernel, ...]) -> None:
    """One coloured point per kernel, its label staggered below it so neighbours do not overlap."""
    for i, p in enumerate(points):
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
