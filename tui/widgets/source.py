"""The source view: hot lines marked, with code around them when the file is here."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import ScrollableContainer
from textual.content import Content
from textual.widgets import Static

from tui.viewmodels import SourceView, bar, samples_text


def source_content(view: SourceView) -> Content:
    """Lines as ``▶  28 ▇▇▁  1,520 │ code``: hot lines marked with a heat bar and their samples."""
    if not view.rows:
        return Content.styled(view.caption, "$text-muted")
    width = max((len(str(r.line)) for r in view.rows if r.line is not None), default=1)
    sample_w = max((len(samples_text(r.samples)) for r in view.rows), default=0)
    parts: list[Content] = [Content.styled(view.caption, "$text-muted")]
    for r in view.rows:
        if r.line is None:
            style = "bold" if r.text != "⋮" else "$text-muted"
            parts.append(Content.styled(r.text if r.text == "⋮" else f"── {r.text}", style))
            continue
        heat = bar(r.share * 100 if r.share is not None else None, 4) if r.hot else "    "
        gutter = Content.assemble(
            ("▶ " if r.hot else "  ", "$error bold"),
            (str(r.line).rjust(width), "bold" if r.hot else "$text-muted"),
            " ",
            (heat, "$error"),
            (f" {samples_text(r.samples).rjust(sample_w)}" if sample_w else "", "$warning"),
            (" │ ", "$text-muted"),
        )
        code = Content.styled(r.text.replace("\t", "    "), "bold" if r.hot else "")
        parts.append(gutter + code)
        if r.hot and r.note:
            parts.append(Content.styled(" " * (width + 8 + sample_w) + "└ " + r.note, "$warning"))
    return Content("\n").join(parts)


class SourcePane(ScrollableContainer):
    """Scrollable source lines (not wrapped); scrolls to the hottest line when shown."""

    def compose(self) -> ComposeResult:
        yield Static(id="source-text")

    def show(self, view: SourceView) -> None:
        """Show ``view`` and bring its hottest line into view."""
        self.query_one("#source-text", Static).update(source_content(view))
        if view.first_hot is not None:
            # +1: the caption line; keep a few lines of context above the hot line.
            target = max(0, view.first_hot + 1 - 4)
            self.call_after_refresh(self.scroll_to, y=target, animate=False)
