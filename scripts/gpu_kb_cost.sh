#!/usr/bin/env bash
# Issue 23's KernelBench target: the recipes over slow public load_inline solutions, --iterations 3, with one
# extension build per distinct source (perfagent.sandbox.extension_build). On a 4-GPU machine:
#
#   OUT=/tmp/out bash scripts/gpu_kb_cost.sh
#
# Runs `JOBS=optimize ITER=3 SET=benchmarks/unseen2/kernelbench scripts/gpu_generalization_bench.sh` in four
# lanes (one GPU each, scripts/gpu_lanes.sh), ONE entry per lane, then writes $OUT/kb_cost/kb_cost.md and
# kb_cost.json over every part run so far into the same $OUT: per entry the solution's time, the recipes'
# best speed-up over the solution, the wall time, where it went (RunCost stages: baseline-profile,
# baseline-time, build, verify, time, profile, ...), the build step's and verification's seconds per
# candidate, and the geometric mean of the speed-ups (issue 23: >= 5x over >= 8 solutions).
#
#   PART=1 (default): 01_logsoftmax 03_batched_matmul 04_symmetric_matmul 06_matmul_transposed_b
#   PART=2:           07_cumprod 08_kldiv_loss 09_triplet_margin_loss 10_gemm_add_relu
#   PART=3:           05_tensor3d_matmul 02_l1norm (02's reference is degenerate: every candidate is
#                     inconclusive and its speed-up is not meaningful, BENCHMARKS.md; left out of the mean)
#
# Expected runtime per part: <= 9 min (ENTRY_TIMEOUT=480 s + ~30 s of set-up and table). Why 480 s: with one
# build per distinct source an entry costs ~60 s of baseline (one confined build ~25-40 s, outside ncu; the
# ncu profile ~20 s; timing ~13 s) and ~100-130 s per iteration (its candidates built at once ~30-40 s,
# verified at once ~15 s, then each Python candidate timed in a fresh confined worker ~13 s, the winner
# re-profiled ~20 s): ~360-450 s for three iterations. The suite's default 240 s fits one iteration; the
# last session's runs, which built inside every worker and under ncu, hit it on every entry.
# Knobs (env): PART (1), ENTRY_TIMEOUT (480 s), ITER (3), KB_LANES (';'-separated ONLY regexes, one per GPU).
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/out}
TOPIC="$OUT/kb_cost"
mkdir -p "$TOPIC"
ENTRY_TIMEOUT=${ENTRY_TIMEOUT:-480}
ITER=${ITER:-3}
PART=${PART:-1}
case "$PART" in
  1) parts="^01_;^03_;^04_;^06_" ;;
  2) parts="^07_;^08_;^09_;^10_" ;;
  3) parts="^05_;^02_" ;;
  *) echo "PART must be 1, 2 or 3" >&2; exit 2 ;;
esac
KB_LANES=${KB_LANES:-$parts}
IFS=';' read -r -a only <<< "$KB_LANES"
lanes=""
for i in "${!only[@]}"; do
  lanes+="${lanes:+;}$i kb${PART}_$i env ONLY='${only[$i]}' JOBS=optimize ITER=$ITER ENTRY_TIMEOUT=$ENTRY_TIMEOUT"
  lanes+=" SET=benchmarks/unseen2/kernelbench bash scripts/gpu_generalization_bench.sh"
done
start=$(date +%s)
# a lane: one entry, plus the suite's start and its table
LANE_TIMEOUT=$(( ENTRY_TIMEOUT + 40 )) OUT="$TOPIC" LANES="$lanes" bash scripts/gpu_lanes.sh
echo "part $PART: lanes took $(( $(date +%s) - start )) s" | tee -a "$TOPIC/wall.txt"
PYTHONPATH=$PWD python3 scripts/kb_cost_table.py "$TOPIC" > "$TOPIC/kb_cost.md"
cat "$TOPIC/kb_cost.md"
