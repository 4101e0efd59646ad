#!/usr/bin/env bash
# The GPU call of 2026-11-27 (morning) after the merges: on a 4-GPU machine, from the repo root, OUT=... bash this.
# GPUs 0-2: the KernelBench solutions the recipes missed in the morning run (01, 03, 05), --iterations 3, with
#   r23-kb's thread-map widening and row hoist (scripts/gpu_r23_kb.sh, one entry per GPU, 480 s each).
# GPU 3: the loop's cost on the three runs that were over 60 s (01, 02, 28; scripts/gpu_r23_cost.sh, with its
#   GPU test of the workers started ahead), then stencil-rows: its own forms bit for bit on the GPU, and
#   unseen2 11 (bench + optimize --iterations 3).
set -u
cd "$(dirname "$0")/../../.." || exit 1
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
(
  KB_LANES='^01_;^03_;^05_' bash scripts/gpu_r23_kb.sh > "$OUT/kb_console.log" 2>&1
) &
kb=$!
(
  export CUDA_VISIBLE_DEVICES=3
  ONLY='^(01|02|28)_' timeout -k 10 300 bash scripts/gpu_r23_cost.sh > "$OUT/cost_console.log" 2>&1
  # shellcheck disable=SC1091
  source scripts/gpu_env.sh
  mkdir -p "$OUT/r23_stencil"
  STENCIL_OUT="$OUT/r23_stencil/own_forms.md" timeout -k 10 120 python3 -m pytest -q -m gpu -p no:cacheprovider \
    tests/rewrite/test_stencil_rows_gpu.py > "$OUT/r23_stencil/own_forms.log" 2>&1
  echo "exit $?" >> "$OUT/r23_stencil/own_forms.log"
  OUT="$OUT/r23_stencil/unseen2" SET=benchmarks/unseen2 ONLY='^11_' ITER=3 JOBS=bench,optimize SUITE_TIMEOUT=150 \
    timeout -k 10 170 bash scripts/gpu_generalization_bench.sh > "$OUT/stencil_console.log" 2>&1
) &
wait $kb
wait
