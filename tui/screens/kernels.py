"""The first screen: kernels ranked by recoverable time, with a preview of the highlighted one."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from perfagent.records import RunRecord
from perfagent.render.units import fmt_seconds, fmt_share, fmt_speedup
from tui.messages import KernelOpened
from tui.screens.kernel_detail import KernelDetailScreen
from tui.viewmodels import kernel_rows, run_summary, severity_label, top_finding
from tui.widgets import KernelTable
from tui.widgets.findings import SEVERITY_STYLES


class KernelsScreen(Screen[None]):
    """Kernel list; Enter opens the highlighted kernel's detail."""

    BINDINGS = [Binding("enter", "open", "Open kernel", show=True)]

    def __init__(self, record: RunRecord) -> None:
        super().__init__()
        self.record = record

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="run-summary")
        yield KernelTable(id="kernels")
        yield Static(id="kernel-preview")
        yield Footer()

    def on_mount(self) -> None:
        summary = run_summary(self.record)
        self.sub_title = Path(summary.target).name or summary.target
        parts: list[Content | str | tuple[str, str]] = [(summary.title, "bold")]
        if summary.mode_statement:
            parts += ["\n", (summary.mode_statement, "$warning")]
        for note in summary.notes:
            parts += ["\n", ("note: ", "$warning"), note]
        self.query_one("#run-summary", Static).update(Content.assemble(*parts))
        table = self.query_one(KernelTable)
        table.show(kernel_rows(self.record))
        table.focus()
        self._preview(0)

    def _preview(self, index: int) -> None:
        preview = self.query_one("#kernel-preview", Static)
        if not self.record.kernels:
            preview.update(Content.styled("This record has no kernels.", "$text-muted"))
            return
        kd = self.record.kernels[index]
        top = top_finding(kd)
        parts: list[Content | str | tuple[str, str]] = [(kd.name, "bold")]
        if top is None:
            parts += ["\n", ("no findings", "$text-muted")]
        else:
            parts += [
                "\n",
                (severity_label(top.severity), SEVERITY_STYLES.get(top.severity, "")),
                " ",
                top.title,
            ]
            more = len(kd.findings) - 1
            if more > 0:
                parts.append((f"  (+{more} more)", "$text-muted"))
            estimate = []
            if top.estimated_speedup is not None:
                estimate.append(f"speed-up ≈ {fmt_speedup(top.estimated_speedup)}")
            if top.recoverable_s is not None:
                rec = f"recoverable ≈ {fmt_seconds(top.recoverable_s)}"
                if top.recoverable_share is not None:
                    rec += f" ({fmt_share(top.recoverable_share)} of total)"
                estimate.append(rec)
            if estimate:
                parts += ["\n", (" · ".join(estimate) + " — estimates", "$text-muted")]
        preview.update(Content.assemble(*parts))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self._preview(int(event.row_key.value))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.open(int(event.row_key.value))

    def action_open(self) -> None:
        table = self.query_one(KernelTable)
        if self.record.kernels and table.row_count:
            self.open(table.cursor_row)

    def open(self, index: int) -> None:
        """Push the detail screen of kernel ``index``."""
        self.post_message(KernelOpened(index))
        self.app.push_screen(KernelDetailScreen(self.record, index))
