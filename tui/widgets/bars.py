"""Labelled percentage bars: the speed-of-light and occupancy panels."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from textual.content import Content
from textual.geometry import Size
from textual.widget import Widget

from tui.viewmodels import BarRow, bar


class BarPanel(Widget):
    """A titled block of ``BarRow``s; bars stretch to the panel's width."""

    DEFAULT_CSS = """
    BarPanel { height: auto; }
    """

    def __init__(
        self,
        title: str,
        rows: Sequence[BarRow],
        *,
        note: str = "",
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.title = title
        self.note = note
        """Said under the title (muted, wrapped): what the percentages are."""
        self.rows = list(rows)

    def set_rows(self, title: str, rows: Sequence[BarRow]) -> None:
        """Show other rows."""
        self.title = title
        self.rows = list(rows)
        self.refresh(layout=True)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._content(width).plain.split("\n"))

    def render(self) -> Content:
        return self._content(self.content_size.width)

    def on_resize(self) -> None:
        self.refresh(layout=True)

    def _content(self, width: int) -> Content:
        width = max(width, 20)
        label_w = max((len(r.label) + 2 * r.indent for r in self.rows), default=0)
        text_w = max((len(r.text) for r in self.rows if r.pct is not None), default=0)
        bar_w = max(4, min(40, width - label_w - text_w - 2))
        parts: list[Content | tuple[str, str] | str] = [(self.title, "bold")]
        if self.note:
            parts += ["\n", ("\n".join(textwrap.wrap(self.note, width)), "$text-muted italic")]
        for r in self.rows:
            label = ("  " * r.indent + r.label).ljust(label_w)
            parts.append("\n")
            parts.append((label, "$text-muted" if r.indent else ""))
            parts.append(" ")
            if r.pct is None:
                lines = textwrap.wrap(r.text, max(8, width - label_w - 1)) or [""]
                text = ("\n" + " " * (label_w + 1)).join(lines)
                parts.append((text, "$warning bold" if r.emphasis else ""))
                continue
            style = "$accent" if r.emphasis else "$primary"
            parts.append((bar(r.pct, bar_w), style))
            parts.append(" ")
            parts.append((r.text.rjust(text_w), "bold" if r.emphasis else ""))
        return Content.assemble(*parts)
