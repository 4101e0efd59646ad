"""The measured facts behind a finding, as a table."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import DataTable

from perfagent.render.view import EvidenceRow


class EvidenceTable(DataTable[Text]):
    """Metric, measured value, the rule's threshold, and a note."""

    def on_mount(self) -> None:
        self.cursor_type = "none"
        self.zebra_stripes = True
        self.add_columns("Metric", "Value", "Threshold", "Note")

    def show(self, rows: Sequence[EvidenceRow]) -> None:
        """Replace the rows."""
        self.clear()
        for r in rows:
            value = f"{r.value} {r.unit}".strip() if r.unit and r.unit != "×" else f"{r.value}{r.unit}"
            threshold = (
                f"{r.threshold} {r.unit}".strip() if r.threshold and r.unit and r.unit != "×" else r.threshold
            )
            self.add_row(Text(r.metric), Text(value, justify="right"), Text(threshold), Text(r.note))
