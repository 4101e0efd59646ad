#!/usr/bin/env bash
# benchmarks/unseen2 entries 20-33 and kernelbench/ (the second half of the set): is each textbook
# fixed.cu (or each leaderboard solution) correct against its oracle, and what does it buy? On a GPU:
#
#   OUT=/tmp/out bash scripts/gpu_unseen2b_check.sh                      # the 14 .cu pairs, ~4 min on one H100
#   OUT=/tmp/out ONLY='kernelbench/' bash scripts/gpu_unseen2b_check.sh  # the 10 load_inline pairs, ~8 min (builds)
#
# Runs `perfagent suite --jobs verify,bench` (verify: fixed.cu vs slow.cu on both spec shapes, or the
# solution vs the KernelBench problem; bench: the speed-up) and writes $OUT/unseen2b/check.md: per entry
# the verdict, the slow time, the fix's speed-up and any failure message. Knobs (env): ONLY (regex on
# the entry name, default the .cu entries 20-33) RUNS (20) ENTRY_TIMEOUT (240) WORKERS (GPUs, 1).
# Look for: every verdict "pass"; every speed-up > 1 (a "fail" is a wrong fix or spec: report it).
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}
ONLY=${ONLY:-^(2[0-9]|3[0-3])_}
mkdir -p "$OUT/unseen2b"
python3 - "$ONLY" "$OUT/unseen2b/suite.toml" <<'PY'
import re, sys
from pathlib import Path
from perfagent.suite.manifest import discover
only, out = re.compile(sys.argv[1]), Path(sys.argv[2])
lines = []
for e in discover(Path("benchmarks/unseen2")):
    if only.search(e.name):
        lines += ["[[entry]]", f'name = "{e.name}"', f'target = "{e.target}"']
        lines += [f'candidate = "{e.candidate}"'] if e.candidate else []
        lines.append("")
out.write_text("\n".join(lines))
print(f"{lines.count('[[entry]]')} entries")
PY
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/unseen2b/gpu.txt" 2>&1
timeout "${SUITE_TIMEOUT:-1500}" python3 -m perfagent suite "$OUT/unseen2b/suite.toml" --device cuda \
  --workers "${WORKERS:-1}" --jobs verify,bench --runs "${RUNS:-20}" --entry-timeout "${ENTRY_TIMEOUT:-240}" \
  --out "$OUT/unseen2b/run" --force > "$OUT/unseen2b/summary.txt" 2> "$OUT/unseen2b/suite.log"
python3 - "$OUT/unseen2b/run" "$(cat "$OUT/unseen2b/gpu.txt")" > "$OUT/unseen2b/check.md" <<'PY'
import json, sys
from pathlib import Path
run, gpu = Path(sys.argv[1]), sys.argv[2]
rows = [json.loads(l) for l in (run / "results.jsonl").read_text().splitlines() if l.strip()]
print(f"GPU: {gpu}\n\n| entry | verdict | slow (target) | fix speed-up | failure |\n|---|---|---|---|---|")
for r in sorted(rows, key=lambda r: r["name"]):
    base = f"{r['baseline_s'] * 1e6:.1f} µs" if r.get("baseline_s") else "–"
    sp = f"{r['speedup']:.2f}×" if r.get("speedup") else "–"
    bad = "; ".join(f"{j.get('job')}: {(j.get('message') or '')[:120]}" for j in r.get("jobs", []) if not j.get("ok"))
    print(f"| {r['name']} | {r.get('verdict') or '–'} | {base} | {sp} | {bad or '–'} |")
PY
cat "$OUT/unseen2b/check.md"
