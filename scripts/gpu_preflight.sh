#!/usr/bin/env bash
# Is the confined worker usable on this GPU? One confined `perfagent verify` of a bundled launch-spec pair
# (examples/cuda/01_transpose_naive). Exit 0 when it passes; else 1, with the record and stderr under
# $OUT/preflight/. GPU lanes that measure the rewriter (not the sandbox) run it first and, on failure,
# go on with PERFAGENT_UNCONFINED=1 and say so in their log, so one sandbox regression on a GPU host does
# not cost a whole benchmark table (the sandbox lane, scripts/gpu_sandbox.sh, measures that regression).
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}
D="$OUT/preflight"
mkdir -p "$D"
CU=examples/cuda/01_transpose_naive
start=$(date +%s)
timeout 180 python3 -m perfagent verify "$CU/slow.cu" "$CU/fixed.cu" --device cuda --seeds 1 \
  --format json --output "$D/verify.json" 2> "$D/verify.log"
rc=$?
echo "confined verify: exit $rc after $(( $(date +%s) - start )) s" | tee "$D/result.txt"
[ "$rc" = 0 ]
