"""Start-up cost of a verification worker, confined vs unconfined, warm fork server vs fresh interpreter.

Usage: python scripts/sandbox_startup.py [--device cpu|cuda] [--repeats N] [--out FILE.json]

Each configuration verifies the same small problem (tests/verify/candidates: a + b on 4096 floats, one
seed) ``repeats`` times after one untimed call (which starts the warm server); the table gives the median
and min wall time of one ``verify`` call, the worker's start-up plus a near-zero workload. The confined
row minus the unconfined row is the sandbox's cost per worker.

Each row is labelled from the sandbox note the verification actually got, not from what was asked: on a
GPU a confined worker asked to start warm starts fresh under bubblewrap alone
(``runner.gpu_confined_by_bubblewrap_alone``), and its row says so.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from perfagent.sandbox import confinement, runner  # noqa: E402
from perfagent.verify import verify  # noqa: E402

PROBLEM = REPO / "tests" / "verify" / "candidates" / "problem_add.py"
CANDIDATE = REPO / "tests" / "verify" / "candidates" / "honest_add_block256.py"


def _one(device: str) -> tuple[float, str]:
    """Seconds of one verification and the sandbox note it got."""
    start = time.perf_counter()
    result = verify(PROBLEM, CANDIDATE, device=device, seeds=1, timeout_s=120)  # type: ignore[arg-type]
    if result.verdict != "pass":
        raise SystemExit(f"verification did not pass: {[c for c in result.checks if not c.passed]}")
    note = next((n for n in result.notes if n.startswith("sandbox:")), "")
    return time.perf_counter() - start, note


def label(asked_start: str, note: str) -> tuple[str, str]:
    """(start, sandbox) as the worker really ran, read from its sandbox note."""
    if not note.startswith("sandbox: confined"):
        return asked_start, "none"
    if note.endswith(runner.GPU_BWRAP_ONLY_NOTE):
        return "fresh", "bubblewrap alone"
    return asked_start, "bubblewrap+Landlock"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    rows = []
    for start in ("warm", "fresh"):
        for confined in (True, False):
            os.environ[runner.WORKER_START_ENV] = start
            os.environ[confinement.UNCONFINED_ENV] = "0" if confined else "1"
            _one(args.device)  # starts this configuration's warm server
            runs = [_one(args.device) for _ in range(args.repeats)]
            times, notes = [t for t, _ in runs], sorted({n for _, n in runs})
            ran_start, sandbox = label(start, notes[-1] if notes else "")
            rows.append(
                {
                    "asked_start": start,
                    "start": ran_start,
                    "confined": confined,
                    "sandbox": sandbox,
                    "notes": notes,
                    "median_s": statistics.median(times),
                    "min_s": min(times),
                    "runs": len(times),
                }
            )
            print(
                f"asked {start:5} ran {ran_start:5} {sandbox:20} median {rows[-1]['median_s']:.3f} s "
                f"min {rows[-1]['min_s']:.3f} s",
                flush=True,
            )
    status = confinement.status()
    table = ["| asked | ran | sandbox (from the note) | median s | min s |", "|---|---|---|---:|---:|"]
    table += [
        f"| {r['asked_start']} | {r['start']} | {r['sandbox']} | {r['median_s']:.3f} | {r['min_s']:.3f} |"
        for r in rows
    ]
    print("\n".join(table))
    if args.out:
        args.out.write_text(
            json.dumps({"device": args.device, "mechanism": status.mechanism, "rows": rows}, indent=2)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
