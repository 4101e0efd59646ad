#!/usr/bin/env bash
# Several GPU jobs at once on a multi-GPU machine, one per GPU ("lane"), each with its own $OUT/<name>/.
# Each lane is one line of LANES (';'-separated): "<gpu> <name> <command ...>". On a GPU machine:
#
#   OUT=/tmp/out LANES="0 budget env ITER=3 bash scripts/gpu_generalization_bench.sh;1 tests bash scripts/..." \
#     bash scripts/gpu_lanes.sh
#
# LANE_TIMEOUT (s, default 560) bounds every lane; $OUT/lanes.txt gets each lane's exit status and wall time.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv,noheader > "$OUT/gpus.csv" 2>&1
ncu --version 2>/dev/null | tail -1 >> "$OUT/gpus.csv"
IFS=';' read -r -a lanes <<< "${LANES:?LANES is empty}"
pids=()
for lane in "${lanes[@]}"; do
  read -r gpu name cmd <<< "$lane"
  mkdir -p "$OUT/$name"
  (
    start=$(date +%s)
    # shellcheck disable=SC2086
    CUDA_VISIBLE_DEVICES=$gpu OUT="$OUT/$name" timeout -k 10 "${LANE_TIMEOUT:-560}" bash -c "$cmd" \
      > "$OUT/$name/lane.log" 2>&1
    echo "$name (GPU $gpu): exit $? after $(( $(date +%s) - start )) s: $cmd" >> "$OUT/lanes.txt"
  ) &
  pids+=($!)
done
wait "${pids[@]}"
cat "$OUT/lanes.txt"
