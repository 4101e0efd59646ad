#!/usr/bin/env bash
# The recipe framework on a GPU machine (issue 23 items 1 and 3): the NVRTC compile check of the shared
# tail (cuda.core is installed there, so PERFAGENT_RECIPE_COMPILE=auto compiles every candidate) and the
# framework's tests, then the recipe tests with the NVRTC check on, so a candidate NVRTC rejects where
# its original builds would show up as a failing test. Writes $OUT/recipe_framework/{tests.log,summary.md}.
# Expected runtime: about 5 minutes (CPU-bound tests; no profiling). Look for: 'exit 0' three times in summary.md, and in
# compile_cost.md the seconds 'auto' adds per propose (NVRTC) against 'off': if it is more than ~1 s, make
# the default 'off' in _compile_check.compiler().
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}/recipe_framework; mkdir -p "$OUT"
start=$(date +%s)
{
  echo "== the framework (NVRTC check included)"
  timeout -k 10 120 python3 -m pytest -q -m "gpu or not gpu" tests/rewrite/test_framework.py -p no:cacheprovider
  echo "exit $?"
  echo "== recipe tests with PERFAGENT_RECIPE_COMPILE=auto (NVRTC)"
  PERFAGENT_RECIPE_COMPILE=auto timeout -k 10 360 python3 -m pytest -q -p no:cacheprovider \
    tests/rewrite/test_privatize_atomics.py tests/rewrite/test_cooperative_row.py tests/rewrite/test_vectorize_access.py \
    tests/rewrite/test_transpose_tile.py
  echo "exit $?"
  echo "== what the compile check costs per propose (off vs auto)"
  timeout -k 10 120 python3 scripts/recipe_compile_cost.py "$OUT/compile_cost.md"
  echo "exit $?"
} > "$OUT/tests.log" 2>&1
{
  echo "# recipe framework on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
  echo
  echo "wall: $(( $(date +%s) - start )) s"
  echo
  echo '```'
  grep -E "passed|failed|error|exit [0-9]+|^==" "$OUT/tests.log"
  echo '```'
  echo
  cat "$OUT/compile_cost.md" 2>/dev/null
} > "$OUT/summary.md"
cat "$OUT/summary.md"
