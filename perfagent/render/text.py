"""Terminal output: the report rendered with rich into a string.

Colour only when asked (``color=True``; the CLI asks when stdout is a terminal), so piped output is
plain text. All user-controlled text (kernel names, messages) goes in as ``rich.text.Text``, never as
markup, so names like ``void k<float>(float[4])`` print verbatim.
"""

from __future__ import annotations

from io import StringIO

from rich import box
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from perfagent.records import RunRecord
from perfagent.render.base import Renderer
from perfagent.render.view import FindingView, KernelView, ReportView, build_view, no_findings

__all__ = ["DEFAULT_WIDTH", "TextRenderer"]

DEFAULT_WIDTH = 100
"""Columns used when no width is given (the CLI passes the terminal's width)."""

SEVERITY_STYLES = {
    "high": "bold white on red",
    "medium": "bold black on yellow",
    "low": "bold black on cyan",
    "info": "bold white on blue",
}


def _facts(facts: tuple[tuple[str, str], ...], *, label_style: str = "bold") -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style=label_style, no_wrap=True)
    grid.add_column(overflow="fold")
    for label, value in facts:
        grid.add_row(label, Text(value))
    return grid


def _indent(renderable: RenderableType, left: int) -> Padding:
    return Padding(renderable, (0, 0, 0, left))


def _finding(f: FindingView) -> RenderableType:
    head = Text.assemble(
        (f"[{f.severity.upper()}]", SEVERITY_STYLES.get(f.severity, "bold")),
        " ",
        (f.category, "magenta"),
        " · ",
        (f.title, "bold"),
    )
    parts: list[RenderableType] = [Text(f"{f.rank}. ") + head]
    body: list[RenderableType] = [Text(f.explanation)]
    if f.evidence:
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
        table.add_column("metric", overflow="fold")
        table.add_column("value", justify="right")
        table.add_column("threshold", justify="right")
        table.add_column("unit")
        show_notes = any(row.note for row in f.evidence)
        if show_notes:
            table.add_column("note", overflow="fold")
        for row in f.evidence:
            cells = [Text(row.metric), Text(row.value), Text(row.threshold), Text(row.unit)]
            table.add_row(*cells, *([Text(row.note)] if show_notes else []))
        body.append(table)
    if f.speedup:
        body.append(Text(f.speedup, style="bold green" if f.rank == 1 else "green"))
    if f.recoverable:
        body.append(Text(f.recoverable))
    if f.transforms:
        body.append(Text.assemble(("suggested transforms: ", "bold"), ", ".join(f.transforms)))
    body.extend(Text.assemble(("source: ", "bold"), (line, "cyan")) for line in f.source)
    trail = f"rule: {f.rule}"
    if f.tool_rules:
        trail += f" · the profiler agrees: {', '.join(f.tool_rules)}"
    body.append(Text(trail, style="dim"))
    parts.append(_indent(Group(*body), 5))
    return Group(*parts)


def _kernel(k: KernelView, tool_label: str) -> RenderableType:
    parts: list[RenderableType] = [
        Rule(Text(f"[{k.rank}] {k.short_name}", style="bold"), align="left", style="blue"),
        Text(k.name, style="bold", overflow="fold"),
        _facts(k.facts, label_style="bold cyan"),
    ]
    if k.findings:
        parts.append(Text(f"\nFindings ({len(k.findings)}, ranked)", style="bold underline"))
        parts.extend(_finding(f) for f in k.findings)
    else:
        parts.append(Text(f"\n{no_findings(k)}", style="bold"))
    if k.hot_lines:
        parts.append(Text("\nHot source lines", style="bold"))
        parts.extend(_indent(Text(line, style="cyan"), 2) for line in k.hot_lines)
    if k.tool_findings:
        parts.append(Text(f"\n{tool_label} says:", style="bold"))
        parts.extend(_indent(Text(f"• {line}"), 2) for line in k.tool_findings)
    if k.skipped:
        parts.append(Text("\n" + "\n".join(k.skipped), style="dim"))
    return Group(*parts)


def _report(view: ReportView) -> list[RenderableType]:
    out: list[RenderableType] = [Text(view.title, style="bold"), _facts(view.facts)]
    if view.mode_statement:
        out.append(
            Panel(
                Text(view.mode_statement),
                title=f"mode: {view.mode}",
                title_align="left",
                border_style="yellow",
            )
        )
    if view.notes:
        notes = Text("Notes:", style="bold yellow")
        for note in view.notes:
            notes.append(f"\n  ! {note}", style="yellow")
        out.append(notes)
    if not view.kernels:
        out.append(Text("No kernels in this record.", style="bold"))
    for k in view.kernels:
        out.append(Text(""))
        out.append(_kernel(k, view.tool_label))
    return out


class TextRenderer(Renderer):
    """The report for a terminal or a ``.txt`` file."""

    def __init__(self, *, color: bool = False, width: int | None = None) -> None:
        """Args:
        color: emit ANSI colour and styles (only for a terminal).
        width: wrap at this many columns (default ``DEFAULT_WIDTH``).
        """
        self.color = color
        self.width = width or DEFAULT_WIDTH

    def render(self, record: RunRecord) -> str:
        """The report as (optionally coloured) text."""
        buffer = StringIO()
        console = Console(
            file=buffer,
            width=self.width,
            force_terminal=self.color,
            color_system="truecolor" if self.color else None,
            no_color=not self.color,
            highlight=False,
            markup=False,
            emoji=False,
            legacy_windows=False,
            force_jupyter=False,
            force_interactive=False,
            soft_wrap=False,
        )
        for renderable in _report(build_view(record)):
            console.print(renderable)
        # Tables and padding fill lines to the full width; drop that so files and diffs stay clean.
        return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()) + "\n"
