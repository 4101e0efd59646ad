#!/usr/bin/env bash
# block-aggregate-atomics on a GPU (issue 23, atomics family): every candidate of the recipe verified and
# timed against its original on the recipe's own slow kernels (tests/data/block_aggregate: dot with a
# guard, grid-stride double sum, int max, float sum with early returns, 2-D per-row sums) and on unseen2/03
# (fp64 dot, textbook 173x on an H100) and unseen2/16 (bf16 amax, textbook 5.4x).
# Writes $OUT/block_aggregate/{tests.log,summary.md}.
# Expected runtime: about 5 minutes (7 one-iteration optimize runs, 6 candidates each; capped at 9).
# Look for: '7 passed' in summary.md, and per entry the best speed-up line ('best N.NNx'): unseen2/03
# should be far above 1.5x (the one-wave grid-stride candidate is the textbook shape), unseen2/16 above 2x.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}/block_aggregate; mkdir -p "$OUT"
start=$(date +%s)
timeout -k 10 540 python3 -m pytest -q -s -m gpu -p no:cacheprovider \
  tests/gpu/test_block_aggregate_atomics_gpu.py > "$OUT/tests.log" 2>&1
status=$?
{
  echo "# block-aggregate-atomics on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
  echo
  echo "wall: $(( $(date +%s) - start )) s, pytest exit $status"
  echo
  echo '```'
  grep -E "passed|failed|error|best [0-9.]+x|block-aggregate-atomics +recipes" "$OUT/tests.log" | head -80
  echo '```'
} > "$OUT/summary.md"
cat "$OUT/summary.md"
