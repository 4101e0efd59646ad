#!/usr/bin/env bash
# GPU session, part 3: the whole `-m gpu` suite, a full-set report for the parse benchmark,
# and a re-measure of the profiling cost. Results land in $OUT.
set -u
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
timeout 420 python3 -m pytest -m gpu tests/gpu -s -q -p no:cacheprovider -rA --durations=15 > "$OUT/gpu_tests.txt" 2>&1
echo "pytest exit: $?" >> "$OUT/gpu_tests.txt"
timeout 120 python3 -m perfagent profile examples/cuda/suite/main.cu --full --launch-count 9 \
  --save-report "$OUT/suite_full_9.ncu-rep" --format json -o /tmp/full9.json > "$OUT/full9.log" 2>&1
ls -la "$OUT"/*.ncu-rep >> "$OUT/full9.log" 2>&1
tail -60 "$OUT/gpu_tests.txt"; tail -3 "$OUT/full9.log"
