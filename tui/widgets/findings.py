"""The findings of one kernel: a ranked list and the selected finding's full explanation and evidence."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from tui.viewmodels import FindingItem, severity_label
from tui.widgets.evidence import EvidenceTable

SEVERITY_STYLES = {"high": "$error bold", "medium": "$warning bold", "low": "$primary", "info": "$text-muted"}


def item_prompt(item: FindingItem) -> Content:
    """One line of the findings list, the severity coloured."""
    if item.kind != "finding" or item.view is None:
        return Content.styled(item.label, "$text-muted italic")
    fv = item.view
    sev = Content.styled(f"{severity_label(fv.severity):4}", SEVERITY_STYLES.get(fv.severity, ""))
    speed = Content.styled(f" {item.speedup}", "$success") if item.speedup else Content("")
    return Content.assemble(f"{fv.rank} ", sev, " ", (fv.category, "$accent"), speed, "  ", fv.title)


class FindingsList(OptionList):
    """Findings in ranked order; then the profiler's own rules and the skipped rules."""

    def show(self, items: Sequence[FindingItem]) -> None:
        """Replace the list."""
        self.clear_options()
        self.add_options([Option(item_prompt(item), id=f"item-{i}") for i, item in enumerate(items)])
        if items:
            self.highlighted = 0


class FindingDetail(VerticalScroll):
    """Everything about one finding: explanation, estimate, evidence, transforms, source lines."""

    def compose(self) -> ComposeResult:
        yield Static(id="finding-head")
        yield Label("Evidence", id="evidence-label", classes="section")
        yield EvidenceTable(id="evidence")
        yield Static(id="finding-tail")

    def show(self, item: FindingItem | None, tool: str = "the profiler") -> None:
        """Show ``item`` (None: nothing to show)."""
        head = self.query_one("#finding-head", Static)
        tail = self.query_one("#finding-tail", Static)
        table = self.query_one("#evidence", EvidenceTable)
        label = self.query_one("#evidence-label", Label)
        self.scroll_home(animate=False)
        if item is None:
            head.update(Content.styled("No findings for this kernel.", "$text-muted"))
            tail.update("")
            table.display = label.display = False
            return
        if item.view is None:
            head.update(Content.assemble((item.label, "bold"), "\n", "\n".join(item.lines)))
            tail.update("")
            table.display = label.display = False
            return
        fv = item.view
        parts: list[Content | str | tuple[str, str]] = [
            (f"{severity_label(fv.severity)} ", SEVERITY_STYLES.get(fv.severity, "")),
            (fv.category, "$accent"),
            "\n",
            (fv.title, "bold"),
            "\n\n",
            fv.explanation,
        ]
        if fv.speedup:
            parts += ["\n\n", (fv.speedup, "$success" if "n/a" not in fv.speedup else "$text-muted")]
        if fv.recoverable:
            parts += ["\n", (fv.recoverable, "$text-muted")]
        head.update(Content.assemble(*parts))
        table.display = label.display = bool(fv.evidence)
        table.show(fv.evidence)
        more: list[Content | str | tuple[str, str]] = []
        if fv.transforms:
            more += [("Suggested transforms", "bold"), " (best first; o: optimize)\n"]
            more += ["\n".join(f"  {i}. {t}" for i, t in enumerate(fv.transforms, 1)), "\n"]
        if fv.source:
            more += ["\n", ("Source lines", "bold"), "\n", "\n".join(f"  {s}" for s in fv.source), "\n"]
        if fv.tool_rules:
            more += ["\n", (f"Also reported by {tool}: ", "$text-muted"), ", ".join(fv.tool_rules), "\n"]
        more += [(f"\nrule: {fv.rule}", "$text-muted")]
        tail.update(Content.assemble(*more))
