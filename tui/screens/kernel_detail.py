"""One kernel: roofline and speed of light, findings with evidence, hot source lines."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static, TabbedContent, TabPane

from perfagent.records import RunRecord
from perfagent.render.chart import chart_plan
from perfagent.render.view import tool_label
from tui.chart import shows_bandwidth
from tui.screens.walkthrough import WalkthroughScreen
from tui.source_viewmodel import source_view
from tui.viewmodels import (
    SOL_NOTE,
    FindingItem,
    finding_items,
    kernel_headline,
    launch_rows,
    occupancy_rows,
    short_name,
    sol_rows,
)
from tui.widgets import BarPanel, FindingDetail, FindingsList, RooflineChart, SourcePane

NARROW = 110
"""Below this width the overview stacks the chart above the panels."""


class KernelDetailScreen(Screen[None]):
    """Tabs: Roofline & SOL, Findings, Source. ``o`` starts the optimize walkthrough on the chosen finding."""

    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("1", "tab('overview')", "Roofline"),
        Binding("2", "tab('findings')", "Findings"),
        Binding("3", "tab('source')", "Source"),
        Binding("o", "optimize", "Optimize"),
    ]

    def __init__(self, record: RunRecord, index: int) -> None:
        super().__init__()
        self.record = record
        self.index = index
        self.kernel = record.kernels[index]
        self.items: list[FindingItem] = finding_items(record, index)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="kernel-title")
        with TabbedContent(initial="overview", id="detail-tabs"):
            with TabPane("1 Roofline & SOL", id="overview"), Horizontal(id="overview-body"):
                with Vertical(id="chart-box"):
                    yield RooflineChart(chart_plan(self.record), self.index + 1, id="roofline")
                    yield Static(id="chart-caption")
                with VerticalScroll(id="sol-box"):
                    yield BarPanel("Speed of light", sol_rows(self.kernel), note=SOL_NOTE, id="sol")
                    yield BarPanel("Occupancy", occupancy_rows(self.kernel), id="occupancy")
                    yield BarPanel("Launch", launch_rows(self.kernel), id="launch")
            with (
                TabPane(f"2 Findings ({len(self.kernel.findings)})", id="findings"),
                Vertical(id="findings-body"),
            ):
                yield FindingsList(id="findings-list")
                yield FindingDetail(id="finding-detail")
            with TabPane("3 Source", id="source"):
                yield SourcePane(id="source-pane")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = short_name(self.kernel)
        first, second = kernel_headline(self.record, self.index)
        # Labelled as the text report labels it: its "% of peak" is bytes/s against the bandwidth roof,
        # not the speed-of-light panel's "how busy" percentages.
        self.query_one("#kernel-title", Static).update(
            Content.assemble((first, "bold"), "\n", ("Roofline ", "bold"), (second, "$text-muted"))
        )
        chart = self.query_one(RooflineChart)
        plan = chart.plan
        tag = f"[{self.index + 1}] "
        left_out = next((why for name, why in plan.not_plotted if name.startswith(tag)), None)
        parts: list[Content | str | tuple[str, str]] = []
        if shows_bandwidth(plan, self.index + 1):
            parts.append(
                (
                    "█ achieved DRAM bandwidth  ░ up to the DRAM roof ┃  (no FLOPs, so no arithmetic intensity)",
                    "$text-muted",
                )
            )
            if left_out:
                parts += ["\n", ("Not on the chart: ", "$warning"), left_out]
        elif plan.points:
            parts.append(("● this kernel  ○ others  (log FLOP/s vs FLOP/B)", "$text-muted"))
            if left_out:
                parts += ["\n", ("Not on the chart: ", "$warning"), left_out]
        caption = self.query_one("#chart-caption", Static)
        caption.update(Content.assemble(*parts))
        caption.display = bool(parts)
        self.query_one(FindingsList).show(self.items)
        self.query_one(FindingDetail).show(
            self.items[0] if self.items else None, tool_label(self.record.tool)
        )
        self.query_one(SourcePane).show(source_view(self.record, self.index))
        self._layout()

    def on_resize(self) -> None:
        self._layout()

    def _layout(self) -> None:
        self.set_class(self.size.width < NARROW, "-narrow")

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id == "findings-list" and event.option_index < len(self.items):
            self.query_one(FindingDetail).show(self.items[event.option_index], tool_label(self.record.tool))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option_list.id == "findings-list":
            self.query_one(FindingDetail).focus()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        focus = {"findings": "#findings-list", "source": "#source-pane", "overview": "#sol-box"}.get(
            event.pane.id or ""
        )
        if focus:
            self.query_one(focus).focus()

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab

    def action_back(self) -> None:
        self.app.pop_screen()

    def selected_finding(self) -> int:
        """The finding the walkthrough starts from: the highlighted one on the Findings tab, else the first."""
        highlighted = self.query_one(FindingsList).highlighted
        if (
            highlighted is not None
            and highlighted < len(self.items)
            and self.items[highlighted].kind == "finding"
        ):
            return highlighted
        return 0

    def action_optimize(self) -> None:
        self.app.push_screen(WalkthroughScreen(self.record, self.index, self.selected_finding()))
