"""Markdown output: the text report's content with evidence tables and the roofline chart.

The chart is embedded as a ``data:image/png;base64,...`` image so that the report is one
self-contained file (no PNG written beside it, nothing to lose when the file is moved or pasted).
GitHub's Markdown view does not display data-URI images; every other viewer we target (VS Code,
pandoc, Jupyter, browsers via the HTML format) does, and the numbers are all in the text anyway.
"""

from __future__ import annotations

import base64
import re

from perfagent.records import RunRecord
from perfagent.render.base import Renderer
from perfagent.render.chart import (
    BARS_CAPTION,
    chart_plan,
    describe_bars,
    summarize_not_plotted,
    why_no_chart,
)
from perfagent.render.chart_png import roofline_png
from perfagent.render.view import FindingView, KernelView, ReportView, build_view, no_findings

__all__ = ["MarkdownRenderer", "md_code", "md_escape"]

_SPECIAL = re.compile(r"([\\`*\[\]<>|])|^(#)|(?<!\w)(_)|(_)(?!\w)")
_BADGES = {"high": "🔴 HIGH", "medium": "🟠 MEDIUM", "low": "🔵 LOW", "info": "ℹ️ INFO"}


def md_escape(text: str) -> str:
    """``text`` with Markdown/HTML specials backslash-escaped and newlines flattened (safe in table cells)."""
    return _SPECIAL.sub(lambda m: "\\" + m.group(0), " ".join(text.split()))


def md_code(text: str) -> str:
    """``text`` as an inline code span, with a fence longer than any backtick run inside."""
    flat = " ".join(text.split())
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def _fence(lines: tuple[str, ...]) -> list[str]:
    longest = max((len(run) for line in lines for run in re.findall(r"`{3,}", line)), default=2)
    fence = "`" * (longest + 1)
    return [fence, *lines, fence]


def _finding(f: FindingView) -> list[str]:
    out = [
        f"#### {f.rank}. {_BADGES.get(f.severity, f.severity.upper())} · {md_code(f.category)} — {md_escape(f.title)}",
        "",
        md_escape(f.explanation),
        "",
    ]
    if f.evidence:
        notes = any(r.note for r in f.evidence)
        out += ["| Metric | Value | Threshold | Unit |" + (" Note |" if notes else "")]
        out += ["|---|---:|---:|---|" + ("---|" if notes else "")]
        out += [
            f"| {md_code(r.metric)} | {md_escape(r.value)} | {md_escape(r.threshold)} | {md_escape(r.unit)} |"
            + (f" {md_escape(r.note)} |" if notes else "")
            for r in f.evidence
        ]
        out.append("")
    if f.speedup:
        out += [f"**{md_escape(f.speedup)}**", ""]
    if f.recoverable:
        out += [md_escape(f.recoverable), ""]
    if f.transforms:
        out += ["Suggested transforms: " + ", ".join(md_code(t) for t in f.transforms), ""]
    if f.source:
        out += ["Source:", "", *_fence(f.source), ""]
    trail = f"rule {md_code(f.rule)}"
    if f.tool_rules:
        trail += " · the profiler agrees: " + ", ".join(md_code(r) for r in f.tool_rules)
    out += [f"<sub>{trail}</sub>", ""]
    return out


def _kernel(k: KernelView, tool_label: str) -> list[str]:
    out = [f"## {k.rank}. {md_escape(k.short_name)}", "", md_code(k.name), ""]
    out += [f"- **{label}:** {md_escape(text)}" for label, text in k.facts]
    out.append("")
    if k.findings:
        out += [f"### Findings ({len(k.findings)}, ranked)", ""]
        for f in k.findings:
            out += _finding(f)
    else:
        out += [no_findings(k), ""]
    if k.hot_lines:
        out += ["**Hot source lines**", "", *_fence(k.hot_lines), ""]
    if k.tool_findings:
        out += [f"**{md_escape(tool_label)} says:**", ""]
        out += [f"- {md_escape(line)}" for line in k.tool_findings]
        out.append("")
    if k.skipped:
        out += [f"<sub>{md_escape(line)}</sub><br>" for line in k.skipped]
        out.append("")
    return out


def _chart(record: RunRecord) -> list[str]:
    png = roofline_png(record)
    if png is None:
        why = "static mode measures nothing" if record.mode == "static" else why_no_chart(record)
        return [f"*No roofline chart: {md_escape(why)}.*", ""]
    data = base64.b64encode(png).decode("ascii")
    plan = chart_plan(record)
    alt = "Roofline chart" if plan.points else "DRAM bandwidth chart"
    out = [f"![{alt}](data:image/png;base64,{data})", ""]
    if plan.bars:
        out += [f"*{BARS_CAPTION}: {md_escape(describe_bars(plan.bars))}.*", ""]
    if plan.not_plotted:
        out += [f"*Not on the chart: {md_escape(summarize_not_plotted(plan.not_plotted))}.*", ""]
    return out


def _report(view: ReportView, record: RunRecord) -> list[str]:
    out = [f"# {md_escape(view.title)}", "", "| | |", "|---|---|"]
    out += [f"| **{label}** | {md_escape(value)} |" for label, value in view.facts]
    out.append("")
    if view.mode_statement:
        out += [f"> **Mode: {md_escape(view.mode)}.** {md_escape(view.mode_statement)}", ""]
    if view.notes:
        out += ["> **Notes**", ">"]
        out += [f"> - {md_escape(note)}" for note in view.notes]
        out.append("")
    out += _chart(record)
    if not view.kernels:
        out += ["No kernels in this record.", ""]
    for k in view.kernels:
        out += _kernel(k, view.tool_label)
    return out


class MarkdownRenderer(Renderer):
    """The report as one self-contained Markdown document."""

    def render(self, record: RunRecord) -> str:
        """The Markdown text (chart inline as a data URI)."""
        lines = _report(build_view(record), record)
        while lines and not lines[-1]:
            lines.pop()
        return "\n".join(lines) + "\n"
