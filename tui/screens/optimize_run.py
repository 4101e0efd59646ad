"""A saved optimize run (``perfagent tui RUN`` on a folder the loop wrote): its baseline and outcome, and
every candidate to review — the same review as after a live run, accept included (the one apply path)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from perfagent.records import RunRecord
from tui.candidate_view import Outcome, outcome_of, summary_counts
from tui.optimize_bridge import OptimizeBridge
from tui.screens.kernels import KernelsScreen
from tui.viewmodels import saved_run_facts
from tui.widgets import CandidateReview


def saved_outcome(record: RunRecord) -> Outcome:
    """The candidates of a saved optimize run, as the review shows them."""
    return outcome_of(record)


class OptimizeRunScreen(Screen[None]):
    """The run's facts above its candidates; ``a``/``x`` accept or reject the highlighted one."""

    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("k", "kernels", "Kernels"),
        Binding("a", "accept", "Accept"),
        Binding("x", "reject", "Reject"),
    ]

    def __init__(self, record: RunRecord) -> None:
        super().__init__()
        self.record = record
        self.outcome = saved_outcome(record)

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="run-head-box"):
            yield Static(id="run-head")
        yield CandidateReview(id="run-review")
        yield Footer()

    def on_mount(self) -> None:
        result = self.record.optimize
        self.sub_title = f"optimize run {Path(self.record.target).name}"
        title = Text.assemble(
            ("Saved optimize run ", "bold"),
            (self.record.id or "", "bold"),
            "  ",
            summary_counts(self.outcome.candidates),
        )
        facts = saved_run_facts(result) if result is not None else [("Target", self.record.target)]
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column(ratio=1)
        for label, text in facts:
            grid.add_row(Text(label, style="bold yellow" if label == "Note" else "bold"), Text(text))
        self.query_one("#run-head", Static).update(Group(title, grid))
        self.query_one(CandidateReview).show(self.outcome.candidates)

    def _bridge(self) -> OptimizeBridge:
        bridge = getattr(self.app, "bridge", None)
        return bridge if isinstance(bridge, OptimizeBridge) else OptimizeBridge()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "kernels":
            return bool(self.record.kernels)
        if action in ("accept", "reject"):
            return bool(self.outcome.candidates)
        if action == "back":
            return len(self.app.screen_stack) > 2
        return True

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_kernels(self) -> None:
        self.app.push_screen(KernelsScreen(self.record))

    def action_accept(self) -> None:
        self.query_one(CandidateReview).accept(self._bridge())

    def action_reject(self) -> None:
        self.query_one(CandidateReview).reject()
