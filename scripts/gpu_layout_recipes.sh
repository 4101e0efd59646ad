#!/usr/bin/env bash
# The issue-23 layout recipes (transpose-inplace, permute-rows, chunk-stride, smem-pad-index, batched
# register-/smem-tiling) on a GPU
# machine (H100/H200, ncu 2025.3.1, nvcc 13):
#
#   OUT=/tmp/out bash scripts/gpu_layout_recipes.sh
#
# 1. `pytest -m gpu tests/gpu/test_layout_recipes_gpu.py` on the recipes' own slow kernels
#    (tests/data/layout_recipes): each candidate verified bit-exact and faster (log: pytest.log).
# 2. The measuring set's entries these recipes target (benchmarks/unseen2 05, 07, 15, 17, 21): `perfagent
#    bench` of the textbook fix, then `optimize --backend recipes --transform T --iterations 1`;
#    $OUT/layout_recipes/table.md holds the textbook speed-up, the recipes' best and its share.
# Expected runtime: about 7 minutes of GPU time (5 pytest cases of ~40 s, 5 entries of ~50 s).
# What to look for: every candidate 'pass' (none incorrect); on unseen2 17 and 15 a speed-up of
# several x (textbook 4.95x / 3.42x), 05 near the textbook 2.72x, 07 above 1x (textbook 1.57x),
# 21 near or above the textbook 1.90x.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}/layout_recipes
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1
timeout 420 python3 -m pytest -m gpu -q -s tests/gpu/test_layout_recipes_gpu.py > "$OUT/pytest.log" 2>&1
echo "pytest rc=$?" >> "$OUT/pytest.log"
for pair in 05_rowsum_contiguous_chunk:coalesce-access 07_scan_blelloch_bank_conflicts:smem-padding \
            15_split_heads_permute_half:vectorize-access 17_transpose_inplace_square:coalesce-access \
            21_bmm_strided_half:register-tiling; do
  name=${pair%%:*}
  dir=benchmarks/unseen2/$name
  spec=$(ls "$dir"/*.launch.toml)
  mkdir -p "$OUT/$name"
  timeout 200 python3 -m perfagent bench "$spec" "$dir/fixed.cu" --device cuda --runs 20 --format json \
    -o "$OUT/$name/bench.json" --force > "$OUT/$name/bench.log" 2>&1
  timeout 300 python3 -m perfagent optimize "$spec" --backend recipes --transform "${pair##*:}" \
    --iterations 1 --runs 20 --device cuda --out "$OUT/$name/run" > "$OUT/$name/optimize.log" 2>&1
done
python3 - "$OUT" <<'PY' > "$OUT/table.md"
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
print(f"GPU: {(out / 'gpu.txt').read_text().strip()}\n")
print("| entry | textbook fix | recipes best | share | candidates (recipe: verdict, speed-up) |")
print("|---|---|---|---|---|")
for entry in sorted(p for p in out.iterdir() if p.is_dir()):
    bench = json.loads((entry / "bench.json").read_text()) if (entry / "bench.json").is_file() else {}
    fix = (bench.get("comparison") or {}).get("speedup")
    rec_path = entry / "run" / "record.json"
    rec = json.loads(rec_path.read_text()) if rec_path.is_file() else {}
    best = (rec.get("optimize") or {}).get("best_speedup") or 1.0
    cands = "; ".join(f"{c.get('recipe')}: {c.get('verdict')}, {c.get('speedup')}" for c in rec.get("candidates") or [])
    share = f"{100 * (best - 1) / (fix - 1):.0f} %" if fix and fix > 1.01 else "–"
    print(f"| {entry.name} | {f'{fix:.2f}x' if fix else '–'} | {best:.2f}x | {share} | {cands or '–'} |")
PY
cat "$OUT/table.md"
