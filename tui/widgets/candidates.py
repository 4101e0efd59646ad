"""Reviewing an optimize run's candidates: the table, the highlighted one's reason, diff, checks and
before/after, and accepting (through the one apply path) or rejecting it.

Used by the walkthrough after a live run and by the saved-run screen; both hand it the core's
``CandidateOutcome``s (derived display values: ``tui.candidate_view``). Reasons and check details wrap to the pane: they are sentences, not codes.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import DataTable, Static, TabbedContent, TabPane

from perfagent.records import CandidateOutcome
from perfagent.render.units import fmt_seconds
from profilers.core_errors import BadInput
from tui.candidate_view import check_mark, metric_rows, settings_note, speedup_text
from tui.messages import CandidateAccepted, CandidateRejected
from tui.optimize_bridge import OptimizeBridge
from tui.widgets.diff import DiffView
from tui.widgets.row_table import RowTable
from tui.widgets.wrapped_log import WrappedLog

CANDIDATE_COLUMNS = ("Id", "Transform", "Backend", "Verdict", "Before", "After", "Speed-up", "Decision")
MARK_COLOURS = {"✓": "green", "✗": "red", "!": "yellow"}


def check_rows(c: CandidateOutcome) -> list[tuple[Text, str, str]]:
    """(mark, check, detail) rows of a candidate: its checks, or its reason when it reports none, and the
    launch settings a win needs."""
    marks = [check_mark(ch) for ch in c.checks]
    rows = [
        (Text(mark, style=f"{MARK_COLOURS.get(mark, '')} bold".strip()), ch.name, ch.detail)
        for mark, ch in zip(marks, c.checks, strict=True)
    ]
    if not c.checks:
        rows.append((Text(""), "no checks reported", c.reason))
    note = settings_note(c)
    if note:  # the source alone does not carry this win: accept writes the spec too
        rows.append((Text("!", style="yellow bold"), "launch settings", note))
    return rows


def reason_content(c: CandidateOutcome, decision: str = "") -> Content:
    """The highlighted candidate in words: id, transform, the loop's verdict and why, the user's decision."""
    parts: list[Content | str | tuple[str, str]] = [
        (f"{c.id} ", "bold"),
        (c.transform, "$accent"),
        " · ",
        (c.verdict, "$success bold" if c.accepted else "$error bold"),
    ]
    if c.reason:
        parts += [": ", c.reason]
    if decision:
        parts += ["  ", (f"({decision})", "$text-muted")]
    return Content.assemble(*parts)


class CandidateReview(Vertical):
    """CandidateOutcomes of one run; the highlighted one's reason, diff, checks and measurements below."""

    DEFAULT_CSS = """
    CandidateReview { height: 1fr; }
    CandidateReview #wt-candidates { height: auto; max-height: 7; }
    CandidateReview #wt-reason { height: auto; max-height: 6; padding: 0 1; }
    CandidateReview #wt-tabs { height: 1fr; }
    """

    def __init__(self, *, with_log: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.with_log = with_log
        self.candidates: tuple[CandidateOutcome, ...] = ()
        self.decisions: dict[str, str] = {}
        self._checks_width = 0

    def compose(self) -> ComposeResult:
        yield RowTable(id="wt-candidates", cursor_type="row", zebra_stripes=True)
        yield Static(id="wt-reason")
        with TabbedContent(initial="tab-log" if self.with_log else "tab-diff", id="wt-tabs"):
            if self.with_log:
                with TabPane("Log", id="tab-log"):
                    yield WrappedLog(id="wt-log")
            with TabPane("Diff", id="tab-diff"):
                yield DiffView(id="wt-diff")
            with TabPane("Checks", id="tab-checks"):
                yield RowTable(id="wt-checks", cursor_type="row", zebra_stripes=True)
            with TabPane("Before/after", id="tab-metrics"):
                yield RowTable(id="wt-metrics", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        self.query_one("#wt-candidates", DataTable).add_columns(*CANDIDATE_COLUMNS)
        self.query_one("#wt-metrics", DataTable).add_columns("Metric", "Before", "After", "Change")
        self.query_one("#wt-reason").display = False

    # ----------------------------------------------------------------- showing

    def write_log(self, line: str) -> None:
        """Append a line to the Log tab (when there is one)."""
        if self.with_log:
            self.query_one("#wt-log", WrappedLog).write_line(line)

    def clear(self) -> None:
        """No candidates (a new run starts)."""
        self.candidates = ()
        self.decisions.clear()
        self.query_one("#wt-candidates", DataTable).clear()
        self.query_one("#wt-reason").display = False
        if self.with_log:
            self.query_one("#wt-log", WrappedLog).clear()
            self.query_one("#wt-tabs", TabbedContent).active = "tab-log"

    def show(self, candidates: Sequence[CandidateOutcome]) -> None:
        """Show ``candidates``, the first the loop accepted (else the first) highlighted, its diff open."""
        self.candidates = tuple(candidates)
        table = self.query_one("#wt-candidates", DataTable)
        table.clear()
        for c in self.candidates:
            table.add_row(
                Text(c.id),
                Text(c.transform),
                Text(c.backend),
                Text(c.verdict, style="green" if c.accepted else "red"),
                Text(fmt_seconds(c.time_s_before), justify="right"),
                Text(fmt_seconds(c.time_s), justify="right"),
                Text(speedup_text(c), justify="right"),
                Text(self.decisions.get(c.id, "")),
                key=c.id,
            )
        if not self.candidates:
            return
        best = next((i for i, c in enumerate(self.candidates) if c.accepted), 0)
        table.move_cursor(row=best, animate=False)
        table.focus()
        self.show_candidate(self.candidates[best])
        self.query_one("#wt-tabs", TabbedContent).active = "tab-diff"

    def current(self) -> CandidateOutcome | None:
        """The highlighted candidate, or None."""
        if not self.candidates:
            return None
        row = self.query_one("#wt-candidates", DataTable).cursor_row
        return self.candidates[min(max(row, 0), len(self.candidates) - 1)]

    @on(DataTable.RowHighlighted, "#wt-candidates")
    def _highlighted(self) -> None:
        self.show_candidate(self.current())

    def on_resize(self) -> None:
        if self.size.width != self._checks_width:
            self.show_candidate(self.current())

    def show_candidate(self, c: CandidateOutcome | None) -> None:
        """The reason, diff, checks and before/after of ``c``."""
        if c is None:
            return
        reason = self.query_one("#wt-reason", Static)
        reason.update(reason_content(c, self.decisions.get(c.id, "")))
        reason.display = True
        self.query_one(DiffView).show(c.diff)
        self._fill_checks(c)
        metrics = self.query_one("#wt-metrics", DataTable)
        metrics.clear()
        rows = metric_rows(c)
        for m in rows:
            metrics.add_row(
                Text(m.name),
                Text(m.before, justify="right"),
                Text(m.after, justify="right"),
                Text(m.change, justify="right"),
            )
        if not rows:
            metrics.add_row(Text("no measurements"), Text(""), Text(""), Text(""))

    def _fill_checks(self, c: CandidateOutcome) -> None:
        """The checks, the detail column as wide as the pane leaves it, its sentences wrapped."""
        checks = self.query_one("#wt-checks", DataTable)
        rows = check_rows(c)
        self._checks_width = self.size.width
        name_w = max([len("Check"), *(len(name) for _, name, _ in rows)])
        # 3 columns of 2 cells padding, the mark, the scrollbar, the pane's own padding.
        detail_w = max(20, self.size.width - name_w - 1 - 3 * 2 - 2 - 2)
        checks.clear(columns=True)
        checks.add_column("", width=1)
        checks.add_column("Check", width=name_w)
        checks.add_column("Detail", width=detail_w)
        for mark, name, detail in rows:
            checks.add_row(mark, Text(name), Text(detail), height=None)

    # ----------------------------------------------------------------- deciding

    def accept(self, bridge: OptimizeBridge) -> None:
        """Write the highlighted candidate through the apply path, when the loop accepted it."""
        c = self.current()
        if c is None:
            return
        if not c.accepted:
            self.notify(
                f"The loop rejected {c.id}: {c.reason or c.verdict}. Only candidates that passed verification are written.",
                title="Not accepted",
                severity="error",
            )
            return
        try:
            written = bridge.accept(c)
        except BadInput as exc:
            self.notify(str(exc), title="Accept failed", severity="error")
            return
        kept = "original saved to" if written.backup_created else "earlier original kept in"
        self.write_log(f"accepted {c.id}: wrote {written.path} ({kept} {written.backup})")
        for note in written.notes:
            self.write_log(f"  {note}")
        extra = f" {' '.join(written.notes)}" if written.notes else ""
        self.notify(f"Wrote {written.path}; {kept} {written.backup.name}.{extra}", title=f"Accepted {c.id}")
        self.post_message(CandidateAccepted(c, written.path, written.backup, written.backup_created))
        self._decide(c, "accepted")

    def reject(self) -> None:
        """Mark the highlighted candidate rejected; nothing is written."""
        c = self.current()
        if c is None:
            return
        self.write_log(f"rejected {c.id}: nothing written")
        self.notify(f"Rejected {c.id}; nothing was written.", title="Rejected")
        self.post_message(CandidateRejected(c))
        self._decide(c, "rejected")

    def _decide(self, c: CandidateOutcome, decision: str) -> None:
        self.decisions[c.id] = decision
        table = self.query_one("#wt-candidates", DataTable)
        table.update_cell(c.id, table.ordered_columns[-1].key, Text(decision), update_width=True)
        self.query_one("#wt-reason", Static).update(reason_content(c, decision))
