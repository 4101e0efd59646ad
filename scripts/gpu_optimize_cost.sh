#!/usr/bin/env bash
# Where a 3-iteration recipes run spends its time (issue 23: <= 60 s per run on an H100, launch-spec
# kernels). On a GPU machine (H100/H200, ncu 2025.3.1, nvcc 13), one GPU:
#
#   OUT=/tmp/out bash scripts/gpu_optimize_cost.sh [ENTRY ...]
#
# Runs `perfagent optimize <entry spec> --backend recipes --iterations 3 --device cuda` on each entry of
# benchmarks/unseen2 (default: 25_rmsnorm_bf16_row_per_thread 23_maxpool2d_plane_per_thread
# 20_matmul_pmpp_untiled 13_scatter_add_edge_per_thread), one after the other, and tabulates the
# records' per-stage wall time (optimize.cost) into $OUT/optimize_cost/table.md (and the process's own
# wall time, start-up included). Logs and run folders under $OUT/optimize_cost/<entry>/.
# Expected runtime: about 3-5 minutes (four runs of 40-75 s; each is cut at 150 s).
# What to look for: the 'record s' column against 60 s; which stage dominates (baseline-profile and
# profile are ncu runs, verify is the batch's verification workers, time the batched CUDA-event timing);
# 're-profiles (skipped)': at most one ncu re-profile per iteration that accepted something, none for the
# last iteration's winner; 'compile-check' (NVRTC in process) should be a second or two at most.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}/optimize_cost
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$OUT/gpu.txt" 2>&1
ENTRIES=("$@")
if [ ${#ENTRIES[@]} -eq 0 ]; then
  ENTRIES=(25_rmsnorm_bf16_row_per_thread 23_maxpool2d_plane_per_thread 20_matmul_pmpp_untiled
    13_scatter_add_edge_per_thread)
fi
RUNS=()
for name in "${ENTRIES[@]}"; do
  dir=benchmarks/unseen2/$name
  spec=$(ls "$dir"/*.launch.toml 2>/dev/null | head -n1)
  if [ -z "$spec" ]; then
    echo "$name: no launch spec in $dir" | tee -a "$OUT/errors.txt"
    continue
  fi
  mkdir -p "$OUT/$name"
  start=$(date +%s.%N)
  timeout -k 10 150 python3 -m perfagent optimize "$spec" --backend recipes --iterations 3 --device cuda \
    --out "$OUT/$name/run" --force > "$OUT/$name/optimize.log" 2>&1
  echo "$name: exit $?" >> "$OUT/exit_codes.txt"
  python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$start" "$(date +%s.%N)" \
    > "$OUT/$name/wall_s"
  RUNS+=("$OUT/$name/run")
done
{
  echo "GPU: $(head -n1 "$OUT/gpu.txt")"
  echo
  python3 scripts/optimize_cost_table.py "$OUT/stages.md" "${RUNS[@]}" > /dev/null && cat "$OUT/stages.md"
  echo
  echo "Exit codes: $(tr '\n' ' ' < "$OUT/exit_codes.txt")"
} > "$OUT/table.md"
cat "$OUT/table.md"
