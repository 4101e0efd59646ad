"""Tabulate where optimize runs spent their wall time, from their records (``optimize.cost``).

    python3 scripts/optimize_cost_table.py OUT/table.md RUN_DIR [RUN_DIR ...]

Each RUN_DIR holds a ``record.json`` (an optimize run folder); a ``wall_s`` file beside it (the process's
wall seconds, written by the caller) adds the start-up the record cannot see. Writes a markdown table:
per run the process and record wall times, seconds by stage, iterations, candidates, re-profiles and
fresh worker starts (how many were started ahead, ``perfagent.sandbox.standby``); then
per iteration the propose, compile-check and total seconds; then per ncu profile (``cost.profiles``) whose
it was, which harness ncu started (torch-free or torch, and why torch), its wall seconds and ncu runs. A record from before ``cost`` existed shows
its wall time and '–' for the stages.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

STAGES = (
    "baseline-profile",
    "baseline-time",
    "plan",
    "propose",
    "compile-check",
    "build",
    "verify",
    "time",
    "profile",
    "other",
)


def _load(run: Path) -> tuple[dict[str, Any], float | None]:
    record = json.loads((run / "record.json").read_text(encoding="utf-8"))
    wall = run.parent / "wall_s"
    process = float(wall.read_text().strip()) if wall.is_file() else None
    return record.get("optimize") or {}, process


def _secs(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def _name(run: Path) -> str:
    return run.parent.name if run.name == "run" else run.name


def table(runs: list[Path]) -> str:
    head = [
        "entry",
        "process s",
        "record s",
        *STAGES,
        "iterations",
        "candidates",
        "re-profiles (skipped)",
        "fresh workers (started ahead)",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    details = [
        "| entry | iteration | transform | wall s | propose s | compile-check s (compiles) | candidates |"
    ]
    details.append("|---|---|---|---|---|---|---|")
    profiles = [
        "| entry | profile of | harness | wall s | ncu runs | profiled | why torch |",
        "|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        if not (run / "record.json").is_file():
            lines.append(f"| {_name(run)} | no record.json |" + " |" * (len(head) - 2))
            continue
        result, process = _load(run)
        cost = result.get("cost") or {}
        stages = cost.get("stages") or {}
        cells = [_secs(stages.get(s)) if cost else "–" for s in STAGES]
        skipped = cost.get("reprofiles_skipped", "–")
        lines.append(
            f"| {_name(run)} | {_secs(process)} | {_secs(result.get('wall_s'))} | {' | '.join(cells)} "
            f"| {result.get('iterations_used', '–')} | {len(result.get('candidates') or [])} "
            f"| {cost.get('reprofiles', '–')} ({skipped}) "
            f"| {cost.get('fresh_workers', '–')} ({cost.get('workers_ahead', '–')}) |"
        )
        details.extend(
            f"| {_name(run)} | {it['iteration']} | {it['transform']} | {it['wall_s']:.1f} | {it['propose_s']:.2f} "
            f"| {it['compile_check_s']:.2f} ({it['compiles']}) | {it['candidates']} |"
            for it in cost.get("iterations") or []
        )
        profiles.extend(
            f"| {_name(run)} | {p['of']} | {p.get('harness') or 'own program'} | {p.get('wall_s', 0.0):.1f} "
            f"| {p.get('ncu_runs', '–')} | {'yes' if p.get('profiled', True) else 'no'} | {p.get('harness_reason') or ''} |"
            for p in cost.get("profiles") or []
        )
    return (
        "\n".join([*lines, "", "Per iteration:", "", *details, "", "Per ncu profile:", "", *profiles]) + "\n"
    )


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: optimize_cost_table.py OUT.md RUN_DIR [RUN_DIR ...]", file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(table([Path(a) for a in argv[1:]]), encoding="utf-8")
    print(out.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
