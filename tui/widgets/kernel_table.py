"""The kernel list: one row per kernel with its time, share, throughput bars and top finding."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType

from tui.viewmodels import SHARE_WIDTH, KernelRow, bar
from tui.widgets.row_table import RowTable

_FIXED = {"rank": 2, "time": 8, "share": SHARE_WIDTH}
WIDE = 100
"""From this width on the sort key's column has its full title and the bars are wider."""
SORT_MARK = "▼"
"""Marks the column the list is sorted by (the library's priority: recoverable time)."""


def column_widths(total: int) -> dict[str, int]:
    """Column widths for a table ``total`` cells wide (each column also gets 2 cells of padding).

    The list is ranked by recoverable time, so its column is shown at every width (a narrow table
    sorted by a column it does not show reads as unsorted): below ``WIDE`` cells it is compact and the
    throughput bars shrink to make room. The kernel name stops growing at 44 cells and the rest goes to
    the top finding, which then shows its title as well as its category.
    """
    wide = total >= WIDE
    bar_w = 3 if not wide else 5 if total < 120 else 10
    widths = dict(_FIXED, sm=bar_w + 4, mem=bar_w + 4, recoverable=12 if wide else 8)
    rest = max(20, total - sum(widths.values()) - 2 * (len(widths) + 2) - 2)
    widths["name"] = max(10, min(44, rest * 55 // 100))
    widths["finding"] = max(10, rest - widths["name"])
    return widths


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(1, width - 1)] + "…"


class KernelTable(RowTable):
    """Kernels in the library's priority order; Enter opens one."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "select_cursor", "Open kernel")]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "kernel-table--bar",
        "kernel-table--bar-busy",
        "kernel-table--high",
        "kernel-table--medium",
        "kernel-table--low",
        "kernel-table--info",
        "kernel-table--muted",
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self._rows: list[KernelRow] = []
        self._width = 0

    def show(self, rows: Sequence[KernelRow]) -> None:
        """Fill the table (kept when the width changes)."""
        self._rows = list(rows)
        self._fill(force=True)

    def on_resize(self) -> None:
        self._fill()

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"kernel-table--{name}", partial=True)

    def _bar(self, pct: float | None, width: int) -> Text:
        bar_w = width - 4
        if pct is None:
            return Text(" " * bar_w + " n/a", style=self._style("muted"))
        busy = pct >= 60.0
        text = Text(bar(pct, bar_w), style=self._style("bar-busy" if busy else "bar"))
        text.append(f"{pct:3.0f}%".rjust(4), style=Style(bold=busy))
        return text

    def _fill(self, force: bool = False) -> None:
        width = self.size.width
        if width == 0 or (width == self._width and not force):
            return
        self._width = width
        w = column_widths(width)
        cursor = self.cursor_row
        self.clear(columns=True)
        self.add_column("#", width=w["rank"], key="rank")
        self.add_column("Kernel", width=w["name"], key="name")
        self.add_column(Text("Time", justify="right"), width=w["time"], key="time")
        self.add_column(Text("Share", justify="right"), width=w["share"], key="share")
        self.add_column("Compute", width=w["sm"], key="sm")
        self.add_column("Memory", width=w["mem"], key="mem")
        title = ("Recoverable" if w["recoverable"] >= 12 else "Recov.") + SORT_MARK
        self.add_column(Text(title, justify="right"), width=w["recoverable"], key="recoverable")
        self.add_column("Top finding", width=w["finding"], key="finding")
        for r in self._rows:
            finding = r.category or "—"
            if r.category and w["finding"] >= 30:
                finding = f"{r.category} · {r.title}"
            cells = [
                Text(str(r.rank), justify="right"),
                Text(_cut(r.name, w["name"])),
                Text(r.duration, justify="right"),
                Text(r.share, justify="right"),
                self._bar(r.sm_pct, w["sm"]),
                self._bar(r.memory_pct, w["mem"]),
                Text(r.recoverable, justify="right", style=self._style("muted")),
            ]
            cells.append(Text(_cut(finding, w["finding"]), style=self._style(r.severity or "muted")))
            self.add_row(*cells, key=str(r.index))
        if self._rows:
            self.move_cursor(row=min(max(cursor, 0), len(self._rows) - 1), animate=False)
