#!/usr/bin/env bash
# Issue 23, index algebra (modulo-to-select, permute-tile) on the two unseen2 entries they were built for.
# On a GPU machine:
#
#   OUT=/tmp/out bash scripts/gpu_r23_index.sh
#
# Runs scripts/gpu_generalization_bench.sh on benchmarks/unseen2 entries 11 (Game of Life on a torus, `%`
# per neighbour: modulo-to-select through fast-math) and 14 (TF's templated rank-3 shuffle: permute-tile
# through coalesce-access): `bench slow.cu fixed.cu` and `optimize --backend recipes --iterations 3`.
# Writes $OUT/r23_index/generalization.md (the same table as BENCHMARKS.md's unseen2 after-table) and the
# suite's records under $OUT/r23_index/gen/. Expected runtime: about 4 minutes (two entries, one GPU).
# Look for: 11 won by fast-math (recipe modulo-to-select), 14 by coalesce-access (recipe permute-tile),
# both verified correct, and the share of the textbook speed-up (1.74x and 1.94x there on an H200).
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/r23_index"
OUT="$OUT/r23_index" SET=benchmarks/unseen2 ONLY='^(11|14)_' ITER=${ITER:-3} JOBS=bench,optimize \
  SUITE_TIMEOUT=${SUITE_TIMEOUT:-900} bash scripts/gpu_generalization_bench.sh
