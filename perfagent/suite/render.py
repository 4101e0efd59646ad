"""A suite's results as text, Markdown or HTML (with a speed-up distribution plot), or JSON."""

from __future__ import annotations

import base64
import html
import io
import json
import math

from perfagent.suite.models import EntryResult, SuiteSummary


def _x(v: float | None) -> str:
    return f"{v:.3g}×" if v is not None else "–"


def _pct(v: float | None) -> str:
    return f"{v:.1f} %" if v is not None else "–"


def _rows_table(rows: list[EntryResult]) -> list[list[str]]:
    table = [["entry", "verdict", "baseline", "speed-up", "% roofline before → after", "won", "failure"]]
    for r in sorted(rows, key=lambda r: r.name):
        speed = r.speedup if r.speedup is not None else r.optimize_speedup
        table.append(
            [
                r.name,
                r.verdict or ("–" if r.correct is None else ("pass" if r.correct else "fail")),
                f"{r.baseline_s * 1e6:.4g} µs" if r.baseline_s else "–",
                _x(speed),
                f"{_pct(r.pct_of_roofline_before)} → {_pct(r.pct_of_roofline_after)}",
                ", ".join(r.transforms_won) or "–",
                r.failure or "",
            ]
        )
    return table


def _headline(s: SuiteSummary) -> list[tuple[str, str]]:
    fast = ", ".join(f"fast_{p} = {v:.0%}" for p, v in s.fast_p.items())
    return [
        ("entries", str(s.total) + (" (interrupted: partial — --resume finishes it)" if s.partial else "")),
        (
            "correct",
            f"{s.correct}/{s.verified} verified"
            + (f" ({s.correct_rate:.0%})" if s.correct_rate is not None else ""),
        ),
        ("fast_p", fast or "–"),
        *(
            [
                (
                    "fast_p over torch.compile",
                    ", ".join(f"fast_{p} = {v:.0%}" for p, v in s.fast_p_compile.items()),
                )
            ]
            if s.fast_p_compile
            else []
        ),
        ("geomean speed-up", _x(s.geomean_speedup)),
        (
            "% of roofline (mean)",
            f"{_pct(s.mean_pct_of_roofline_before)} → {_pct(s.mean_pct_of_roofline_after)}",
        ),
        ("transforms that won", ", ".join(f"{t} ({n})" for t, n in s.transforms_won.items()) or "–"),
        ("failures", ", ".join(f"{c} ({n})" for c, n in s.failures.items()) or "none"),
        ("skipped", "; ".join(f"{why} ({n})" for why, n in s.skipped.items()) or "none"),
        (
            "wall time",
            f"{s.wall_s:.1f} s on {s.workers} worker(s), {s.executor}" if s.wall_s is not None else "–",
        ),
    ]


def render_text(rows: list[EntryResult], s: SuiteSummary) -> str:
    lines = [f"{k:>22}: {v}" for k, v in _headline(s)]
    table = _rows_table(rows)
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    lines.append("")
    lines.extend("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in table)
    if s.flagged:
        lines.append("")
        lines.extend(f"review {name}: {', '.join(flags)}" for name, flags in s.flagged.items())
    lines.extend(f"note: {n}" for n in s.notes)
    return "\n".join(lines) + "\n"


def render_markdown(rows: list[EntryResult], s: SuiteSummary, *, plot: bool = True) -> str:
    out = ["# perfagent suite", "", "| | |", "|---|---|"]
    out += [f"| {k} | {v} |" for k, v in _headline(s)]
    out += [""]
    table = _rows_table(rows)
    out.append("| " + " | ".join(table[0]) + " |")
    out.append("|" + "---|" * len(table[0]))
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in table[1:]]
    png = speedup_histogram_png(s) if plot else None
    if png:
        out += ["", f"![speed-up distribution](data:image/png;base64,{png})"]
    return "\n".join(out) + "\n"


def render_html(rows: list[EntryResult], s: SuiteSummary) -> str:
    head = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in _headline(s))
    table = _rows_table(rows)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in table[1:])
    ths = "".join(f"<th>{html.escape(c)}</th>" for c in table[0])
    png = speedup_histogram_png(s)
    img = (
        f'<img alt="speed-up distribution" src="data:image/png;base64,{png}">'
        if png
        else "<p>no measured speed-ups</p>"
    )
    style = "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}"
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>perfagent suite</title><style>{style}</style></head>"
        f"<body><h1>perfagent suite</h1><table>{head}</table><h2>Speed-up distribution</h2>{img}"
        f"<h2>Entries</h2><table><tr>{ths}</tr>{body}</table></body></html>\n"
    )


def render_json(rows: list[EntryResult], s: SuiteSummary) -> str:
    return (
        json.dumps(
            {"summary": s.model_dump(mode="json"), "entries": [r.model_dump(mode="json") for r in rows]},
            indent=2,
        )
        + "\n"
    )


def speedup_histogram_png(s: SuiteSummary) -> str | None:
    """A log-scale histogram of the measured speed-ups (base64 PNG), None when there are none."""
    values = [v for v in s.speedups.values() if v > 0]
    if not values:
        return None
    # matplotlib takes about a second to import: only a suite's chart loads it
    import matplotlib

    matplotlib.use("Agg")
    # pyplot only after the Agg backend is chosen: a headless machine has no display
    import matplotlib.pyplot as plt

    logs = [math.log2(v) for v in values]
    lo, hi = math.floor(min(logs + [0.0])), math.ceil(max(logs + [0.0])) + 1
    fig, ax = plt.subplots(figsize=(6, 3), dpi=100)
    ax.hist(logs, bins=[lo + i * 0.25 for i in range(int((hi - lo) / 0.25) + 1)], color="#4c72b0")
    ax.axvline(0.0, color="black", linewidth=1)
    ax.set_xlabel("speed-up over the reference (log2: 1 = 2×, −1 = 0.5×)")
    ax.set_ylabel("entries")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def render_suite(rows: list[EntryResult], s: SuiteSummary, fmt: str) -> str:
    """The suite in ``fmt`` ('text', 'json', 'md' or 'html')."""
    if fmt == "json":
        return render_json(rows, s)
    if fmt == "md":
        return render_markdown(rows, s)
    if fmt == "html":
        return render_html(rows, s)
    return render_text(rows, s)
