#!/usr/bin/env bash
# GPU session, part 2: profiling-cost benchmark and the `-m gpu` suite for the profiling path.
set -u
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
bash scripts/bench_profiling_cost.sh examples/cuda/suite/main.cu 3 > "$OUT/bench_profiling.md" 2> "$OUT/bench_profiling.log"
python3 -m pytest -m gpu tests/gpu/test_diagnose_gpu.py -s -q -p no:cacheprovider > "$OUT/gpu_tests_diagnose.txt" 2>&1
cat "$OUT/bench_profiling.md"; tail -40 "$OUT/gpu_tests_diagnose.txt"
