"""HTML output: one self-contained file (inline CSS, the roofline chart as a base64 PNG data URI).

No scripts, fonts or stylesheets are fetched, so the file opens offline and can be attached or
archived as is. Every piece of text from the record goes through ``html.escape``.
"""

from __future__ import annotations

import base64
from html import escape

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

__all__ = ["CSS", "HtmlRenderer"]

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d232a; margin: 0;
       background: #f6f7f9; }
main { max-width: 1100px; margin: 0 auto; padding: 24px; }
h1 { font-size: 22px; margin: 0 0 12px; }
h2 { font-size: 18px; margin: 0 0 4px; }
h3 { font-size: 15px; margin: 16px 0 8px; }
h4 { font-size: 14px; margin: 4px 0 6px; }
section.kernel, .card { background: #fff; border: 1px solid #dde1e6; border-radius: 8px; padding: 16px 20px;
                        margin: 16px 0; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
pre { background: #f1f3f5; padding: 8px 10px; border-radius: 6px; overflow-x: auto; margin: 6px 0; }
.kname { color: #47525e; word-break: break-all; margin-bottom: 10px; }
table { border-collapse: collapse; margin: 6px 0; }
th, td { text-align: left; padding: 3px 10px 3px 0; vertical-align: top; }
table.facts th { color: #47525e; font-weight: 600; white-space: nowrap; }
table.evidence { font-size: 13px; }
table.evidence th { border-bottom: 1px solid #c9ced4; }
table.evidence td.num { text-align: right; font-variant-numeric: tabular-nums; }
.mode { background: #fff7e0; border: 1px solid #f0c36d; border-radius: 8px; padding: 10px 14px; margin: 12px 0; }
.notes { background: #fffbe8; border-left: 4px solid #e0a800; padding: 8px 14px; margin: 12px 0; }
.finding { border-top: 1px solid #eceef1; padding: 10px 0 4px; }
.badge { display: inline-block; font-size: 11px; font-weight: 700; padding: 1px 7px; border-radius: 4px;
         color: #fff; margin-right: 6px; }
.sev-high { background: #c62828; } .sev-medium { background: #e69500; } .sev-low { background: #1e88b4; }
.sev-info { background: #5c6b7a; }
.cat { color: #7b2d8e; margin-right: 6px; }
.speedup { font-weight: 600; color: #1b7a36; }
.dim, .skipped { color: #7a8591; font-size: 12.5px; }
.chart img { max-width: 100%; height: auto; }
ul.tool { margin: 4px 0; padding-left: 20px; }
"""
"""The whole stylesheet, inlined in ``<style>``."""


def _e(text: str) -> str:
    return escape(text, quote=True)


def _facts(facts: tuple[tuple[str, str], ...]) -> str:
    rows = "".join(f"<tr><th>{_e(label)}</th><td>{_e(value)}</td></tr>" for label, value in facts)
    return f'<table class="facts">{rows}</table>'


def _finding(f: FindingView) -> str:
    parts = [
        '<div class="finding">',
        f'<h4>{f.rank}. <span class="badge sev-{_e(f.severity)}">{_e(f.severity.upper())}</span>'
        f'<code class="cat">{_e(f.category)}</code>{_e(f.title)}</h4>',
        f"<p>{_e(f.explanation)}</p>",
    ]
    if f.evidence:
        rows = "".join(
            f"<tr><td><code>{_e(r.metric)}</code></td><td class='num'>{_e(r.value)}</td>"
            f"<td class='num'>{_e(r.threshold)}</td><td>{_e(r.unit)}</td><td>{_e(r.note)}</td></tr>"
            for r in f.evidence
        )
        parts.append(
            '<table class="evidence"><thead><tr><th>Metric</th><th>Value</th><th>Threshold</th><th>Unit</th>'
            f"<th>Note</th></tr></thead><tbody>{rows}</tbody></table>"
        )
    if f.speedup:
        parts.append(f'<p class="speedup">{_e(f.speedup)}</p>')
    if f.recoverable:
        parts.append(f"<p>{_e(f.recoverable)}</p>")
    if f.transforms:
        parts.append(
            "<p>Suggested transforms: " + ", ".join(f"<code>{_e(t)}</code>" for t in f.transforms) + "</p>"
        )
    if f.source:
        parts.append("<pre>" + _e("\n".join(f.source)) + "</pre>")
    trail = f"rule <code>{_e(f.rule)}</code>"
    if f.tool_rules:
        trail += " · the profiler agrees: " + ", ".join(f"<code>{_e(r)}</code>" for r in f.tool_rules)
    parts.append(f'<p class="dim">{trail}</p>')
    parts.append("</div>")
    return "\n".join(parts)


def _kernel(k: KernelView, tool_label: str) -> str:
    parts = [
        f'<section class="kernel" id="kernel-{k.rank}">',
        f"<h2>{k.rank}. {_e(k.short_name)}</h2>",
        f'<div class="kname mono">{_e(k.name)}</div>',
        _facts(k.facts),
    ]
    if k.findings:
        parts.append(f"<h3>Findings ({len(k.findings)}, ranked)</h3>")
        parts.extend(_finding(f) for f in k.findings)
    else:
        head, _, rest = no_findings(k).partition(": ")
        parts.append(f"<p><strong>{_e(head)}:</strong> {_e(rest)}</p>")
    if k.hot_lines:
        parts.append("<h3>Hot source lines</h3><pre>" + _e("\n".join(k.hot_lines)) + "</pre>")
    if k.tool_findings:
        items = "".join(f"<li>{_e(line)}</li>" for line in k.tool_findings)
        parts.append(f'<h3>{_e(tool_label)} says:</h3><ul class="tool">{items}</ul>')
    if k.skipped:
        parts.append('<div class="skipped">' + "<br>".join(_e(line) for line in k.skipped) + "</div>")
    parts.append("</section>")
    return "\n".join(parts)


def _chart(record: RunRecord) -> str:
    png = roofline_png(record)
    if png is None:
        why = "static mode measures nothing" if record.mode == "static" else why_no_chart(record)
        return f'<p class="dim">No roofline chart: {_e(why)}.</p>'
    data = base64.b64encode(png).decode("ascii")
    plan = chart_plan(record)
    alt = "Roofline chart" if plan.points else "DRAM bandwidth chart"
    captions = []
    if plan.bars:
        captions.append(f"{BARS_CAPTION}: {_e(describe_bars(plan.bars))}.")
    if plan.not_plotted:
        captions.append(f"Not on the chart: {_e(summarize_not_plotted(plan.not_plotted))}.")
    caption = f'<figcaption class="dim">{"<br>".join(captions)}</figcaption>' if captions else ""
    return (
        f'<figure class="chart card"><img alt="{alt}" src="data:image/png;base64,{data}">{caption}</figure>'
    )


def _document(view: ReportView, record: RunRecord) -> str:
    body = [f"<h1>{_e(view.title)}</h1>", f'<div class="card">{_facts(view.facts)}</div>']
    if view.mode_statement:
        body.append(
            f'<div class="mode"><strong>Mode: {_e(view.mode)}.</strong> {_e(view.mode_statement)}</div>'
        )
    if view.notes:
        items = "".join(f"<li>{_e(note)}</li>" for note in view.notes)
        body.append(f'<div class="notes"><strong>Notes</strong><ul>{items}</ul></div>')
    body.append(_chart(record))
    if not view.kernels:
        body.append("<p>No kernels in this record.</p>")
    body.extend(_kernel(k, view.tool_label) for k in view.kernels)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_e(view.title)}: {_e(record.target)}</title>\n"
        f"<style>{CSS}</style>\n</head>\n<body>\n<main>\n" + "\n".join(body) + "\n</main>\n</body>\n</html>\n"
    )


class HtmlRenderer(Renderer):
    """The report as one self-contained HTML page."""

    def render(self, record: RunRecord) -> str:
        """The HTML document (inline CSS, chart as a data URI, all record text escaped)."""
        return _document(build_view(record), record)
