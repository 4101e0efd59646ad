"""The roofline chart drawn with characters: a pure function of the report's ``ChartPlan`` and a size.

Log-log axes like the PNG chart of the Markdown/HTML reports (``perfagent.render.chart.chart_plan`` decides
which kernels, roofs and peaks are shown, so both charts always agree): memory roofs are diagonal lines,
compute roofs horizontal ones, drawn in braille dots (2×4 dots per cell); kernels are whole-cell markers,
the selected one ``●`` and the others ``○``. Every cell carries a role so the widget can colour it and tests
can read the chart as text. No Textual, no Rich.

Kernels without FLOPs have no arithmetic intensity; like the PNG chart's bar panel, they are drawn as
DRAM bandwidth bars (``█`` achieved, ``░`` up to the DRAM roof ``┃``) when the selected kernel is one of
them or when no kernel has FLOPs (``shows_bandwidth``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from perfagent.render.chart import BandwidthBar, ChartPlan
from perfagent.render.units import fmt_bandwidth, fmt_flops, fmt_share, sig

__all__ = [
    "Cell",
    "ChartGrid",
    "draw_bandwidth",
    "draw_roofline",
    "shows_bandwidth",
    "MIN_HEIGHT",
    "MIN_WIDTH",
]

MIN_WIDTH = 24
MIN_HEIGHT = 7
_BRAILLE_BASE = 0x2800
# Dot bit for (column 0..1, row 0..3) inside a braille cell.
_DOT = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))
_PREFIX = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))

Cell = tuple[str, str]
"""(character, role). Roles: '' (empty), 'axis', 'tick', 'memory-roof', 'compute-roof', 'roof-label',
'point', 'point-other', 'point-label'."""


@dataclass(frozen=True)
class ChartGrid:
    """A drawn chart: ``height`` rows of ``width`` cells, plus what could not be drawn."""

    rows: tuple[tuple[Cell, ...], ...]
    message: str | None = None
    """Why nothing (or not everything) is drawn; None when the chart is complete."""

    def text(self) -> str:
        """The chart as plain text (for tests and logs)."""
        return "\n".join("".join(ch for ch, _ in row).rstrip() for row in self.rows)


def _decade_label(value: float, unit: str = "") -> str:
    for factor, prefix in _PREFIX:
        if value >= factor * 0.999:
            return f"{sig(value / factor)}{prefix}{unit}"
    return sig(value) + unit


class _Canvas:
    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.height = height
        self.dots = [[0] * width for _ in range(height)]
        self.dot_role = [[""] * width for _ in range(height)]
        self.text: list[list[Cell | None]] = [[None] * width for _ in range(height)]

    def dot(self, px: int, py: int, role: str) -> None:
        cx, cy = px // 2, py // 4
        if 0 <= cx < self.width and 0 <= cy < self.height:
            self.dots[cy][cx] |= _DOT[py % 4][px % 2]
            old = self.dot_role[cy][cx]
            self.dot_role[cy][cx] = role if old in ("", role) else "memory-roof"

    def line(self, p0: tuple[float, float], p1: tuple[float, float], role: str) -> dict[int, tuple[int, int]]:
        """Walk between two dot positions; returns, per cell row, the (leftmost, rightmost) cell touched."""
        (x0, y0), (x1, y1) = p0, p1
        steps = max(1, int(math.ceil(max(abs(x1 - x0), abs(y1 - y0)))))
        span: dict[int, tuple[int, int]] = {}
        for i in range(steps + 1):
            t = i / steps
            px, py = round(x0 + (x1 - x0) * t), round(y0 + (y1 - y0) * t)
            self.dot(px, py, role)
            row, col = py // 4, px // 2
            lo, hi = span.get(row, (col, col))
            span[row] = (min(lo, col), max(hi, col))
        return span

    def free(self, row: int, col: int, length: int) -> bool:
        if row < 0 or row >= self.height or col < 0 or col + length > self.width:
            return False
        return all(self.dots[row][c] == 0 and self.text[row][c] is None for c in range(col, col + length))

    def put(self, row: int, col: int, text: str, role: str) -> None:
        for i, ch in enumerate(text):
            if 0 <= col + i < self.width and 0 <= row < self.height:
                self.text[row][col + i] = (ch, role)

    def cells(self) -> list[list[Cell]]:
        out: list[list[Cell]] = []
        for r in range(self.height):
            row: list[Cell] = []
            for c in range(self.width):
                t = self.text[r][c]
                if t is not None:
                    row.append(t)
                elif self.dots[r][c]:
                    row.append((chr(_BRAILLE_BASE + self.dots[r][c]), self.dot_role[r][c]))
                else:
                    row.append((" ", ""))
            out.append(row)
        return out


def _blank(width: int, height: int, message: str) -> ChartGrid:
    return ChartGrid(
        rows=tuple(tuple((" ", "") for _ in range(max(0, width))) for _ in range(max(0, height))),
        message=message,
    )


@dataclass(frozen=True)
class _Frame:
    """The plot area of a roofline chart: log10 bounds of both axes and the size in cells and dots."""

    lx0: float
    lx1: float
    ly0: float
    ly1: float
    label_w: int
    """Cells left of the y axis, for the tick labels."""
    plot_w: int
    plot_h: int

    def to_px(self, lx: float) -> float:
        return (lx - self.lx0) / (self.lx1 - self.lx0) * (self.plot_w * 2 - 1)

    def to_py(self, ly: float) -> float:
        ph = self.plot_h * 4
        return (ph - 1) - (ly - self.ly0) / (self.ly1 - self.ly0) * (ph - 1)

    def cell_of(self, lx: float, ly: float) -> tuple[int, int]:
        return int(self.to_px(lx)) // 2, int(self.to_py(ly)) // 4

    def y_ticks(self) -> list[float]:
        return [10.0**k for k in range(math.ceil(self.ly0), math.floor(self.ly1) + 1)]


_Placed = tuple[int, int, str, bool]
"""A kernel marker: (row, column, label, is it the selected kernel)."""
_LabelSpots = tuple[str, list[tuple[int, int]]]
"""A roof label and the (row, column) spots to try for it, best first."""


def _frame(plan: ChartPlan, width: int, height: int) -> _Frame:
    """Axes spanning every point and roof corner with a margin, at least two decades each."""
    memory = [bw for _, bw in plan.memory_roofs]
    xs = [p.intensity for p in plan.points]
    ys = [p.flops_per_s for p in plan.points]
    for _, peak in plan.compute_roofs:
        ys.append(peak)
        xs.extend(peak / bw for bw in memory)
    lx0, lx1 = math.log10(min(xs) / 4), math.log10(max(xs) * 4)
    ly0, ly1 = math.log10(min(ys) / 4), math.log10(max(ys) * 2.5)
    if lx1 - lx0 < 2:
        mid = (lx0 + lx1) / 2
        lx0, lx1 = mid - 1, mid + 1
    if ly1 - ly0 < 2:
        mid = (ly0 + ly1) / 2
        ly0, ly1 = mid - 1, mid + 1
    y_ticks = [10.0**k for k in range(math.ceil(ly0), math.floor(ly1) + 1)]
    label_w = max((len(_decade_label(v)) for v in y_ticks), default=1)
    return _Frame(lx0, lx1, ly0, ly1, label_w=label_w, plot_w=width - label_w - 1, plot_h=height - 2)


def draw_roofline(plan: ChartPlan, selected: int | None, width: int, height: int) -> ChartGrid:
    """Draw the roofline chart into ``width`` × ``height`` cells.

    Args:
        plan: what to show (``perfagent.render.chart.chart_plan(record)``).
        selected: 1-based rank of the kernel to highlight (its label starts ``[rank]``), or None.
        width: cells across, axes and labels included.
        height: rows, the x-axis and its labels included.

    Returns:
        The grid; ``message`` says why the chart is empty or why the selected kernel is not on it. When
        ``shows_bandwidth`` is true the grid is ``draw_bandwidth``'s instead.
    """
    if shows_bandwidth(plan, selected):
        return draw_bandwidth(plan, selected, width, height)
    if not plan.points:
        reasons = "; ".join(f"{name}: {why}" for name, why in plan.not_plotted) or "no kernels"
        return _blank(width, height, f"Nothing to place on the roofline — {reasons}")
    if width < MIN_WIDTH or height < MIN_HEIGHT:
        return _blank(width, height, "The window is too small for the roofline chart.")
    frame = _frame(plan, width, height)
    canvas = _Canvas(frame.plot_w, frame.plot_h)
    memory_labels = _draw_memory_roofs(canvas, frame, plan)
    compute_labels = _draw_compute_roofs(canvas, frame, plan)
    placed = _draw_points(canvas, frame, plan, selected)
    _place_labels(canvas, placed, compute_labels + memory_labels)
    grid = _with_axes(canvas, frame, width)
    message = None
    if selected is not None and not any(sel for *_, sel in placed):
        why = dict(plan.not_plotted)
        reason = next((w for n, w in why.items() if n.startswith(f"[{selected}] ")), "not placed")
        message = f"This kernel is not on the chart: {reason}."
    return ChartGrid(rows=tuple(tuple(r) for r in grid), message=message)


def _draw_memory_roofs(canvas: _Canvas, frame: _Frame, plan: ChartPlan) -> list[_LabelSpots]:
    """Memory roofs: log y = log x + log bw, from the left edge to where they meet the top compute roof.

    Each memory roof's label sits beside its line: the lowest roof's below-right of it (nothing is under
    it), the others' above-left; rows nearest the middle of the line first.
    """
    memory = [bw for _, bw in plan.memory_roofs]
    top_compute = max((peak for _, peak in plan.compute_roofs), default=None)
    lowest = min(memory, default=None)
    labels: list[_LabelSpots] = []
    for (label, bw), lbw in zip(plan.memory_roofs, (math.log10(b) for b in memory), strict=True):
        end = math.log10(top_compute / bw) if top_compute else frame.lx1
        start, stop = max(frame.lx0, frame.ly0 - lbw), min(end, frame.lx1, frame.ly1 - lbw)
        if start >= stop:
            continue
        span = canvas.line(
            (frame.to_px(start), frame.to_py(start + lbw)),
            (frame.to_px(stop), frame.to_py(stop + lbw)),
            "memory-roof",
        )
        text = f"{label} {fmt_bandwidth(bw)}"
        rows = sorted(span, key=lambda r: abs(r - (min(span) + max(span)) / 2))
        below = [(r, span[r][1] + 2) for r in rows]
        above = [(r, span[r][0] - len(text) - 1) for r in rows]
        labels.append((text, below + above if bw == lowest else above + below))
    return labels


def _draw_compute_roofs(canvas: _Canvas, frame: _Frame, plan: ChartPlan) -> list[_LabelSpots]:
    """Compute roofs: horizontal, from where they meet the top memory roof to the right edge."""
    top_memory = max((bw for _, bw in plan.memory_roofs), default=None)
    labels: list[_LabelSpots] = []
    for label, peak in plan.compute_roofs:
        lp = math.log10(peak)
        start = max(frame.lx0, math.log10(peak / top_memory)) if top_memory else frame.lx0
        if not (frame.ly0 <= lp <= frame.ly1) or start >= frame.lx1:
            continue
        canvas.line(
            (frame.to_px(start), frame.to_py(lp)), (frame.to_px(frame.lx1), frame.to_py(lp)), "compute-roof"
        )
        col, row = frame.cell_of(frame.lx1, lp)
        col = min(col, frame.plot_w - 1)
        text = f"{label} {fmt_flops(peak)}"
        labels.append((text, [(row - 1, col - len(text) + 1), (row + 1, col - len(text) + 1)]))
    return labels


def _draw_points(canvas: _Canvas, frame: _Frame, plan: ChartPlan, selected: int | None) -> list[_Placed]:
    """Kernel markers, the selected kernel last so that it wins a shared cell."""
    prefix = f"[{selected}] " if selected is not None else None
    ordered = sorted(plan.points, key=lambda p: prefix is not None and p.label.startswith(prefix))
    placed: list[_Placed] = []
    for p in ordered:
        is_sel = prefix is not None and p.label.startswith(prefix)
        col, row = frame.cell_of(math.log10(p.intensity), math.log10(p.flops_per_s))
        col, row = min(max(col, 0), frame.plot_w - 1), min(max(row, 0), frame.plot_h - 1)
        canvas.put(row, col, "●" if is_sel else "○", "point" if is_sel else "point-other")
        placed.append((row, col, p.label, is_sel))
    return placed


def _place_labels(canvas: _Canvas, placed: list[_Placed], roof_labels: list[_LabelSpots]) -> None:
    """Labels go only into empty cells: the selected point's first, then the roofs', then the other points'."""
    markers = {(row, col) for row, col, _, _ in placed}
    for row, col, label, is_sel in placed:
        if is_sel:
            _label_point(canvas, markers, (row, col), label, True)
    for text, spots in roof_labels:
        spot = next(((r, c) for r, c in spots if canvas.free(r, c, len(text))), None)
        if spot is not None:
            canvas.put(spot[0], spot[1], text, "roof-label")
    for row, col, label, is_sel in placed:
        if not is_sel:
            _label_point(canvas, markers, (row, col), label, False)


def _label_point(
    canvas: _Canvas, markers: set[tuple[int, int]], at: tuple[int, int], label: str, is_sel: bool
) -> None:
    """Write a point's label (the selected one's in full, else its ``[rank]`` tag) in the first free spot."""
    row, col = at
    tag = label.split(" ", 1)[0]
    for text in [label, tag] if is_sel else [tag]:
        n = len(text)
        spots = (
            (row, col + 2),
            (row - 1, col + 1),
            (row + 1, col + 1),
            (row, col - n - 1),
            (row - 1, col - n),
        )
        for r, c in spots:
            # Two cells clear of any other marker on the row, so a label is never read as a neighbour's.
            near = {(r, x) for x in (c - 2, c - 1, c + n, c + n + 1)} - {(row, col)}
            if canvas.free(r, c, n) and not near & markers:
                canvas.put(r, c, text, "point-label" if is_sel else "point-other")
                return


def _with_axes(canvas: _Canvas, frame: _Frame, width: int) -> list[list[Cell]]:
    """The canvas with the y axis and its decade ticks on the left, the x axis and its labels below."""
    label_w, plot_w = frame.label_w, frame.plot_w
    y_ticks = frame.y_ticks()
    tick_rows = {int(frame.to_py(math.log10(v))) // 4: _decade_label(v) for v in y_ticks}
    grid: list[list[Cell]] = []
    for r, row_cells in enumerate(canvas.cells()):
        lab = tick_rows.get(r)
        left: list[Cell] = [(ch, "tick") for ch in (lab or "").rjust(label_w)]
        left.append(("┤" if lab else "│", "axis"))
        grid.append(left + row_cells)
    x_ticks = [10.0**k for k in range(math.ceil(frame.lx0), math.floor(frame.lx1) + 1)]
    axis: list[Cell] = [(" ", "")] * label_w + [("└", "axis")] + [("─", "axis")] * plot_w
    labels: list[Cell] = [(" ", "")] * width
    for v in x_ticks:
        col = int(frame.to_px(math.log10(v))) // 2
        axis[label_w + 1 + col] = ("┬", "axis")
        text = _decade_label(v) if v >= 1 else sig(v)
        start = min(max(label_w + 1 + col - len(text) // 2, 0), width - len(text))
        if all(labels[start + i][0] == " " for i in range(len(text))) and (
            start == 0 or labels[start - 1][0] == " "
        ):
            for i, ch in enumerate(text):
                labels[start + i] = (ch, "tick")
    title = " FLOP/B"
    if all(ch == " " for ch, _ in labels[width - len(title) - 1 :]):
        for i, ch in enumerate(title):
            labels[width - len(title) + i] = (ch, "tick")
    grid.append(axis[:width])
    grid.append(labels[:width])
    return grid


_EIGHTHS = " ▏▎▍▌▋▊▉"
"""Left-aligned partial blocks, index = eighths of a cell filled."""


def _tag(selected: int | None) -> str | None:
    return f"[{selected}] " if selected is not None else None


def shows_bandwidth(plan: ChartPlan, selected: int | None) -> bool:
    """Whether ``draw_roofline`` draws the bandwidth bars: the selected kernel has no FLOPs but a bar, or no
    kernel has a roofline point and some have bars."""
    if not plan.bars:
        return False
    tag = _tag(selected)
    return not plan.points or (tag is not None and any(b.label.startswith(tag) for b in plan.bars))


def _bar_text(bar: BandwidthBar) -> str:
    if bar.share is None:
        return f"{fmt_bandwidth(bar.achieved_bytes_per_s)} (DRAM peak unknown)"
    return (
        f"{fmt_bandwidth(bar.achieved_bytes_per_s)} = {fmt_share(bar.share)} of "
        f"{fmt_bandwidth(bar.peak_bytes_per_s)} peak"
    )


def draw_bandwidth(plan: ChartPlan, selected: int | None, width: int, height: int) -> ChartGrid:
    """Draw the kernels without FLOPs as DRAM bandwidth bars into ``width`` × ``height`` cells.

    A title row, then two rows per kernel: its label with ``achieved = share of peak``, and the bar on a
    linear scale from 0 (``█`` achieved, ``░`` the rest of the way to the DRAM roof, ``┃`` the roof itself).
    When not every kernel fits, the rows shown are the first ones that include the selected kernel.

    Args:
        plan: what to show (``plan.bars``).
        selected: 1-based rank of the kernel to highlight, or None.
        width: cells across.
        height: rows.

    Returns:
        The grid; ``message`` says why nothing is drawn, or that some kernels did not fit.
    """
    bars = plan.bars
    if not bars:
        return _blank(width, height, "No kernel without FLOPs has DRAM traffic to show.")
    if width < MIN_WIDTH or height < 3:
        return _blank(width, height, "The window is too small for the bandwidth chart.")
    tag = _tag(selected)
    chosen = next((i for i, b in enumerate(bars) if tag is not None and b.label.startswith(tag)), None)
    fits = max(1, (height - 1) // 2)
    first = 0 if chosen is None or chosen < fits else chosen - fits + 1
    shown = bars[first : first + fits]
    top = max(max(b.achieved_bytes_per_s, b.peak_bytes_per_s or 0.0) for b in bars)
    span = width - 1  # the roof tick may sit in the last column
    grid: list[list[Cell]] = [
        _text_row("DRAM bandwidth vs DRAM roof (no FLOPs, so no arithmetic intensity)", "tick", width)
    ]
    for i, bar in enumerate(shown, first):
        is_sel = i == chosen
        label = f"{bar.label}  {_bar_text(bar)}"
        grid.append(_text_row(label, "point-label" if is_sel else "point-other", width))
        grid.append(_bar_row(bar, top, span, width, selected=is_sel))
    while len(grid) < height:
        grid.append(_text_row("", "", width))
    message = None
    if len(shown) < len(bars):
        message = f"{len(bars) - len(shown)} more kernel(s) without FLOPs do not fit; enlarge the window."
    if tag is not None and chosen is None:
        reason = next((w for n, w in plan.not_plotted if n.startswith(tag)), "not placed")
        message = f"This kernel is not on the chart: {reason}."
    return ChartGrid(rows=tuple(tuple(r) for r in grid[:height]), message=message)


def _text_row(text: str, role: str, width: int) -> list[Cell]:
    """``text`` in ``role``, cut or padded to ``width`` cells."""
    row: list[Cell] = [(ch, role) for ch in text[:width]]
    return row + [(" ", "")] * (width - len(row))


def _bar_row(bar: BandwidthBar, top: float, span: int, width: int, *, selected: bool) -> list[Cell]:
    """One kernel's bar on a linear scale (``top`` at ``span`` cells): ``█`` achieved (in eighths),
    ``░`` the rest of the way to the DRAM roof, ``┃`` the roof itself."""
    role = "point" if selected else "point-other"
    exact = bar.achieved_bytes_per_s / top * span
    fill, eighths = int(exact), round((exact - int(exact)) * 8)
    if eighths == 8:
        fill, eighths = fill + 1, 0
    if fill == 0 and eighths == 0:
        eighths = 1  # a measured bandwidth never draws as nothing
    roof = round(bar.peak_bytes_per_s / top * span) if bar.peak_bytes_per_s else None
    row: list[Cell] = []
    for col in range(width):
        if roof is not None and col == roof:
            row.append(("┃", "memory-roof"))
        elif col < fill:
            row.append(("█", role))
        elif col == fill and eighths:
            row.append((_EIGHTHS[eighths], role))
        elif roof is not None and col < roof:
            row.append(("░", "memory-roof"))
        else:
            row.append((" ", ""))
    return row
