#!/usr/bin/env bash
# The issue-23 recipes on their GPU set (benchmarks/i23_recipes: thread-coarsening, async-copy,
# grid-swizzle-cuda, smem-swizzle, fast-math). On a GPU machine (H100/H200, ncu 2025.3.1, nvcc 13):
#
#   OUT=/tmp/out bash scripts/gpu_i23_recipes.sh
#
# Per entry: `perfagent bench spec slow.cu vs fixed.cu` (the textbook fix's speed-up), then
# `perfagent optimize spec --backend recipes --transform T --iterations 1` (the recipe's candidates,
# verified, timed; the best kept), and writes $OUT/i23_recipes/table.md: baseline, textbook speed-up,
# recipe best speed-up, its share of the textbook's, the winning candidate's description, and the
# verdicts of the others. Logs and records under $OUT/i23_recipes/<entry>/. Expected runtime: about
# 4-6 minutes of GPU time (5 entries; the 4096^3 tiled and naive matmuls dominate).
# What to look for: every recipe candidate verified (no 'incorrect'), thread-coarsening near the
# grid-stride fix on 01, async-copy >= 1.0x of the single-buffered kernel on 02 (it was negative on an
# A6000 in siboehm k11), grid-swizzle's L2 hit rate up on 03, smem-swizzle close to padding on 04,
# fast-math near the intrinsics fix on 05.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}/i23_recipes
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1
declare -A TRANSFORM=(
  [01_coarsen_tiny_blocks]=thread-coarsening
  [02_async_copy_tiled_matmul]=async-copy
  [03_grid_swizzle_naive_sgemm]=grid-swizzle
  [04_smem_swizzle_transpose]=smem-swizzle
  [05_fast_math_transcendentals]=fast-math
)
for dir in benchmarks/i23_recipes/0*/; do
  name=$(basename "$dir")
  spec=$(ls "$dir"*.launch.toml)
  mkdir -p "$OUT/$name"
  timeout 300 python3 -m perfagent bench "$spec" "${dir}fixed.cu" --device cuda --runs 30 --format json \
    -o "$OUT/$name/bench.json" --force > "$OUT/$name/bench.log" 2>&1
  timeout 420 python3 -m perfagent optimize "$spec" --backend recipes --transform "${TRANSFORM[$name]}" \
    --iterations 1 --runs 30 --device cuda --out "$OUT/$name/run" > "$OUT/$name/optimize.log" 2>&1
done
python3 - "$OUT" <<'PY' > "$OUT/table.md"
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
print(f"GPU: {(out / 'gpu.txt').read_text().strip()}\n")
print("| entry | transform | textbook fix | recipes best | share | best candidate | others (verdict) |")
print("|---|---|---|---|---|---|---|")
for entry in sorted(p for p in out.iterdir() if p.is_dir()):
    bench = json.loads((entry / "bench.json").read_text()) if (entry / "bench.json").is_file() else {}
    fix = (bench.get("comparison") or {}).get("speedup")
    rec_path = entry / "run" / "record.json"
    rec = json.loads(rec_path.read_text()) if rec_path.is_file() else {}
    o = rec.get("optimize") or {}
    best = o.get("best_speedup") or 1.0
    cands = rec.get("candidates") or []
    won = next((c for c in cands if c.get("id") == o.get("best")), None)
    others = "; ".join(f"{c.get('verdict')}: {(c.get('description') or '')[:50]}" for c in cands if c is not won)
    share = f"{100 * (best - 1) / (fix - 1):.0f} %" if fix and fix > 1.01 else "–"
    transform = (won or (cands[0] if cands else {})).get("transform", "–")
    print(f"| {entry.name} | {transform} | {f'{fix:.2f}x' if fix else '–'} | {best:.2f}x | {share} "
          f"| {(won or {}).get('description', '–')[:70]} | {others[:200] or '–'} |")
PY
cat "$OUT/table.md"
