"""The source view: hot lines marked, with code around them when the file is here."""

from __future__ import annotations

import textwrap

from textual.app import ComposeResult
from textual.containers import ScrollableContainer
from textual.content import Content
from textual.widgets import Static

from tui.source_viewmodel import SourceView
from tui.viewmodels import bar, samples_text


def _wrapped(text: str, width: int | None, indent: str = "", first: str = "") -> str:
    """``text`` folded to ``width`` cells (None: one line), the first line after ``first``, the rest after
    ``indent``."""
    if width is None:
        return first + text
    lines = textwrap.wrap(
        text, max(12, width), initial_indent=first, subsequent_indent=indent, break_on_hyphens=False
    )
    return "\n".join(lines) or first


def source_content(view: SourceView, width: int | None = None) -> Content:
    """Lines as ``▶  28 ▇▇▁  1,520 │ code``: hot lines marked with a heat bar and their samples.

    Prose (the caption, a line's note) is wrapped to ``width`` cells; code is never wrapped (a line wider
    than the pane scrolls sideways). None: nothing wrapped.
    """
    if not view.rows:
        return Content.styled(_wrapped(view.caption, width), "$text-muted")
    number_w = max((len(str(r.line)) for r in view.rows if r.line is not None), default=1)
    sample_w = max((len(samples_text(r.samples)) for r in view.rows), default=0)
    parts: list[Content] = [Content.styled(_wrapped(view.caption, width), "$text-muted")]
    for r in view.rows:
        if r.line is None:
            style = "bold" if r.text != "⋮" else "$text-muted"
            parts.append(Content.styled(r.text if r.text == "⋮" else f"── {r.text}", style))
            continue
        heat = bar(r.share * 100 if r.share is not None else None, 4) if r.hot else "    "
        gutter = Content.assemble(
            ("▶ " if r.hot else "  ", "$error bold"),
            (str(r.line).rjust(number_w), "bold" if r.hot else "$text-muted"),
            " ",
            (heat, "$error"),
            (f" {samples_text(r.samples).rjust(sample_w)}" if sample_w else "", "$warning"),
            (" │ ", "$text-muted"),
        )
        code = Content.styled(r.text.replace("\t", "    "), "bold" if r.hot else "")
        parts.append(gutter + code)
        if r.hot and r.note:
            pad = " " * (number_w + 8 + sample_w)
            parts.append(Content.styled(_wrapped(r.note, width, pad + "  ", pad + "└ "), "$warning"))
    return Content("\n").join(parts)


class SourcePane(ScrollableContainer):
    """Scrollable source lines (code not wrapped, prose wrapped to the pane); shows the hottest line first.

    Prose is re-wrapped whenever the pane's width changes: text wider than the pane made it scroll
    sideways, and the horizontal scrollbar's thumb edge (a lone ``▉``) was all that showed of it.
    """

    DEFAULT_CSS = """
    SourcePane { scrollbar-gutter: stable; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.view: SourceView | None = None
        self._width: int | None = None
        self._scrolled = False

    def compose(self) -> ComposeResult:
        yield Static(id="source-text")

    def show(self, view: SourceView) -> None:
        """Show ``view``; its hottest line is brought into view once the pane is on screen."""
        self.view = view
        self._scrolled = False
        self._render_view()

    def on_resize(self) -> None:
        self._render_view()

    def _render_view(self) -> None:
        if self.view is None:
            return
        width = self.scrollable_content_region.width or None
        self._width = width
        self.query_one("#source-text", Static).update(source_content(self.view, width))
        if width is not None and not self._scrolled and self.view.first_hot is not None:
            # Only once the pane has a size (its tab shown): scrolling a hidden pane does nothing.
            self._scrolled = True
            target = max(0, self.view.first_hot + 1 - 4)  # +1: the caption; a few lines of context above
            self.call_after_refresh(self.scroll_to, y=target, animate=False)
