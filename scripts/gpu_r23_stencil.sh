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
# First, tests/rewrite/test_stencil_rows_gpu.py (pytest -m gpu): our own stencil forms' candidates checked
# bit for bit on the GPU and timed ($OUT/r23_stencil/own_forms.md, .log).
# Expected runtime: about 5 minutes on one GPU (own forms ~30 s; three entries: 11 ~60 s, 10 ~75 s, 09
# ~60 s, plus the benches).
# Look for: own_forms.log ends "exit 0" (every candidate bit-exact); on 11 the plan tries thread-coarsening first (stencil-rows: "stencil rows (grid-stride loop)"
# candidates, 4 geometries), every candidate verified correct, then fast-math (modulo-to-select) on the
# winner; the share of the textbook speed-up (1.74x on an H200; the last run reached 1.22x = 30 %). 10 must
# stay at ~1.70x (register-tiling / register-streaming).
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/r23_stencil/unseen2" "$OUT/r23_stencil/unseen"
# our own five stencil forms (six kernels), every candidate bit-exact against its original on a ragged
# 4093 x 4091 grid, and timed (about 30 s)
(
  # shellcheck disable=SC1091
  source scripts/gpu_env.sh || exit 1
  printf '| form | candidate | time | speed-up |\n|---|---|---|---|\n' > "$OUT/r23_stencil/own_forms.md"
  STENCIL_OUT="$OUT/r23_stencil/own_forms.md" timeout -k 10 180 python3 -m pytest -q -m gpu -p no:cacheprovider \
    tests/rewrite/test_stencil_rows_gpu.py > "$OUT/r23_stencil/own_forms.log" 2>&1
  echo "exit $?" >> "$OUT/r23_stencil/own_forms.log"
)
OUT="$OUT/r23_stencil/unseen2" SET=benchmarks/unseen2 ONLY='^(10|11)_' ITER=${ITER:-3} JOBS=bench,optimize \
  SUITE_TIMEOUT=${SUITE_TIMEOUT:-420} bash scripts/gpu_generalization_bench.sh
OUT="$OUT/r23_stencil/unseen" SET=examples/unseen ONLY='^09_' ITER=${ITER:-3} JOBS=bench,optimize \
  SUITE_TIMEOUT=${SUITE_TIMEOUT:-240} bash scripts/gpu_generalization_bench.sh
