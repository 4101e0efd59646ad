"""Key bindings of every screen (read from their BINDINGS, so help never drifts) and facts about the run."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from perfagent.records import RunRecord
from tui.viewmodels import run_facts

Section = tuple[str, Sequence[BindingType]]

_MOVES = (
    ("↑ ↓  PgUp PgDn", "move in lists and tables"),
    ("Home End", "first / last row"),
    ("Enter", "open / choose"),
    ("Tab", "next pane"),
)
_KEY_NAMES = {"question_mark": "?", "escape": "Esc", "enter": "Enter"}


def _bindings(bindings: Sequence[BindingType]) -> list[tuple[str, str]]:
    rows = []
    for b in bindings:
        if not isinstance(b, Binding) or not b.description:
            continue
        key = b.key_display or ", ".join(_KEY_NAMES.get(k.strip(), k.strip()) for k in b.key.split(","))
        rows.append((key, b.description))
    return rows


def help_content(sections: Sequence[Section], record: RunRecord | None) -> Content:
    """The help text: keys per screen, then the run's facts and notes."""
    parts: list[Content | str | tuple[str, str]] = [("perfagent — keys", "bold $accent")]
    for title, bindings in [("Everywhere", ()), *sections]:
        rows = list(_MOVES) if title == "Everywhere" else _bindings(bindings)
        if not rows:
            continue
        parts += ["\n\n", (title, "bold")]
        for key, what in rows:
            parts += ["\n  ", (key.ljust(16), "$accent"), what]
    if record is not None:
        parts += ["\n\n", ("About this run", "bold $accent")]
        for label, text in run_facts(record):
            parts += ["\n  ", (f"{label}:".ljust(10), "bold"), text]
        for note in record.notes:
            parts += ["\n  ", ("note: ", "$warning"), note]
    parts += [
        "\n\n",
        ("Estimates (speed-up, recoverable time) are upper bounds, labelled as such.", "$text-muted"),
    ]
    return Content.assemble(*parts)


class HelpScreen(ModalScreen[None]):
    """Keys and run facts; Escape or ? closes it."""

    BINDINGS = [Binding("escape,question_mark", "dismiss", "Close", key_display="Esc")]

    def __init__(self, sections: Sequence[Section], record: RunRecord | None) -> None:
        super().__init__()
        self.sections = sections
        self.record = record

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body") as body:
            body.border_title = "Help"
            body.border_subtitle = "Esc closes"
            yield Static(help_content(self.sections, self.record), id="help-text")
