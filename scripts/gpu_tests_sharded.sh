#!/usr/bin/env bash
# The `-m gpu` suite spread over several GPUs of one machine: one pytest per shard, each pinned to one
# GPU with CUDA_VISIBLE_DEVICES, all shards at once. Logs land in $OUT/gpu_tests_shard<i>.txt with
# per-test durations; $OUT/gpu_tests_summary.txt gets every shard's result line. On a multi-GPU machine:
#
#   OUT=/tmp/out GPUS="0 1 2" bash scripts/gpu_tests_sharded.sh
#
# SHARDS (env) is a ';'-separated list of test paths per shard, one shard per entry of GPUS.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
GPUS=${GPUS:-"0 1 2"}
# The smem/register-tiling tests run optimize per kernel (minutes in all): a shard of their own.
SHARDS=${SHARDS:-"tests/gpu/test_verify_gpu.py tests/gpu/test_kernelbench_nvtx_gpu.py;tests/gpu/test_smem_tiling_gpu.py;tests/gpu/test_diagnose_gpu.py tests/gpu/test_tensor_flops_gpu.py tests/gpu/test_optimize_gpu.py tests/gpu/test_optimize_phases_gpu.py"}
TEST_TIMEOUT=${TEST_TIMEOUT:-540}
IFS=';' read -r -a shard_list <<< "$SHARDS"
read -r -a gpu_list <<< "$GPUS"
pids=()
for i in "${!shard_list[@]}"; do
  gpu=${gpu_list[$i]:-${gpu_list[0]}}
  # shellcheck disable=SC2086
  # -v: each test's result is on its own line as it ends, so a shard killed by its time limit still
  # says which tests passed and which failed (the -rA summary only comes at the end)
  ( CUDA_VISIBLE_DEVICES=$gpu timeout -k 10 "$TEST_TIMEOUT" python3 -m pytest -m gpu ${shard_list[$i]} -v \
      -p no:cacheprovider -rA --durations=0 > "$OUT/gpu_tests_shard$i.txt" 2>&1
    echo "pytest exit: $? (shard $i on GPU $gpu: ${shard_list[$i]})" >> "$OUT/gpu_tests_shard$i.txt" ) &
  pids+=($!)
done
wait "${pids[@]}"
for i in "${!shard_list[@]}"; do
  grep -E "(PASSED|FAILED|ERROR)( |$)|passed|failed|pytest exit" "$OUT/gpu_tests_shard$i.txt" | tail -40
done | tee "$OUT/gpu_tests_summary.txt"
