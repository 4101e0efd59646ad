#!/usr/bin/env bash
# Issue 23 (r23-kb): the recipes on the KernelBench load_inline solutions they could not read before —
# 03 (flat grid-stride batched matmul), 05 (3-D block, broadcast B), 10 (flat index + bias/ReLU epilogue):
# smem-tiling / register-tiling; 01 (log-softmax, one thread per element recomputing its row): cooperative-row
# after the row hoist — --iterations 3, one entry per GPU of a 4-GPU host:
#
#   OUT=/tmp/out bash scripts/gpu_r23_kb.sh
#
# Reuses scripts/gpu_kb_cost.sh (one build per distinct source, ENTRY_TIMEOUT=480 s per entry) with
# KB_LANES='^01_;^03_;^05_;^10_'; everything lands under $OUT/r23_kb/kb_cost/ (kb_cost.md: per entry the
# solution's time, the best speed-up, the wall time and its RunCost stages, and the geometric mean).
# Expected runtime: <= 9 min (480 s per lane in parallel + ~30 s of set-up and table).
# What to look for: smem-tiling / register-tiling accepted on 03, 05 and 10 (their candidates carry a
# dim3 grid re-derived for the tile in the wrapper), cooperative-row accepted on 01 (grid per row, not per
# element), 0 incorrect accepted; the plan reaching those transforms in iteration 1 or 2 (the plan column).
# Knobs (env): KB_LANES (override the lanes), ENTRY_TIMEOUT (480), ITER (3).
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/r23_kb"
OUT="$OUT/r23_kb" PART=1 KB_LANES="${KB_LANES:-^01_;^03_;^05_;^10_}" bash scripts/gpu_kb_cost.sh
