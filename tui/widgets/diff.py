"""A unified diff, coloured by line kind."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import ScrollableContainer
from textual.content import Content
from textual.widgets import Static


def diff_content(diff: str) -> Content:
    """Colour a unified diff: additions, deletions, hunk headers, file headers."""
    if not diff.strip():
        return Content.styled("The candidate has no diff.", "$text-muted")
    parts: list[Content] = []
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "$success"
        elif line.startswith("-"):
            style = "$error"
        elif line.startswith("@@"):
            style = "$accent"
        else:
            style = ""
        parts.append(Content.styled(line, style) if style else Content(line))
    return Content("\n").join(parts)


class DiffView(ScrollableContainer):
    """A scrollable, coloured diff (both directions: code lines are not wrapped)."""

    def compose(self) -> ComposeResult:
        yield Static(id="diff-text")

    def show(self, diff: str) -> None:
        """Replace the diff shown."""
        self.query_one("#diff-text", Static).update(diff_content(diff))
        self.scroll_home(animate=False)
