"""Shown while ``perfagent.diagnose`` reads or profiles the target in a worker thread."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Header, LoadingIndicator, Static

from tui.widgets.wrapped_log import WrappedLog


class LoadingScreen(Screen[None]):
    """Progress lines of the load; on failure, the error and its next step."""

    def __init__(self, target: str) -> None:
        super().__init__()
        self.target = target

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="loading-body"):
            yield Static(Content.assemble(("Loading ", "bold"), self.target), id="loading-target")
            yield LoadingIndicator(id="loading-spinner")
            yield Static(id="loading-error")
            yield WrappedLog(id="loading-log")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#loading-error").display = False

    def add_line(self, text: str) -> None:
        """Append a progress line."""
        self.query_one("#loading-log", WrappedLog).write_line(text)

    def show_error(self, message: str, hint: str) -> None:
        """Stop the spinner and say what went wrong and what to do."""
        self.query_one("#loading-spinner").display = False
        error = self.query_one("#loading-error", Static)
        parts: list[Content | str | tuple[str, str]] = [("Could not load: ", "$error bold"), message]
        if hint:
            parts += ["\n", ("Next step: ", "bold"), hint]
        parts += ["\n\n", ("Press q to quit.", "$text-muted")]
        error.update(Content.assemble(*parts))
        error.display = True
