#!/usr/bin/env bash
# Issue 23, the atomics family (r23-atomic) on a GPU:
#  1. tests/rewrite/test_atomic_variants_gpu.py: cooperative-row's lanes-per-item candidates of three
#     scatter forms (edge scatter-add, index_add, bucket sums) and privatize-atomics' per-block / per-warp
#     candidates with packed 8/16-bit loads (u8 256 bins, u16 weighted float bins, u8 one-per-thread),
#     each verified against its original and timed with CUDA events (cupy);
#  2. `perfagent optimize --backend recipes --iterations 3` and `perfagent bench slow.cu fixed.cu` on
#     benchmarks/unseen2/09_histogram256_u8_global_atomics and 13_scatter_add_edge_per_thread (through
#     scripts/gpu_generalization_bench.sh with ONLY='^(09|13)_').
# Expected runtime: about 4 minutes (1: ~1 min, 2: two entries of ~60 s plus their bench).
# Writes $OUT/r23_atomic/{tests.log,times.md,generalization.md,gen_runs.tgz}.
# Look for: 'passed' and no 'failed' in tests.log; in times.md, the scatter forms' 'block / 32' rows
# several times faster than the original, the histogram variants >> 1x; in generalization.md, 13 won by
# cooperative-row near the textbook fix (4.8x on an H200) and 09 won by privatize-atomics (packed, per
# block or per warp) nearer its textbook fix (263x on an H200) than the 155x before.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
BASE=${OUT:-/tmp/out}
OUT=$BASE/r23_atomic; mkdir -p "$OUT"
printf '| form | candidate | time | speed-up |\n|---|---|---|---|\n' > "$OUT/times.md"
R23_ATOMIC_OUT="$OUT/times.md" timeout -k 10 240 python3 -m pytest -q -m gpu -p no:cacheprovider \
  tests/rewrite/test_atomic_variants_gpu.py > "$OUT/tests.log" 2>&1
echo "exit $?" >> "$OUT/tests.log"
OUT=$OUT SET=benchmarks/unseen2 ONLY='^(09|13)_' ITER=3 JOBS=bench,optimize SUITE_TIMEOUT=420 \
  bash scripts/gpu_generalization_bench.sh > "$OUT/generalization.log" 2>&1
cat "$OUT/times.md" "$OUT/tests.log" | tail -40
cat "$OUT/generalization.md" 2>/dev/null
