#!/usr/bin/env bash
# The whole `-m gpu` suite split over 4 GPUs (one pytest per GPU, CUDA_VISIBLE_DEVICES), for a machine with 4
# GPUs and one device call of at most 10 minutes. Writes $OUT/gpu_suite/g<k>.log (pytest -rA --durations) and
# $OUT/gpu_suite/summary.txt (each group's last line and exit status).
#
#   OUT=/tmp/out bash scripts/gpu_suite_lanes.sh
#
# Expected runtime: 5-8 min (the groups are balanced by kind of work, not by measured time).
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/out}
R="$OUT/gpu_suite"
mkdir -p "$R"
# shellcheck disable=SC1091
source scripts/gpu_env.sh > "$R/env.log" 2>&1 || exit 1
# GROUPS_OVERRIDE replaces the split: groups separated by ';' (one per GPU). The timeout sends SIGINT first, so
# pytest still prints the failures and its summary line.
G=(
  "tests/gpu/test_verify_gpu.py tests/gpu/test_diagnose_gpu.py tests/gpu/test_staged_gpu.py tests/gpu/test_tensor_flops_gpu.py tests/gpu/test_extension_build_gpu.py tests/gpu/test_kernelbench_nvtx_gpu.py tests/rewrite/test_framework.py"
  "tests/gpu/test_smem_tiling_gpu.py tests/gpu/test_layout_recipes_gpu.py tests/gpu/test_elementwise_recipes_gpu.py tests/gpu/test_launch_accuracy_rule_gpu.py"
  "tests/gpu/test_optimize_gpu.py tests/gpu/test_r23_kb_gpu.py tests/gpu/test_optimize_phases_gpu.py tests/gpu/test_first_kernel_phases_gpu.py tests/gpu/test_iteration_worker_gpu.py tests/gpu/test_worker_standby_gpu.py tests/gpu/test_timing_budget_gpu.py tests/gpu/test_torch_free_harness_gpu.py"
  "tests/gpu/test_r23_scan_gpu.py tests/gpu/test_block_aggregate_atomics_gpu.py tests/rewrite/test_cooperative_item_gpu.py tests/rewrite/test_stencil_rows_gpu.py tests/rewrite/test_atomic_variants_gpu.py"
)
if [ -n "${GROUPS_OVERRIDE:-}" ]; then IFS=';' read -r -a G <<< "$GROUPS_OVERRIDE"; fi
pids=()
for k in "${!G[@]}"; do
  # shellcheck disable=SC2086
  (CUDA_VISIBLE_DEVICES=$k timeout -s INT -k 20 "${GROUP_TIMEOUT:-540}" python3 -m pytest -q -rA -m gpu -p no:cacheprovider \
      --durations=15 ${G[$k]} > "$R/g$k.log" 2>&1; echo "exit $?" >> "$R/g$k.log") &
  pids+=($!)
done
wait "${pids[@]}"
for k in "${!G[@]}"; do
  echo "g$k (GPU $k): $(grep -E '[0-9]+ (passed|failed)' "$R/g$k.log" | tail -1) / $(tail -1 "$R/g$k.log")"
done > "$R/summary.txt"
nvidia-smi -L >> "$R/summary.txt"
cat "$R/summary.txt"
