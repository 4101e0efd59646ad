"""The roofline chart widget: draws ``tui.chart.draw_roofline`` at the widget's size, coloured by role."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.widget import Widget

from perfagent.render.chart import ChartPlan
from tui.chart import draw_roofline

_ROLES = ("axis", "tick", "memory-roof", "compute-roof", "roof-label", "point", "point-other", "point-label")


class RooflineChart(Widget):
    """Log-log roofline: memory and compute roofs, the selected kernel ``●`` and the others ``○``."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {f"roofline--{role}" for role in _ROLES}

    def __init__(self, plan: ChartPlan, selected: int | None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.plan = plan
        self.selected = selected
        self.message: str | None = None

    def render(self) -> Text:
        width, height = self.content_size.width, self.content_size.height
        grid = draw_roofline(self.plan, self.selected, width, height)
        self.message = grid.message
        if not any(ch != " " for row in grid.rows for ch, _ in row):
            return Text(
                grid.message or "", style=self.get_component_rich_style("roofline--tick", partial=True)
            )
        styles = {role: self.get_component_rich_style(f"roofline--{role}", partial=True) for role in _ROLES}
        text = Text(no_wrap=True, overflow="crop")
        for i, row in enumerate(grid.rows):
            if i:
                text.append("\n")
            run_role, run = "", list[str]()
            for ch, role in row:
                if role != run_role and run:
                    text.append("".join(run), style=styles.get(run_role))
                    run = []
                run_role = role
                run.append(ch)
            if run:
                text.append("".join(run), style=styles.get(run_role))
        return text
