"""CPU triage of a held-out set (issue 23): what the recipes propose for each entry, before any GPU run.

For every entry of SET (folders with slow.cu, fixed.cu and a launch spec) this runs, on this machine:

1. ``perfagent optimize slow.cu --propose-only --backend recipes`` (the planner's own choice, 3 iterations);
2. the same with ``--transform T``, T the textbook fix's transform (``SET/textbook.toml``: entry -> id);
3. for every candidate of step 2: ``nvcc -arch=sm_90 -c`` and the CPU block emulator at the spec's check
   shapes against slow.cu (``tests/rewrite/spec_emulation.py``, the candidate's launch from its proposal);

and writes a markdown table (stdout, or ``--out FILE``) with the recipes that fired, the verdicts, and
the reasons the target transform's recipes gave when they refused. Nothing is edited; run it before a
recipe change ("before") and after ("after"). Usage:

    PYTHONPATH=$PWD python3 scripts/triage_heldout.py benchmarks/unseen3 --out /tmp/triage.md [--only REGEX]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import tomllib
from pathlib import Path

from perfagent.workloads.launch_spec import load_launch_spec
from profilers.process import run_command
from tests.rewrite.spec_emulation import candidate_entry, emulate_entry

OPTIMIZE_TIMEOUT_S = 900.0
NVCC_TIMEOUT_S = 300.0


def _optimize(slow: Path, out: Path, transform: str | None) -> dict:
    cmd = [sys.executable, "-m", "perfagent", "optimize", str(slow), "--propose-only", "--backend", "recipes"]
    cmd += ["--out", str(out), "--force"] + (["--transform", transform] if transform else [])
    run_command(cmd, timeout_s=OPTIMIZE_TIMEOUT_S)
    record = out / "record.json"
    return json.loads(record.read_text())["optimize"] if record.is_file() else {}


def _recipes(optimize: dict) -> str:
    names = [f"{c['transform']}/{c['recipe']}" for c in optimize.get("candidates", [])]
    counts = {n: names.count(n) for n in dict.fromkeys(names)}
    return ", ".join(f"{n} ×{k}" if k > 1 else n for n, k in counts.items()) or "—"


def _refusals(optimize: dict, transform: str) -> str:
    reasons = [p.get("skipped") or "" for p in optimize.get("plan", []) if p.get("transform") == transform]
    text = " ".join(r for r in reasons if r).replace("|", "\\|").replace("\n", " ")
    return text[:600] or "—"


def _verdict(entry: Path, proposal: Path) -> str:
    """'compiles, correct' or what failed, for one candidate."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = json.loads((proposal / "proposal.json").read_text())
        source = (proposal / data["source_file"]).read_text()
        launch = {
            **(data.get("launch") or {}),
            "defines": {**((data.get("launch") or {}).get("defines") or {}), **(data.get("defines") or {})},
        }
        folder = candidate_entry(entry, source, launch, work)
        built = run_command(
            ["nvcc", "-arch=sm_90", "-c", "-o", str(work / "c.o"), str(folder / "fixed.cu")],
            timeout_s=NVCC_TIMEOUT_S,
        )
        if not built.ok:
            return "nvcc fails"
        spec = load_launch_spec(next(folder.glob("*.launch.toml")))
        for n, params in enumerate(spec.check_params):
            (work / str(n)).mkdir()
            agreed, _ = emulate_entry(work / str(n), folder, params)
            if not agreed:
                return "compiles, WRONG on the emulator"
    return "compiles, correct"


def triage_entry(entry: Path, transform: str, scratch: Path) -> str:
    """One markdown row: entry, textbook transform, recipes (plain plan, targeted), verdicts, refusals."""
    plain = _optimize(entry / "slow.cu", scratch / "plain", None)
    targeted = _optimize(entry / "slow.cu", scratch / "targeted", transform)
    verdicts = []
    for proposal in sorted((scratch / "targeted" / "proposals").glob("*")):
        data = json.loads((proposal / "proposal.json").read_text())
        if data["candidate"]["transform"] == transform:
            verdicts.append(f"{data['candidate']['recipe']}: {_verdict(entry, proposal)}")
    cells = [entry.name, transform, _recipes(plain), _recipes(targeted), "; ".join(verdicts) or "—"]
    cells.append(_refusals(targeted, transform) if not verdicts else "—")
    return "| " + " | ".join(cells) + " |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("set", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--only", default="", help="regex on entry names")
    args = parser.parse_args(argv)
    textbook = tomllib.loads((args.set / "textbook.toml").read_text())
    rows = [
        "| entry | textbook transform | recipes, planner's choice | recipes, `--transform` | candidates of that transform (nvcc, emulator) | refusals of that transform |",
        "|---|---|---|---|---|---|",
    ]
    for entry in sorted(p for p in args.set.iterdir() if p.is_dir() and re.search(args.only, p.name)):
        with tempfile.TemporaryDirectory() as scratch:
            rows.append(triage_entry(entry, textbook[entry.name], Path(scratch)))
        print(rows[-1], file=sys.stderr, flush=True)
    text = "\n".join(rows) + "\n"
    if args.out:
        args.out.write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
