"""A log whose lines wrap at the pane's edge (Textual's ``Log`` cuts them there)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static


class WrappedLog(VerticalScroll):
    """Plain-text lines, wrapped to the width and re-wrapped when it changes; follows the newest line
    unless the user scrolled up."""

    DEFAULT_CSS = """
    WrappedLog { padding: 0 1; }
    WrappedLog > Static { width: 1fr; height: auto; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.lines: list[str] = []

    def compose(self) -> ComposeResult:
        yield Static(Content(""), markup=False)

    def on_mount(self) -> None:
        self._update(follow=True)

    def write_line(self, line: str) -> None:
        """Append ``line`` (taken as plain text: brackets are not markup)."""
        self.lines.append(line)
        if self.is_mounted:
            self._update(follow=self.scroll_y >= self.max_scroll_y)

    def clear(self) -> None:
        """Forget every line."""
        self.lines.clear()
        if self.is_mounted:
            self._update(follow=True)

    def _update(self, *, follow: bool) -> None:
        self.query_one(Static).update(Content("\n".join(self.lines)))
        if follow:
            self.call_after_refresh(self.scroll_end, animate=False)
