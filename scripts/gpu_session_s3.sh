#!/usr/bin/env bash
# GPU session of 2026-11-25: the GPU tests written without a GPU last session (tensor counters kept or
# dropped, tensor FLOPs, NVTX harness labelling, two-phase optimize), then the profiling-pass ratio after
# the tensor-counter skip (LIGHT=1). Results land in $OUT.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
  ncu --version | tail -1
  timeout 400 python3 -m pytest -m gpu -q -p no:cacheprovider -rA --durations=10 \
    tests/gpu/test_tensor_flops_gpu.py tests/gpu/test_kernelbench_nvtx_gpu.py \
    tests/gpu/test_optimize_phases_gpu.py "tests/gpu/test_diagnose_gpu.py" -k "tensor or nvtx or phase or evaluate"
  echo "pytest exit: $?"
} > "$OUT/gpu_tests_s3.txt" 2>&1
LIGHT=1 OUT="$OUT" timeout 170 bash scripts/gpu_profiling_passes.sh examples/cuda/suite/main.cu 2 > "$OUT/passes_light.log" 2>&1
tail -40 "$OUT/gpu_tests_s3.txt"; cat "$OUT"/passes*.md 2>/dev/null | tail -20
