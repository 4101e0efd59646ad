#!/usr/bin/env bash
# Element-wise recipes on a GPU (issue 23, r23-elem): demote-double and the widened vectorize-access
# verified and timed on our own kernels (tests/gpu/test_elementwise_recipes_gpu.py), then the recipes
# backend on the three unseen2 entries that now get new candidates (01, 02, 31; --iterations 3; the
# textbook fixes are 1.49x, 3.70x, 2.74x in BENCHMARKS.md). Writes $OUT/elementwise/{tests.log,unseen2.md,
# summary.md} and each run folder under $OUT/elementwise/runs/.
# Expected runtime: about 4-5 minutes (4 one-iteration runs, then 3 three-iteration runs of 30-70 s).
# Look for: '4 passed' in summary.md; in unseen2.md, 02 above 1.00x (it was 1.00x: every step skipped
# 'at its bound') with fast-math tried, 01 and 31 with vectorize-access tried, and the speed-up of each.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}/elementwise; mkdir -p "$OUT"
start=$(date +%s)
{
  echo "== own kernels: verified and faster"
  timeout -k 10 180 python3 -m pytest -q -m gpu -s -p no:cacheprovider tests/gpu/test_elementwise_recipes_gpu.py
  echo "exit $?"
} > "$OUT/tests.log" 2>&1
{
  echo "| entry | recipes best | plan (tried / won) | wall s |"
  echo "|---|---|---|---|"
  for entry in 01_affine_bcast_half_modulo 02_gelu_bf16_double_promotion 31_uint8_dequant_per_channel_bf16; do
    t0=$(date +%s)
    run="$OUT/runs/$entry"
    timeout -k 10 150 python3 -m perfagent optimize "benchmarks/unseen2/$entry/slow.cu" --backend recipes \
      --iterations 3 --out "$run" --force > "$OUT/$entry.log" 2>&1
    rc=$?
    best=$(python3 - "$run/record.json" <<'PY'
import json, sys
try:
    rec = json.load(open(sys.argv[1]))
except OSError:
    print("no record | -"); raise SystemExit
opt = rec.get("optimize") or {}
cands = {c["id"]: c for c in rec.get("candidates", [])}
best = cands.get(opt.get("best") or rec.get("best") or "") or {}
steps = [s for s in opt.get("plan", []) if s.get("tried")]
won = [s["transform"] for s in opt.get("plan", []) if s.get("winner")]
print(f"{opt.get('best_speedup') or 1.0:.2f}x ({best.get('transform', '-')}) | "
      + ", ".join(s["transform"] for s in steps) + f" / {', '.join(won) or '-'}")
PY
)
    echo "| $entry | $best | rc $rc | $(( $(date +%s) - t0 )) |"
  done
} > "$OUT/unseen2.md" 2>&1
{
  echo "# element-wise recipes on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
  echo
  echo "wall: $(( $(date +%s) - start )) s"
  echo
  echo '```'
  grep -E "passed|failed|error|exit [0-9]+|^==" "$OUT/tests.log"
  echo '```'
  echo
  cat "$OUT/unseen2.md"
} > "$OUT/summary.md"
cat "$OUT/summary.md"
