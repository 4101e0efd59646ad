"""Human-readable views of an optimize result: the terminal summary and the run folder's summary.md.

Both show the before/after table (time, % of roofline, the targeted metric), every candidate with its
verdict and reason, the best (or that nothing won, and why), and the plan's skipped steps. A candidate
accepted although its targeted metric did not move shows as "accepted (another route)", and the
headline says the best won by another route. JSON is the
record itself (``RunRecord.model_dump_json``).
"""

from __future__ import annotations

from pathlib import Path

from perfagent.optimize.apply import needs_settings_note
from perfagent.records import CandidateOutcome, OptimizeBaseline, OptimizeResult, TableRow
from perfagent.render.units import fmt_number, fmt_pct, fmt_seconds, fmt_speedup

NA = "n/a"


def fmt_value(value: float | None, unit: str) -> str:
    """A table cell in its unit."""
    if value is None:
        return NA
    if unit == "s":
        return fmt_seconds(value)
    if unit == "%":
        return fmt_pct(value)
    if unit == "x":
        return fmt_speedup(value)
    return fmt_number(value) + (f" {unit}" if unit else "")


def change(row: TableRow) -> str:
    """How the row moved: a factor for times, points for percentages, a relative change otherwise."""
    b, a = row.before, row.after
    if b is None or a is None:
        return ""
    if row.unit == "s":
        if a <= 0:
            return ""
        return f"{fmt_speedup(b / a)} {'faster' if b > a else 'slower' if b < a else ''}".strip()
    if row.unit == "%":
        return f"{a - b:+.3g} pt"
    if row.unit == "x":
        return ""
    if b == 0:
        return ""
    return f"{(a - b) / abs(b) * 100:+.3g} %"


ANOTHER_ROUTE = "won by another route"


def verdict_label(c: CandidateOutcome) -> str:
    """The verdict as shown: 'accepted (another route)' when the targeted metric did not confirm the win."""
    return f"{c.verdict} (another route)" if c.accepted and c.route == "another" else c.verdict


def headline(result: OptimizeResult) -> str:
    """One line: the best, or that nothing won and why."""
    best = result.candidate(result.best) if result.best else None
    waiting = sum(1 for c in result.candidates if c.verdict == "proposed")
    if waiting:  # a two-machine run between its phases
        run = result.run_dir or "RUN"
        return (
            f"{waiting} proposal(s) waiting: run `perfagent optimize --evaluate {run}` on the GPU machine"
            + (f" (best so far: {best.id}, {fmt_speedup(best.speedup)})" if best is not None else "")
        )
    if best is not None:
        line = f"best: {best.id} ({best.transform}, {best.backend}) — {fmt_speedup(best.speedup)} faster than the original"
        if best.route == "another":
            line += f"; {ANOTHER_ROUTE} ({best.metric or 'the targeted metric'} did not move as expected)"
        return line
    if not result.candidates:
        return "no candidate was produced"
    if not result.gpu:
        return "no candidate was accepted: no GPU here, so nothing was timed (no speed-up is claimed)"
    return "no candidate was accepted: none was correct and faster beyond noise"


def best_settings_note(result: OptimizeResult) -> str | None:
    """For a best candidate measured with ``-D`` macros or launch geometry: that it needs them (None otherwise)."""
    best = result.candidate(result.best) if result.best else None
    if best is None:
        return None
    return needs_settings_note(best.defines, best.launch, f"{Path(best.file).stem}.launch.toml")


def _candidate_line(c: CandidateOutcome) -> str:
    speed = f" {fmt_speedup(c.speedup)}" if c.speedup is not None else ""
    return (
        f"  {c.id:<4} {c.transform:<18} {c.backend:<8} {verdict_label(c):<15}{speed}  {c.reason}{_repair(c)}"
    )


def _repair(c: CandidateOutcome) -> str:
    """' (repair 1 of c1)' for a candidate a repair request produced ('' otherwise)."""
    return f" (repair {c.repairs} of {c.repair_of})" if c.repair_of else ""


def render_text(result: OptimizeResult) -> str:
    """The terminal summary."""
    b = result.baseline
    lines = [
        f"perfagent optimize: {result.target}",
        f"  backend  {result.backend} — {result.backend_reason}"
        if result.backend_reason
        else f"  backend  {result.backend}",
        f"  device   {result.device}"
        + (
            ""
            if result.gpu or result.device.startswith("none")
            else " — no GPU: candidates are verified where possible, never timed"
        ),
    ]
    lines += _baseline_lines(b)
    lines += ["", "before / after (original → best):"]
    lines += _table_lines(result.table)
    lines += [
        "",
        f"candidates ({len(result.candidates)}, {result.iterations_used} of {result.iterations} iterations):",
    ]
    lines += [_candidate_line(c) for c in result.candidates] or ["  (none)"]
    lines += ["", headline(result)]
    settings = best_settings_note(result)
    if settings:
        lines.append(f"  {settings}" + ("" if result.applied else " (--apply)"))
    lines += _winner_lines(result)
    lines += _not_tried_lines(result)
    if result.stopped:
        lines.append(f"stopped: {result.stopped}")
    if result.samples and result.samples > 1:
        lines.append(
            f"samples: {result.samples} per request, {result.duplicates_dropped or 0} duplicate(s) dropped before measuring"
        )
    for err in result.llm_errors:
        lines.append(f"LLM error: {err}")
    if result.applied is not None:
        lines.append(
            f"applied: {result.applied.candidate} written to {result.applied.path} (original kept as {result.applied.backup})"
        )
        lines += [f"  note: {n}" for n in result.applied.notes]
    spent = cost_line(result)
    if spent:
        lines.append(spent)
    if result.run_dir:
        lines.append(f"run folder: {result.run_dir}")
    lines += [f"note: {n}" for n in [*b.notes, *result.notes]]
    return "\n".join(lines)


def _baseline_lines(b: OptimizeBaseline) -> list[str]:
    """The original's time and its first finding."""
    lines: list[str] = []
    base = f"  baseline {fmt_seconds(b.time_s)}" + (f" ({b.timer})" if b.timer else " (not timed)")
    if b.pct_of_roofline is not None:
        base += f", {fmt_pct(b.pct_of_roofline)} of roofline"
    if b.kernel:
        base += f", kernel {b.kernel}"
    lines.append(base)
    if b.findings:
        f = b.findings[0]
        lines.append(f"  finding  [{f.severity}] {f.category}: {f.title}")
    return lines


def _not_tried_lines(result: OptimizeResult) -> list[str]:
    """The plan steps that were skipped, and why (those with no recipe in one line)."""
    lines: list[str] = []
    skipped = [p for p in result.plan if p.skipped]
    if skipped:
        lines.append("not tried:")
        no_recipe = [p.transform for p in skipped if "no deterministic recipe" in (p.skipped or "")]
        others = [p for p in skipped if p.transform not in no_recipe]
        lines += [f"  {p.transform}: {p.skipped}" for p in others[:8]]
        if len(others) > 8:
            lines.append(f"  … {len(others) - 8} more in the record")
        if no_recipe:
            lines.append(f"  no deterministic recipe (the llm backend can try them): {', '.join(no_recipe)}")
    return lines


def cost_line(result: OptimizeResult) -> str | None:
    """'time: 48.9 s — baseline-profile 9.1 s, verify 14.2 s, ...' (None: a record from before)."""
    cost = result.cost
    if cost is None or result.wall_s is None:
        return None
    shown = [f"{name} {seconds:.1f} s" for name, seconds in cost.stages.items() if seconds >= 0.05]
    line = f"time: {result.wall_s:.1f} s — {', '.join(shown) or 'nothing measured'}"
    if cost.reprofiles or cost.reprofiles_skipped:
        line += f"; {cost.reprofiles} candidate re-profile(s), {cost.reprofiles_skipped} winner(s) not re-profiled"
    if cost.fresh_workers:
        line += f"; {cost.fresh_workers} fresh worker(s), {cost.workers_ahead} of them started ahead"
    if cost.profiles:
        torch_free = sum(1 for p in cost.profiles if p.harness == "torch-free")
        line += f"; {len(cost.profiles)} ncu profile(s), {torch_free} through the torch-free harness"
    return line


def _table_lines(rows: list[TableRow]) -> list[str]:
    if not rows:
        return ["  (nothing measured)"]
    width = max(len(r.quantity) for r in rows)
    out = [f"  {'quantity':<{width}}  {'before':>12}  {'after':>12}  change"]
    for r in rows:
        note = f"  ({r.note})" if r.note else ""
        out.append(
            f"  {r.quantity:<{width}}  {fmt_value(r.before, r.unit):>12}  {fmt_value(r.after, r.unit):>12}  {change(r)}{note}"
        )
    return out


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(result: OptimizeResult) -> str:
    """summary.md: the before/after table, the candidates, the plan."""
    b = result.baseline
    lines = [
        f"# perfagent optimize: `{result.target}`",
        "",
        f"- backend: {result.backend}"
        + (f" ({_md_escape(result.backend_reason)})" if result.backend_reason else ""),
        f"- device: {result.device}"
        + (
            ""
            if result.gpu or result.device.startswith("none")
            else " (no GPU: nothing timed, no speed-up claimed)"
        ),
        f"- kernel: {b.kernel or NA}",
        f"- iterations: {result.iterations_used} of {result.iterations}; stopped: {_md_escape(result.stopped) or NA}",
        f"- {_md_escape(headline(result))}",
        *([f"- {_md_escape(n)}"] if (n := best_settings_note(result)) else []),
        *(
            [
                f"- applied: {result.applied.candidate} written to `{result.applied.path}` (backup `{result.applied.backup}`)"
            ]
            + [f"  - {_md_escape(n)}" for n in result.applied.notes]
            if result.applied
            else []
        ),
        "",
        "## Before / after",
        "",
        "| quantity | before (original) | after (best) | change | note |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {r.quantity} | {fmt_value(r.before, r.unit)} | {fmt_value(r.after, r.unit)} | {change(r)} | {_md_escape(r.note)} |"
        for r in result.table
    ]
    lines += [
        "",
        "## Candidates",
        "",
        "| id | transform | backend | verification | verdict | time | speed-up | targeted metric | reason |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [_candidate_row(c) for c in result.candidates]
    if not result.candidates:
        lines.append("| – | – | – | – | – | – | – | – | no candidate |")
    lines += _plan_markdown(result)
    if result.llm_errors:
        lines += ["", "## LLM errors", "", *[f"- {_md_escape(e)}" for e in result.llm_errors]]
    lines += _cost_markdown(result)
    notes = list(b.notes) + list(result.notes)
    if notes:
        lines += ["", "## Notes", "", *[f"- {_md_escape(n)}" for n in notes]]
    return "\n".join(lines) + "\n"


def _plan_markdown(result: OptimizeResult) -> list[str]:
    """summary.md's plan table: every step, whether it was tried, and why."""
    lines: list[str] = []
    lines += [
        "",
        "## Plan",
        "",
        "| transform | kind | finding | origin | tried | why |",
        "|---|---|---|---|---|---|",
    ]
    for p in result.plan:
        why = p.reason or p.skipped or ""  # records older than ``reason`` have only ``skipped``
        lines.append(
            f"| {p.transform} | {p.kind or '–'} | {p.finding or '–'} | {p.origin} | {'yes' if p.tried else 'no'} | {_md_escape(why)} |"
        )
    return lines


def _candidate_row(c: CandidateOutcome) -> str:
    """One candidate's row of summary.md's table."""
    metric = NA
    if c.metric and (c.metric_before is not None or c.metric_after is not None):
        metric = f"{c.metric}: {fmt_number(c.metric_before)} → {fmt_number(c.metric_after)}"
        if c.route == "another":
            metric += " (did not move as expected)"
    return (
        f"| {c.id} | {c.transform} | {c.backend} | {c.verification.verdict} | {verdict_label(c)} | {fmt_seconds(c.time_s)} "
        f"| {fmt_speedup(c.speedup)} | {_md_escape(metric)} | {_md_escape(c.reason + _repair(c))} |"
    )


def _winner_lines(result: OptimizeResult) -> list[str]:
    """Per plan step, who competed and who won (shown when recipes and the model ran side by side)."""
    steps = [p for p in result.plan if p.backends]
    if not any(len(p.backends) > 1 for p in steps) and result.backend != "auto":
        return []
    lines = ["steps (who proposed → who won):"]
    for p in steps:
        won = f"{p.winner} ({p.winner_backend})" if p.winner else "none accepted"
        lines.append(f"  {p.transform}: {' + '.join(p.backends)} → {won}")
    return lines


def _cost_markdown(result: OptimizeResult) -> list[str]:
    """summary.md's 'Where the time went': seconds by stage, then by iteration, then per ncu profile."""
    cost = result.cost
    if cost is None or not result.wall_s:
        return []
    lines = ["", "## Where the time went", "", f"{_md_escape(cost_line(result) or '')}", ""]
    lines += ["| iteration | transform | wall s | propose s | compile-check s (compiles) | candidates |"]
    lines += ["|---|---|---|---|---|---|"]
    lines += [
        f"| {i.iteration} | {i.transform} | {i.wall_s:.1f} | {i.propose_s:.2f} | {i.compile_check_s:.2f} ({i.compiles}) "
        f"| {i.candidates} |"
        for i in cost.iterations
    ]
    if cost.profiles:
        lines += ["", "| ncu profile of | harness | wall s | ncu runs | why torch |", "|---|---|---|---|---|"]
        lines += [
            f"| {p.of} | {p.harness or 'own program'} | {p.wall_s:.1f} | {p.ncu_runs} "
            f"| {_md_escape(p.harness_reason)} |"
            for p in cost.profiles
        ]
    return lines
