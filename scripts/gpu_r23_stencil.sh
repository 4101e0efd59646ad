#!/usr/bin/env bash
# Issue 23, 2-D stencil tiling (recipe stencil-rows, under thread-coarsening and register-tiling). On a GPU
# machine:
#
#   OUT=/tmp/out bash scripts/gpu_r23_stencil.sh
#
# Runs scripts/gpu_generalization_bench.sh (`bench slow.cu fixed.cu` and `optimize --backend recipes
# --iterations 3`) on benchmarks/unseen2 entries 11 (Game of Life on a torus, grid-stride with `%`: the
# entry stencil-rows was built for) and 10 (the 3-D stencil: register-streaming, to show it is unchanged),
# then on examples/unseen 09 (a 5-point Jacobi whose row comes from threadIdx.x: a 2-D stencil the recipe
# also matches, where thread-map-swap is the real fix). Writes $OUT/r23_stencil/unseen2/generalization.md
# and $OUT/r23_stencil/unseen/generalization.md (BENCHMARKS.md's table) with the suite records under gen/.
# Expected runtime: about 4-5 minutes on one GPU (three entries; 11 takes ~60 s, 10 ~75 s, 09 ~60 s plus
# the benches).
# Look for: on 11 the plan tries thread-coarsening first (stencil-rows: "stencil rows (grid-stride loop)"
# candidates, 4 geometries), every candidate verified correct, then fast-math (modulo-to-select) on the
# winner; the share of the textbook speed-up (1.74x on an H200; the last run reached 1.22x = 30 %). 10 must
# stay at ~1.70x (register-tiling / register-streaming).
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/r23_stencil/unseen2" "$OUT/r23_stencil/unseen"
OUT="$OUT/r23_stencil/unseen2" SET=benchmarks/unseen2 ONLY='^(10|11)_' ITER=${ITER:-3} JOBS=bench,optimize \
  SUITE_TIMEOUT=${SUITE_TIMEOUT:-420} bash scripts/gpu_generalization_bench.sh
OUT="$OUT/r23_stencil/unseen" SET=examples/unseen ONLY='^09_' ITER=${ITER:-3} JOBS=bench,optimize \
  SUITE_TIMEOUT=${SUITE_TIMEOUT:-240} bash scripts/gpu_generalization_bench.sh
