#!/usr/bin/env bash
# Issue 23 (r23-scan): warp-shuffle-scan (Kogge-Stone block scans -> warp shuffles) and register-streaming
# (3-D stencils: 2-D blocks march z with a register window) on a GPU. Two parts, under $OUT/r23-scan/:
# 1. tests/gpu/test_r23_scan_gpu.py: every candidate of the two recipes verified and timed against its
#    original on the recipes' own slow kernels (tests/data/r23_scan: exclusive int scan with section sums,
#    double-buffered float max-scan, 7-point Laplacian with early exits, 9-point y-z box) and on unseen2/06
#    and unseen2/10 (one iteration, the recipe's transform) -> tests.log, summary.md.
# 2. the unseen2 measurement as BENCHMARKS.md makes it (`bench slow.cu fixed.cu` + `optimize --backend
#    recipes --iterations 3`, the planner choosing) for 06 and 10 -> gen/generalization.md.
# Expected runtime: about 6 minutes (part 1 about 3.5, part 2 about 2.5).
# Look for: '6 passed' in summary.md; in gen/generalization.md the 06 row's winner warp-shuffle-reduction
# (textbook 1.78x on an H200) and the 10 row's register-tiling (textbook 1.76x), "share of textbook" >= 80 %.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
BASE=${OUT:-/tmp/out}
OUT=$BASE/r23-scan; mkdir -p "$OUT"
start=$(date +%s)
timeout -k 10 300 python3 -m pytest -q -s -m gpu -p no:cacheprovider \
  tests/gpu/test_r23_scan_gpu.py > "$OUT/tests.log" 2>&1
status=$?
{
  echo "# r23-scan recipes on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
  echo
  echo "wall: $(( $(date +%s) - start )) s, pytest exit $status"
  echo
  echo '```'
  grep -E "passed|failed|error|best [0-9.]+x|(warp-shuffle-reduction|register-tiling) +recipes" "$OUT/tests.log" | head -80
  echo '```'
} > "$OUT/summary.md"
cat "$OUT/summary.md"
OUT="$OUT" SET=benchmarks/unseen2 ONLY='^(06|10)_' ITER=3 JOBS=bench,optimize \
    SUITE_TIMEOUT=${SUITE_TIMEOUT:-300} bash scripts/gpu_generalization_bench.sh
