#!/usr/bin/env bash
# Issue 23 (r23-scan): warp-shuffle-scan on unseen2/06 (Kogge-Stone sections) and register-streaming on
# unseen2/10 (3-D 7-point stencil), measured as BENCHMARKS.md's unseen2 table is: `perfagent bench slow.cu
# fixed.cu` and `perfagent optimize --backend recipes --iterations 3` per entry. Expected GPU wall time:
# about 3 minutes on one H100/H200. Output: $OUT/r23-scan/gen/generalization.md (look for the two rows:
# "best" speed-up and "share of textbook"; the winning transform should be warp-shuffle-reduction for 06
# and register-tiling for 10) and the run records beside it.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/out}
OUT="$OUT/r23-scan" SET=benchmarks/unseen2 ONLY='^(06|10)_' ITER=3 JOBS=bench,optimize \
    SUITE_TIMEOUT=${SUITE_TIMEOUT:-900} bash scripts/gpu_generalization_bench.sh
