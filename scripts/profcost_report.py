"""Tables of the staged-profiling cost benchmark (scripts/bench_profiling_cost.sh, issue 27).

    python3 scripts/profcost_report.py WORKDIR LABEL > table.md

WORKDIR holds, for one workload: ``times.tsv`` (label, seconds per run), ``staged_*/record.json`` and the
ncu logs of each staged diagnose (run folders), ``staged_1.json`` (the staged record) and ``single.json``
(the record of one targeted run over every launch: the classification before staging). Prints the
timing table (median, min, max, ratio to ``ncu --set basic``), the stage plan and the replay passes per
stage, each kernel's tier and top finding before/after with a verdict for the kernels that matter, and,
for every kernel whose finding list changed, both lists and the metrics the rules decide on (a changed
list is otherwise unexplained: the before run averages every launch, the staged run reads one).
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from pathlib import Path
from typing import Any

PASSES = re.compile(r"(\d+) pass(?:es)?")
CSV_LAUNCH = re.compile(r'^"\d+",', re.MULTILINE)
"""A launch row of ncu's raw CSV page (its first column is the launch ID)."""


DECIDING = (
    ("SM %", ("metrics", "sm_throughput_pct")),
    ("memory %", ("metrics", "memory_throughput_pct")),
    ("DRAM %", ("metrics", "dram_throughput_pct")),
    ("issue active %", ("metrics", "issue_slot_utilization_pct")),
    ("theoretical occupancy %", ("occupancy", "theoretical_pct")),
    ("achieved occupancy %", ("occupancy", "achieved_pct")),
    ("waves per SM", ("launch", "waves_per_sm")),
    ("duration µs", ("metrics", "duration_s")),
    ("launches", ("invocations",)),
)
"""What the classifier's thresholds read (perfagent.classifier): shown for a kernel whose findings changed."""


def timings(work: Path) -> dict[str, list[float]]:
    runs: dict[str, list[float]] = {}
    path = work / "times.tsv"
    if not path.is_file():
        return runs
    for line in path.read_text().splitlines():
        label, _, seconds = line.rpartition("\t")
        if label and seconds:
            runs.setdefault(label, []).append(float(seconds))
    return runs


def timing_table(runs: dict[str, list[float]]) -> list[str]:
    basic = statistics.median(runs["ncu --set basic"]) if runs.get("ncu --set basic") else None
    rows = ["| command | runs | median s | min s | max s | vs basic |", "|---|---|---|---|---|---|"]
    for label, values in runs.items():
        med = statistics.median(values)
        ratio = f"{med / basic:.2f}×" if basic else ""
        rows.append(
            f"| {label} | {len(values)} | {med:.2f} | {min(values):.2f} | {max(values):.2f} | {ratio} |"
        )
    return rows


def _value(profile: dict[str, Any], path: tuple[str, ...]) -> str:
    value: Any = profile
    for part in path:
        value = value.get(part) if isinstance(value, dict) else None
    if isinstance(value, float):
        return f"{value * 1e6:.1f}" if path[-1] == "duration_s" else f"{value:.1f}"
    return "—" if value is None else str(value)


def changed_detail(single: dict[str, Any], staged: dict[str, Any]) -> list[str]:
    """For each in-depth kernel whose finding categories changed: both lists, each rule that fired on one
    side only, and the metrics the thresholds read, before and after."""
    before = {_key(k): k for k in single.get("kernels", [])}
    lines: list[str] = []
    for kernel in staged.get("kernels", []):
        old = before.get(_key(kernel))
        if old is None or "A" not in (kernel["profile"].get("tiers") or []):
            continue
        cats_old = [f["category"] for f in old.get("findings", [])]
        cats_new = [f["category"] for f in kernel.get("findings", [])]
        if cats_old == cats_new:
            continue
        rules_old = {f.get("rule") or f["category"] for f in old.get("findings", [])}
        rules_new = {f.get("rule") or f["category"] for f in kernel.get("findings", [])}
        lines += [
            f"#### {kernel['profile']['base_name']} (grid {kernel['profile']['launch'].get('grid')})",
            f"- before ({old['profile'].get('invocations')} launch(es) averaged): {', '.join(cats_old) or '—'}",
            f"- after (one launch, tiers {'+'.join(kernel['profile'].get('tiers') or [])}): {', '.join(cats_new) or '—'}",
            f"- fired before only: {', '.join(sorted(rules_old - rules_new)) or '—'}; "
            f"after only: {', '.join(sorted(rules_new - rules_old)) or '—'}",
            f"- skipped after: {'; '.join(s['rule'] + ': ' + s['reason'] for s in kernel.get('skipped', [])) or '—'}",
            "",
            "| metric | before | after |",
            "|---|---|---|",
            *(
                f"| {label} | {_value(old['profile'], path)} | {_value(kernel['profile'], path)} |"
                for label, path in DECIDING
            ),
            "",
        ]
    return lines


def stage_passes(run_dir: Path) -> list[str]:
    """Replay passes per profiled launch in each ncu log of a staged run, oldest first."""
    logs = sorted(
        [*run_dir.glob("perfagent-ncu-times-*.csv"), *run_dir.glob("perfagent-ncu-*.log")],
        key=lambda p: p.stat().st_mtime,
    )
    rows = ["| stage (ncu log) | launches profiled | passes per launch (median) |", "|---|---|---|"]
    for log in logs:
        text = log.read_text(errors="replace")
        if "times" in log.name:  # --csv prints no pass count: one row per launch, one pass (the duration)
            launches = len(CSV_LAUNCH.findall(text))
            rows.append(f"| 1: durations ({log.name}) | {launches} | 1 |")
            continue
        found = [int(p) for p in PASSES.findall(text)]
        median = statistics.median(found) if found else "?"
        rows.append(f"| 2: counters ({log.name}) | {len(found)} | {median} |")
    return rows


def _top(kernel: dict[str, Any]) -> str:
    findings = kernel.get("findings") or []
    return findings[0]["category"] if findings else "—"


def _key(kernel: dict[str, Any]) -> tuple[str, str]:
    profile = kernel["profile"]
    return profile["name"], str(profile["launch"].get("grid"))


def classification_table(single: dict[str, Any], staged: dict[str, Any]) -> tuple[list[str], int, int]:
    """Per kernel of the staged record: share, tiers, top finding before/after; (rows, compared, changed)."""
    before = {_key(k): k for k in single.get("kernels", [])}
    rows = [
        "| kernel | share | tiers | tier reason | top finding before | after | same |",
        "|---|---|---|---|---|---|---|",
    ]
    compared = changed = 0
    for kernel in staged.get("kernels", []):
        profile = kernel["profile"]
        tiers = profile.get("tiers") or []
        share = kernel.get("share_of_total")
        old = before.get(_key(kernel))
        in_depth = "A" in tiers
        verdict = ""
        if in_depth and old is not None:
            compared += 1
            same = [f["category"] for f in old.get("findings", [])] == [
                f["category"] for f in kernel["findings"]
            ]
            changed += not same
            verdict = "yes" if same else "**NO**"
        reason = (profile.get("tier_reason") or "").replace("|", "/")
        rows.append(
            f"| {profile['base_name'][:48]} | {'' if share is None else f'{100 * share:.1f} %'} | "
            f"{'+'.join(tiers) or 'all'} | {reason[:90]} | {_top(old) if old else '—'} | {_top(kernel)} | {verdict} |"
        )
    return rows, compared, changed


def main(work: Path, label: str) -> None:
    print(f"### {label}\n")
    runs = timings(work)
    if not runs:
        print("no command finished (see failures.txt)\n")
        return
    print("\n".join(timing_table(runs)) + "\n")
    run_dir = work / "staged_1"
    if run_dir.is_dir():
        print("\n".join(stage_passes(run_dir)) + "\n")
    staged_path, single_path = work / "staged_1.json", work / "single.json"
    if staged_path.is_file() and single_path.is_file():
        rows, compared, changed = classification_table(
            json.loads(single_path.read_text()), json.loads(staged_path.read_text())
        )
        staged = json.loads(staged_path.read_text())
        notes = staged.get("notes", [])
        print("\n".join(n for n in notes if n.startswith(("staged profiling", "stage plan"))) + "\n")
        print("\n".join(rows) + "\n")
        print(
            f"kernels profiled in depth compared with the single-run classification: {compared}; changed: {changed}\n"
        )
        print("\n".join(changed_detail(json.loads(single_path.read_text()), staged)))
    summary = {
        label: {name: statistics.median(values) for name, values in runs.items()},
    }
    (work / "summary.json").write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
