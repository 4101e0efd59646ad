#!/usr/bin/env bash
# cooperative-row's item forms (issue 23, r23-coop) on a GPU: every candidate of seven thread-per-item
# kernels written in tests/rewrite/test_cooperative_item.py (column sum, gather copy, 2-D plane max,
# channel mean/var/normalise, grid-stride rows, pooling window + argmax, outputs with serial inner sums)
# verified against its original and timed with CUDA events (cupy), then the recipe's proposals for the
# unseen2 item-per-thread entries (CPU work, no profiling).
# Expected runtime: about 2 minutes. Writes $OUT/coop_items/{tests.log,times.md,proposals.md}.
# Look for: 'passed' and no 'failed' in tests.log; in times.md, the best speed-up per form (> 1x, most
# 5-50x); in proposals.md, candidates for 04, 12, 23, 26, 29, 33.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}/coop_items; mkdir -p "$OUT"
printf '| form | candidate | time | speed-up |\n|---|---|---|---|\n' > "$OUT/times.md"
COOP_ITEMS_OUT="$OUT/times.md" timeout -k 10 240 python3 -m pytest -q -m gpu -p no:cacheprovider \
  tests/rewrite/test_cooperative_item_gpu.py > "$OUT/tests.log" 2>&1
echo "exit $?" >> "$OUT/tests.log"
{
  for e in 04_colsum_double_thread_per_column 12_embedding_gather_thread_per_token 23_maxpool2d_plane_per_thread \
           26_batchnorm_train_channel_per_thread 29_logsoftmax_double_gridstride_rows 33_spmm_padded_rows_thread_per_row; do
    echo "## $e"
    timeout -k 10 120 python3 -m perfagent optimize "benchmarks/unseen2/$e/slow.cu" --propose-only --backend recipes \
      --transform cooperative-row --out "$OUT/proposals/$e" --force 2>&1 | tail -1
  done
} > "$OUT/proposals.md"
cat "$OUT/times.md" "$OUT/tests.log" | tail -40
