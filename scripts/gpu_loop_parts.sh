#!/usr/bin/env bash
# The optimize loop recomposed (issue 28: one OptimizeLoop given a RunContext, a rewriter, an evaluate step
# and the run writer; the GPU reached through Services) runs the GPU paths as before: the one-machine loop
# (CUDA-event timing, ncu re-profile inside bubblewrap, an incorrect rewrite rejected, KernelBench Triton,
# a Triton script timed through ncu), --propose-only then --evaluate (the Replay step), and a first kernel
# proposed then evaluated (the write-kernel step with the compile baseline).
# Writes $OUT/loop_parts/{tests.log,summary.md}.
# Expected runtime: about 5 minutes (the three GPU test files; capped at 9).
# Look for: 'passed' and no 'failed' in summary.md; the padding candidate accepted (best > 1.0x), the
# incorrect rewrite 'incorrect', and the evaluated proposals with the one-machine verdicts.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}/loop_parts; mkdir -p "$OUT"
start=$(date +%s)
timeout -k 10 540 python3 -m pytest -q -s -m gpu -p no:cacheprovider \
  tests/gpu/test_optimize_gpu.py tests/gpu/test_optimize_phases_gpu.py tests/gpu/test_first_kernel_phases_gpu.py \
  > "$OUT/tests.log" 2>&1
status=$?
{
  echo "# the optimize loop's parts on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
  echo
  echo "wall: $(( $(date +%s) - start )) s, pytest exit $status"
  echo
  echo '```'
  grep -E "passed|failed|error|accepted|incorrect|best " "$OUT/tests.log" | head -80
  echo '```'
} > "$OUT/summary.md"
cat "$OUT/summary.md"
