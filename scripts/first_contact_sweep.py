"""Run the first-contact sweep (tests/first_contact_cases.py) against this tree and, with --before TREE,
against another checkout (e.g. main before the fixes), and write tests/data/first_contact_sweep.md.

    python3 scripts/first_contact_sweep.py --before PATH/TO/OTHER/CHECKOUT [--quick] [--jobs 2] [--only ID,ID]

Results of each tree are cached as JSON next to the table (``--reuse`` renders from them without
running), so the two runs can be made separately.

Every case runs `python -m perfagent ...` in a fresh workspace of the user's files, on the CPU.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.first_contact_cases import CASES, Case, expand, make_workspace  # noqa: E402


def run_case(case: Case, tree: Path, work: Path) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PERFAGENT_", "OPENAI_"))}
    env |= dict(case.env) | {"PYTHONPATH": str(tree)}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "perfagent", *expand(case.args, work, REPO)],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return 124, "timed out after 600 s"
    err = done.stderr.strip().splitlines()
    line = next(
        (x for x in reversed(err) if x.startswith(("perfagent", "usage", "Traceback")) or "error" in x),
        err[-1] if err else "",
    )
    if "Traceback" in done.stderr:
        line = "TRACEBACK: " + (err[-1] if err else "")
    return done.returncode, line


def good(case: Case, code: int, line: str) -> bool:
    return code == case.expected and not line.startswith("TRACEBACK")


def sweep(tree: Path, cases: list[Case], jobs: int) -> dict[str, tuple[int, str]]:
    with tempfile.TemporaryDirectory(prefix="perfagent-sweep-") as tmp:
        results: dict[str, tuple[int, str]] = {}

        def one(case: Case) -> None:
            work = Path(tmp) / case.id
            make_workspace(work, REPO)
            results[case.id] = run_case(case, tree, work)
            print(f"{tree.name} {case.id}: {results[case.id][0]}", file=sys.stderr, flush=True)

        with ThreadPoolExecutor(jobs) as pool:
            list(pool.map(one, cases))
        return results


def _cached(
    path: Path, tree: Path | None, cases: list[Case], jobs: int, reuse: bool
) -> dict[str, tuple[int, str]]:
    import json

    done: dict[str, tuple[int, str]] = {}
    if path.is_file():
        done = {k: (v[0], v[1]) for k, v in json.loads(path.read_text(encoding="utf-8")).items()}
    todo = [c for c in cases if c.id not in done or not reuse]
    if tree is not None and todo:
        done |= sweep(tree, todo, jobs)
        path.write_text(json.dumps(done, indent=1), encoding="utf-8")
    return done


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=Path)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reuse", action="store_true", help="keep cached results; run only missing cases")
    parser.add_argument("--only", default="", help="comma-separated case ids to run")
    parser.add_argument("--no-after", action="store_true", help="run only --before")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("-o", type=Path, default=REPO / "tests" / "data" / "first_contact_sweep.md")
    args = parser.parse_args()
    cases = [c for c in CASES if c.quick or not args.quick]
    chosen = [c for c in cases if not args.only or c.id in args.only.split(",")]
    cache = args.o.parent / "first_contact_sweep"
    cache.mkdir(exist_ok=True)
    after = _cached(cache / "after.json", None if args.no_after else REPO, chosen, args.jobs, args.reuse)
    before = _cached(cache / "before.json", args.before, chosen, args.jobs, args.reuse)
    if any(c.id not in after for c in cases):
        return 0  # a partial run: the table is written once every case has a result
    write_table(args.o, cases, after, before)
    return 0


def write_table(
    out: Path, cases: list[Case], after: dict[str, tuple[int, str]], before: dict[str, tuple[int, str]]
) -> None:
    lines = [
        "# First-contact sweep (issue 26)",
        "",
        "`python -m perfagent ARGS` on a CPU machine (no GPU, CPU torch, nvcc installed), each case in a fresh",
        "folder of the user's files (`{W}`, made by `tests/first_contact_cases.py:make_workspace`; `{R}` is the",
        "repository). *before*: main before the issue-26 fixes (run for the cases the fixes touch; – = not",
        "run); *after*: this branch. Verdict: good (the expected exit code, one line, no traceback), fixed",
        "(bad before, good after), BAD (left).",
        "Regenerate: `python3 scripts/first_contact_sweep.py --before <old checkout>`.",
        "",
        "| # | case | command | expected | before | after | what the user sees (after) | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    counts = {"good": 0, "fixed": 0, "BAD": 0}
    for i, case in enumerate(cases, 1):
        code, line = after[case.id]
        b = before.get(case.id)
        verdict = (
            "BAD"
            if not good(case, code, line)
            else "fixed"
            if b is not None and not good(case, *b)
            else "good"
        )
        counts[verdict] += 1
        cmd = " ".join(["perfagent", *case.args]).replace("|", "\\|")
        shown = line.replace("|", "\\|")[:160]
        lines.append(
            f"| {i} | {case.id} | `{cmd}` | {case.expected} ({case.why}) | {b[0] if b else '–'} | {code} | {shown} | {verdict} |"
        )
    lines[2:2] = [
        f"**{len(cases)} cases: {counts['good']} good, {counts['fixed']} fixed, {counts['BAD']} bad.**",
        "",
    ]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(counts, file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
