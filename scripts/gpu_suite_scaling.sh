#!/usr/bin/env bash
# `perfagent suite` scaling on one GPU machine: the same suite with 1..N GPUs and both executors, for
# BENCHMARKS.md (issue 14: 1 -> 2 GPUs; issue 15: 4 and 8). Run from the repository root there:
#
#   OUT=/tmp/out CONFIGS="local:1 local:2 ray:2" JOBS=verify,bench bash scripts/gpu_suite_scaling.sh
#
# Each config runs `perfagent suite` into $OUT/suite/<executor>-<gpus>/ (results.jsonl, summary.json),
# restricted to the first <gpus> GPUs with CUDA_VISIBLE_DEVICES; nvidia-smi samples every GPU's
# utilisation once a second beside it. Then $OUT/suite_scaling.md gets one table: wall time, entries
# per minute, speed-up over the 1-GPU run of the same executor, verdicts equal to the first config's,
# fast_p and geomean; and where the time went (per-job seconds summed over entries).
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
command -v nvidia-smi >/dev/null || nvidia-smi() { return 1; }
OUT=${OUT:-/tmp/out}
CONFIGS=${CONFIGS:-"local:1 local:2 ray:2"}
JOBS=${JOBS:-verify,bench}
SUITES=${SUITES:-"examples"}
EXCLUDE=${EXCLUDE:-}   # regex on entry names to leave out (e.g. to match an earlier run's entries)
RUNS=${RUNS:-20}
SEEDS=${SEEDS:-2}
ITER=${ITER:-2}
ENTRY_TIMEOUT=${ENTRY_TIMEOUT:-240}
CMD_TIMEOUT=${CMD_TIMEOUT:-540}
DEVICE=${DEVICE:-cuda}   # cpu: a dry run of this script with N CPU workers instead of N GPUs
mkdir -p "$OUT/suite"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv > "$OUT/suite/gpus.csv" 2>&1

# One suite.toml for every folder in SUITES (discovery of each, names prefixed by the folder).
python3 - "$OUT/suite/suite.toml" "$EXCLUDE" $SUITES <<'PY'
import re, sys
from pathlib import Path
from perfagent.suite.manifest import discover
out = Path(sys.argv[1]); lines = []
exclude = re.compile(sys.argv[2]) if sys.argv[2] else None
for folder in sys.argv[3:]:
    for e in discover(Path(folder)):
        if exclude and exclude.search(f"{folder}/{e.name}"):
            continue
        lines += ["[[entry]]", f'name = "{folder}/{e.name}"', f'target = "{e.target}"']
        if e.candidate: lines.append(f'candidate = "{e.candidate}"')
        lines.append("")
out.write_text("\n".join(lines)); print(f"{sum(1 for l in lines if l == '[[entry]]')} entries -> {out}")
PY

for cfg in $CONFIGS; do
  ex=${cfg%%:*}; n=${cfg##*:}
  dir="$OUT/suite/$ex-$n"
  gpus=$(seq -s, 0 $((n - 1)))
  nvidia-smi --query-gpu=timestamp,index,utilization.gpu,clocks.sm --format=csv,noheader -l 1 > "$dir.util.csv" 2>/dev/null &
  smi=$!
  start=$(date +%s.%N)
  CUDA_VISIBLE_DEVICES=$gpus timeout -k 10 "$CMD_TIMEOUT" python3 -m perfagent suite "$OUT/suite/suite.toml" \
    --executor "$ex" --device "$DEVICE" --workers "$n" --jobs "$JOBS" --runs "$RUNS" --seeds "$SEEDS" --iterations "$ITER" \
    --entry-timeout "$ENTRY_TIMEOUT" --out "$dir" --force --format json > "$dir.summary.json" 2> "$dir.log"
  rc=$?
  end=$(date +%s.%N)
  kill $smi 2>/dev/null
  echo "$cfg rc=$rc wall=$(python3 -c "print(round($end-$start,1))")" | tee -a "$OUT/suite/walls.txt"
done

python3 - "$OUT" $CONFIGS <<'PY' > "$OUT/suite_scaling.md"
import json, sys, collections
from pathlib import Path
out = Path(sys.argv[1]); cfgs = sys.argv[2:]
walls = dict(l.split()[0:1] + [float(l.split("wall=")[1])] for l in (out/"suite/walls.txt").read_text().splitlines())
rows, first = {}, None
print("| config | entries | wall s | entries/min | speed-up vs 1 GPU (same executor) | same verdicts as first | correct | fast_1 | fast_2 | geomean | mean GPU util % |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for cfg in cfgs:
    d = out/"suite"/cfg.replace(":", "-")
    res = [json.loads(l) for l in (d/"results.jsonl").read_text().splitlines() if l.strip()] if (d/"results.jsonl").is_file() else []
    verdicts = {r["name"]: (r.get("verdict"), r.get("failure")) for r in res}
    first = first or verdicts
    s = json.loads((d/"summary.json").read_text()) if (d/"summary.json").is_file() else {}
    util = [float(x.split(",")[2].strip().rstrip(" %")) for x in Path(str(d)+".util.csv").read_text().splitlines() if x.count(",") >= 3] if Path(str(d)+".util.csv").is_file() else []
    ex, n = cfg.split(":")
    base = walls.get(f"{ex}:1")
    sp = f"{base / walls[cfg]:.2f}x" if base and cfg in walls else "–"
    jobs = collections.Counter()
    for r in res:
        for j in r["jobs"]: jobs[j["job"]] += j["elapsed_s"]
    rows[cfg] = jobs
    print(f"| {cfg} | {len(res)} | {walls.get(cfg, float('nan')):.1f} | {len(res) / walls[cfg] * 60:.1f} | {sp} | {verdicts == first} | {s.get('correct')}/{s.get('verified')} | "
          f"{s.get('fast_p', {}).get('1', 0):.2f} | {s.get('fast_p', {}).get('2', 0):.2f} | {s.get('geomean_speedup') or 0:.3g} | {sum(util)/len(util) if util else 0:.0f} |")
print("\nSeconds per job, summed over entries (where the time goes):\n")
print("| config | " + " | ".join(sorted({j for c in rows.values() for j in c})) + " |")
print("|---|" + "---|" * len({j for c in rows.values() for j in c}))
for cfg, jobs in rows.items():
    print(f"| {cfg} | " + " | ".join(f"{jobs[j]:.1f}" for j in sorted({j for c in rows.values() for j in c})) + " |")
PY
cat "$OUT/suite_scaling.md"
