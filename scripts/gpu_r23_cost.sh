#!/usr/bin/env bash
# Issue 23's cost target (<= 60 s per 3-iteration run on an H100, launch-spec kernels), after the
# r23-cost changes: an iteration's candidates verified and timed in ONE worker (optimize.together), tier B
# folded into a candidate's first ncu re-profile, --time-budget. On a GPU machine (H100/H200, ncu 2025.3.1,
# nvcc 13, torch cu130), one GPU:
#
#   OUT=/tmp/out bash scripts/gpu_r23_cost.sh [ENTRY ...]
#
# Runs `perfagent optimize <entry spec> --backend recipes --iterations 3 --runs 50 --device cuda` (the
# unseen2 after-table's settings: the suite's optimize job ran with optimize's default 50 rounds) on each entry, one after the other, and writes $OUT/r23_cost/table.md:
# per run the process and record wall seconds, seconds per stage (the record's optimize.cost), iterations,
# candidates, re-profiles; then per run the best speed-up, why it stopped, and how many candidates were
# verified in one worker with their batch. Default entries: the eight slowest runs of the unseen2
# after-table (4 x H200, 2026-11-27: 28 90 s, 07 76 s, 05 75 s, 24 73 s, 30 72 s, 02 72 s, 23 67 s,
# 15 64 s); no new entry starts after DEADLINE s (default 330, counted from the start, the GPU test
# tests/gpu/test_iteration_worker_gpu.py included, which runs first) so the script stays near 6 minutes.
# Knobs (env): ITER (3) RUNS_TIMED (50) BUDGET (0: no --time-budget; 60 shows the cap) DEADLINE (330)
#   AB=1: run the same entries again with PERFAGENT_ITERATION_WORKER=separate (the old path: a worker
#   per verification, one for the timing) into $OUT/r23_cost/separate/ -- doubles the runtime.
# Expected runtime: about 5-6 minutes (8 runs of ~35-50 s; each run is cut at 150 s).
# What to look for: gpu_test.log: 2 passed (the printed lines: workers, verify/time seconds in one worker);
# 'record s' <= 60 on every row; 'verify' + 'time' per iteration near one worker start
# (~5-7 s) instead of two (~10-14 s before: verify 15.3 + time 10.3 s median per run); 'one-worker
# verifications' equal to the candidates verified in batches (else the fallback ran: see optimize.log);
# 'profile' about 10 s per re-profile with no second tier-B run; best speed-ups as in BENCHMARKS.md.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}/r23_cost
ITER=${ITER:-3}
RUNS_TIMED=${RUNS_TIMED:-50}
BUDGET=${BUDGET:-0}
DEADLINE=${DEADLINE:-330}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$OUT/gpu.txt" 2>&1
ENTRIES=("$@")
if [ ${#ENTRIES[@]} -eq 0 ]; then
  ENTRIES=(28_crossentropy_fused_row_per_thread 07_scan_blelloch_bank_conflicts 05_rowsum_contiguous_chunk
    24_global_avgpool_half 30_int8_rowwise_quant_row_per_thread 02_gelu_bf16_double_promotion
    23_maxpool2d_plane_per_thread 15_split_heads_permute_half)
fi
began=$(date +%s)
# the worker side on this GPU first: an illegal-address candidate charged alone, a passing batch timed in
# its verification worker (~30 s)
timeout -k 10 240 python3 -m pytest -q -m gpu tests/gpu/test_iteration_worker_gpu.py -s -p no:cacheprovider \
  > "$OUT/gpu_test.log" 2>&1
echo "gpu test (tests/gpu/test_iteration_worker_gpu.py): exit $?" >> "$OUT/exit_codes.txt"

run_all() {  # $1: folder under $OUT; the runs' folders are appended to RUNS
  local where=$1 name dir spec start
  for name in "${ENTRIES[@]}"; do
    if [ $(( $(date +%s) - began )) -gt "$DEADLINE" ]; then
      echo "$name: not started (past DEADLINE=$DEADLINE s)" | tee -a "$OUT/errors.txt"
      continue
    fi
    dir=benchmarks/unseen2/$name
    spec=$(ls "$dir"/*.launch.toml 2>/dev/null | head -n1)
    if [ -z "$spec" ]; then
      echo "$name: no launch spec in $dir" | tee -a "$OUT/errors.txt"
      continue
    fi
    mkdir -p "$where/$name"
    start=$(date +%s.%N)
    timeout -k 10 150 python3 -m perfagent optimize "$spec" --backend recipes --iterations "$ITER" \
      --runs "$RUNS_TIMED" --time-budget "$BUDGET" --device cuda --out "$where/$name/run" --force \
      > "$where/$name/optimize.log" 2>&1
    echo "$name: exit $?" >> "$where/exit_codes.txt"
    python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$start" "$(date +%s.%N)" \
      > "$where/$name/wall_s"
    RUNS+=("$where/$name/run")
  done
}

summary() {  # per run: best speed-up, stop reason, candidates verified in one worker with their batch
  python3 - "$@" <<'PY'
import json, sys
from pathlib import Path
print("| entry | best | iterations | stopped | one-worker verifications / verified | record s |")
print("|---|---|---|---|---|---|")
for run in map(Path, sys.argv[1:]):
    if not (run / "record.json").is_file():
        print(f"| {run.parent.name} | no record.json | | | | |")
        continue
    rec = json.loads((run / "record.json").read_text())
    o = rec.get("optimize") or {}
    verified = together = 0
    for v in run.glob("candidates/*/verification.json"):
        data = json.loads(v.read_text())
        if "verdict" in data and data.get("verdict") != "not-verified":
            verified += 1
            together += any("verified in one worker" in n for n in data.get("notes", []))
    best = o.get("best_speedup")
    print(f"| {run.parent.name} | {best or 1.0:.2f}x | {o.get('iterations_used')} | {(o.get('stopped') or '')[:90]} "
          f"| {together} / {verified} | {o.get('wall_s') or 0:.1f} |")
PY
}

RUNS=()
run_all "$OUT"
ONE=("${RUNS[@]}")
{
  echo "GPU: $(head -n1 "$OUT/gpu.txt"); ITER=$ITER RUNS_TIMED=$RUNS_TIMED BUDGET=$BUDGET"
  echo
  echo "## one worker per iteration (this branch)"
  echo
  python3 scripts/optimize_cost_table.py "$OUT/stages.md" "${ONE[@]}" > /dev/null && cat "$OUT/stages.md"
  echo
  summary "${ONE[@]}"
  echo
  echo "Exit codes: $(tr '\n' ' ' < "$OUT/exit_codes.txt")"
} > "$OUT/table.md"
if [ "${AB:-0}" = 1 ]; then
  RUNS=()
  DEADLINE=$(( DEADLINE * 2 ))
  export PERFAGENT_ITERATION_WORKER=separate
  run_all "$OUT/separate"
  unset PERFAGENT_ITERATION_WORKER
  {
    echo
    echo "## separate workers (PERFAGENT_ITERATION_WORKER=separate, the path before)"
    echo
    python3 scripts/optimize_cost_table.py "$OUT/separate/stages.md" "${RUNS[@]}" > /dev/null \
      && cat "$OUT/separate/stages.md"
    echo
    summary "${RUNS[@]}"
  } >> "$OUT/table.md"
fi
cat "$OUT/table.md"
