#!/usr/bin/env bash
# Issue 23, vectorised lanes: the recipes (`optimize --backend recipes --iterations 3`) and the textbook
# fix (`bench slow.cu fixed.cu`) on the five unseen2 entries whose textbook fix also moves 8-16 bytes per
# lane: 05 rowsum (chunk-stride + vector lanes), 12 embedding gather, 25 RMSNorm bf16, 30 int8 row quant
# (cooperative-row + vector lanes, launch swept in the same batch), 31 uint8 dequant (vectorize-access
# with one division per group). On a GPU machine:
#
#   OUT=/tmp/out bash scripts/gpu_r23_vec.sh          # about 6 minutes on one H100/H200
#
# Writes $OUT/r23_vec/generalization.md (per entry: recipes' best speed-up, textbook speed-up, share of
# the textbook, the transforms that won) and $OUT/r23_vec/gen/ (suite records, logs). Look for: the
# winning candidate of 12/25/30 described "lanes move 16 bytes per access", of 05 "chunk stride with
# 16-byte lanes", of 31 vectorize-access; each at >= 80 % of the textbook share; no incorrect accepted.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/r23_vec"
OUT="$OUT/r23_vec" SET=benchmarks/unseen2 ONLY='^(05|12|25|30|31)_' ITER=3 JOBS=bench,optimize \
  SUITE_TIMEOUT=${SUITE_TIMEOUT:-420} bash scripts/gpu_generalization_bench.sh
