#!/usr/bin/env bash
# GPU session, part 4: re-run the GPU suite after the fixes, and the optimize loop on the Triton matmul.
set -u
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
timeout 400 python3 -m pytest -m gpu tests/gpu -q -p no:cacheprovider -rA -s > "$OUT/gpu_tests_final.txt" 2>&1
echo "pytest exit: $?" >> "$OUT/gpu_tests_final.txt"
timeout 150 python3 -m perfagent optimize examples/triton/01_matmul_bad_config.py --backend recipes --iterations 3 \
  --out /tmp/opt_triton --format text > "$OUT/optimize_triton.txt" 2>&1
echo "optimize exit: $?" >> "$OUT/optimize_triton.txt"
grep -E "passed|failed|PASSED|FAILED|pytest exit" "$OUT/gpu_tests_final.txt" | tail -45; tail -30 "$OUT/optimize_triton.txt"
