"""The table of scripts/gpu_kb_cost.sh: per KernelBench solution the recipes' best speed-up over it and
where the optimize run's wall time went; the geometric mean over the solutions (issue 23: >= 5x).

    python3 scripts/kb_cost_table.py OUT/kb_cost > kb_cost.md     (also writes OUT/kb_cost/kb_cost.json)

Reads each lane's gen_runs.tgz (scripts/gpu_generalization_bench.sh) and results.jsonl inside it.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
import tarfile
from pathlib import Path
from typing import Any

NOT_IN_THE_MEAN = {
    "02_l1norm_solution.py": "degenerate reference (every output within ±0.01): every candidate is inconclusive"
}
"""Entries whose speed-up is not meaningful, with why (BENCHMARKS.md)."""
STAGES = ("baseline-profile", "baseline-time", "propose", "build", "verify", "time", "profile", "other")


def lane_rows(tgz: Path) -> list[dict[str, Any]]:
    """Every entry of one lane: its suite row and, where the run finished, its optimize record."""
    with tarfile.open(tgz) as tar:
        files = {m.name: m for m in tar.getmembers() if m.isfile()}

        def read(name: str) -> Any:
            handle = tar.extractfile(files[name])
            return json.loads(handle.read()) if handle else None

        records = {n: read(n) for n in files if n.endswith("/record.json") and "/candidates/" not in n}
        results = next((n for n in files if n.endswith("results.jsonl")), None)
        handle = tar.extractfile(files[results]) if results else None
        suite = [
            json.loads(ln) for ln in (handle.read().decode().splitlines() if handle else []) if ln.strip()
        ]
    rows = []
    for r in suite:
        run = Path(r.get("optimize_run") or "").name
        rec = next((v for k, v in records.items() if run and f"/{run}/" in k), None)
        rows.append({"suite": r, "record": rec})
    return rows


def summarise(row: dict[str, Any]) -> dict[str, Any]:
    r, rec = row["suite"], row["record"] or {}
    o = rec.get("optimize") or {}
    cost = (o.get("cost") or {}).get("stages") or {}
    cands = rec.get("candidates") or []
    builds = [c["stage_s"]["build"] for c in cands if (c.get("stage_s") or {}).get("build")]
    verifies = [c["stage_s"]["verify"] for c in cands if (c.get("stage_s") or {}).get("verify")]
    base = o.get("baseline") or {}
    return {
        "entry": r["name"].split("/")[-1],
        "failure": r.get("failure"),
        "wall_s": round(r.get("elapsed_s") or 0.0, 1),
        "solution_us": round(base["time_s"] * 1e6, 1) if base.get("time_s") else None,
        "speedup": o.get("best_speedup") or 1.0,
        "won": r.get("transforms_won") or [],
        "iterations": o.get("iterations_used"),
        "candidates": len(cands),
        "stages_s": {k: round(cost.get(k, 0.0), 1) for k in STAGES if k in cost},
        "build_s_median": round(statistics.median(builds), 1) if builds else None,
        "verify_s_median": round(statistics.median(verifies), 1) if verifies else None,
        "verdicts": [f"{c['id']} {c['transform']}: {c.get('verdict')}" for c in cands],
    }


def main(topic: Path) -> None:
    rows = [summarise(r) for tgz in sorted(topic.glob("kb*/gen_runs.tgz")) for r in lane_rows(tgz)]
    rows.sort(key=lambda x: x["entry"])
    print(f"GPUs: {(topic / 'gpus.csv').read_text().strip() if (topic / 'gpus.csv').exists() else '?'}\n")
    print(
        "| solution | solution time | recipes best over it | wall s | iterations | candidates | "
        + " | ".join(STAGES)
        + " | build s / candidate (median) | verify s / candidate | won | failure |"
    )
    print("|" + "---|" * (10 + len(STAGES)))
    for x in rows:
        st = " | ".join(f"{x['stages_s'].get(k, '–')}" for k in STAGES)
        print(
            f"| {x['entry']} | {x['solution_us'] or '–'} µs | {x['speedup']:.2f}× | {x['wall_s']} | "
            f"{x['iterations'] or '–'} | {x['candidates']} | {st} | {x['build_s_median'] or '–'} | "
            f"{x['verify_s_median'] or '–'} | {', '.join(x['won']) or '–'} | {x['failure'] or '–'} |"
        )
    counted = [x for x in rows if x["entry"] not in NOT_IN_THE_MEAN]
    for x in rows:
        if x["entry"] in NOT_IN_THE_MEAN:
            print(f"\n{x['entry']} is not in the mean: {NOT_IN_THE_MEAN[x['entry']]}")
    if counted:
        gm = math.exp(sum(math.log(max(x["speedup"], 1e-9)) for x in counted) / len(counted))
        done = sum(1 for x in counted if not x["failure"])
        print(
            f"\ngeometric mean of the recipes' speed-up over the {len(counted)} solutions: {gm:.2f}× "
            f"({done} finished within the entry limit; an unfinished entry counts 1.00×)"
        )
    (topic / "kb_cost.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
