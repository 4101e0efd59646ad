#!/usr/bin/env bash
# GPU benchmark of the optimize loop, for BENCHMARKS.md. Run from the repository root on a GPU machine:
#
#   OUT=/tmp/out bash scripts/gpu_optimize_bench.sh
#
# 1. `perfagent bench slow.cu fixed.cu` on every examples/cuda pair (what each textbook fix buys here);
# 2. `perfagent optimize --backend recipes` on every example with a launch spec and on the Triton examples
#    (baseline, best, speed-up, % of DRAM / compute peak, transforms won, rejected and why);
# 3. a Markdown report in $OUT/optimize_bench.md (records and logs under $OUT/optimize/).
#
# Robust by construction: every command has a timeout, one failing example never stops the others, and a
# total budget (BUDGET_S, default 540 s) skips what no longer fits (said in the report). Knobs (env):
# PAIRS and OPTIMIZE (space-separated lists; empty skips that part) ITER (3) CANDS (2) SEEDS (2) RUNS (20) WARMUP (3) BENCH_RUNS (30) EX_TIMEOUT (150) BENCH_TIMEOUT (90).
set -u
cd "$(dirname "$0")/.." || exit 1
if [ -f scripts/gpu_env.sh ]; then
  # shellcheck disable=SC1091
  source scripts/gpu_env.sh || echo "gpu_env.sh failed; continuing with the current environment" >&2
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
OUT=${OUT:-/tmp/out}
WORK="$OUT/optimize"
mkdir -p "$WORK"
PY=${PYTHON:-python3}
BUDGET_S=${BUDGET_S:-540}
ITER=${ITER:-3}
CANDS=${CANDS:-2}
SEEDS=${SEEDS:-2}
RUNS=${RUNS:-20}
WARMUP=${WARMUP:-3}
BENCH_RUNS=${BENCH_RUNS:-30}
EX_TIMEOUT=${EX_TIMEOUT:-150}
BENCH_TIMEOUT=${BENCH_TIMEOUT:-90}
START=$(date +%s)
STATUS="$WORK/status.tsv"
: > "$STATUS"

left() { echo $(( BUDGET_S - ($(date +%s) - START) )); }
note() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$STATUS"; echo "[$(date +%T)] $1 $2: $3" >&2; }

# Pairs whose fixed.cu is a drop-in rewrite of slow.cu under one launch spec (07 and 08 have no fix;
# 11's fix changes the data layout).
PAIRS=${PAIRS-"01_transpose_naive 02_transpose_bank_conflicts 03_reduction_divergent 04_small_grid 05_low_occupancy_smem 06_register_spills 09_histogram_atomics 10_sgemm_naive"}
# Optimize order: where a recipe is expected to matter first, so that a tight budget keeps the informative runs.
OPTIMIZE=${OPTIMIZE-"cuda/02_transpose_bank_conflicts cuda/03_reduction_divergent cuda/05_low_occupancy_smem cuda/04_small_grid triton/02_softmax_small_block.py triton/01_matmul_bad_config.py cuda/01_transpose_naive cuda/06_register_spills cuda/09_histogram_atomics cuda/10_sgemm_naive cuda/11_strided_access cuda/08_vector_copy_near_peak cuda/07_compute_bound_fma"}

{
  if command -v nvidia-smi >/dev/null; then nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>&1; else echo "no nvidia-smi"; fi
  if command -v ncu >/dev/null; then ncu --version 2>&1 | tail -1; else echo "no ncu"; fi
  # On the lent GPU machine the folder's .git is not this checkout's (2026-11-27: it printed the last landed
  # commit, not the working tree sent): say the commit in PERFAGENT_COMMIT when running there.
  if [ -n "${PERFAGENT_COMMIT:-}" ]; then echo "perfagent $PERFAGENT_COMMIT (PERFAGENT_COMMIT)"; else git log -1 --format='perfagent %h %s (git here)' 2>/dev/null; fi
} > "$WORK/environment.txt" 2>&1

# --- 1. textbook before/after pairs -------------------------------------------------------------
for ex in $PAIRS; do
  d="examples/cuda/$ex"
  if [ ! -f "$d/fixed.cu" ]; then note bench "$ex" "no fixed.cu"; continue; fi
  t=$(left)
  if [ "$t" -lt 20 ]; then note bench "$ex" "skipped: budget spent"; continue; fi
  tmo=$(( t < BENCH_TIMEOUT ? t : BENCH_TIMEOUT ))
  timeout -k 10 "$tmo" "$PY" -m perfagent bench "$d/slow.cu" "$d/fixed.cu" --device cuda --runs "$BENCH_RUNS" --warmup 5 \
    --format json -o "$WORK/bench_$ex.json" --force 2> "$WORK/bench_$ex.log"
  rc=$?
  if [ $rc -eq 0 ]; then note bench "$ex" ok; else note bench "$ex" "failed (exit $rc$([ $rc -eq 124 ] && echo ', timeout')): $(tail -1 "$WORK/bench_$ex.log" | tr '\t' ' ')"; fi
done

# --- 2. the optimize loop with the recipes backend ------------------------------------------------
for item in $OPTIMIZE; do
  name=$(basename "$item" .py)
  if [ "${item#cuda/}" != "$item" ]; then target="examples/$item/slow.cu"; else target="examples/$item"; fi
  t=$(left)
  if [ "$t" -lt 40 ]; then note optimize "$name" "skipped: budget spent"; continue; fi
  tmo=$(( t < EX_TIMEOUT ? t : EX_TIMEOUT ))
  timeout -k 10 "$tmo" "$PY" -m perfagent optimize "$target" --backend recipes --device cuda \
    --iterations "$ITER" --candidates "$CANDS" --seeds "$SEEDS" --runs "$RUNS" --warmup "$WARMUP" \
    --profile-timeout 120 --timeout 60 --compile-timeout 300 \
    --out "$WORK/run_$name" --force --format json -o "$WORK/optimize_$name.json" 2> "$WORK/optimize_$name.log"
  rc=$?
  if [ $rc -eq 0 ]; then note optimize "$name" ok; else note optimize "$name" "failed (exit $rc$([ $rc -eq 124 ] && echo ', timeout: partial results from the run folder')): $(tail -1 "$WORK/optimize_$name.log" | tr '\t' ' ')"; fi
done

# --- 3. the report --------------------------------------------------------------------------------
WORK="$WORK" "$PY" - > "$OUT/optimize_bench.md" <<'PYEOF'
import json, os, glob
from pathlib import Path

work = Path(os.environ["WORK"])
status = {}
for line in (work / "status.tsv").read_text().splitlines():
    kind, name, text = (line.split("\t") + ["", ""])[:3]
    status[(kind, name)] = text


def ms(s):
    return "n/a" if s is None else f"{s * 1e3:.4g} ms"


def pct(p):
    return "n/a" if p is None else f"{p:.1f} %"


def short(text, n=90):
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


print("# perfagent optimize on the examples (recipes backend)\n")
env = (work / "environment.txt").read_text().strip() if (work / "environment.txt").exists() else ""
if env:
    print("```\n" + env + "\n```\n")

print("## Textbook pairs: `perfagent bench slow.cu fixed.cu`\n")
print("| example | slow | fixed | speed-up | significant | % roofline slow → fixed | % DRAM peak slow → fixed | flags | status |")
print("|---|---|---|---|---|---|---|---|---|")
for path in sorted(work.glob("bench_*.json")):
    ex = path.stem[len("bench_"):]
    try:
        r = json.loads(path.read_text())
    except Exception as exc:  # noqa: BLE001
        print(f"| {ex} | | | | | | | | unreadable: {short(exc)} |")
        continue
    b, c, cmp = r["baseline"], r.get("candidate") or {}, r.get("comparison") or {}

    def dram(entry):
        roof = (entry or {}).get("roofline") or {}
        a, p = roof.get("achieved_bytes_per_s"), roof.get("peak_bytes_per_s")
        return 100 * a / p if a and p else None

    def roofpct(entry):
        return ((entry or {}).get("roofline") or {}).get("pct_of_roofline")

    print(
        f"| {ex} | {ms(b['timing']['median_s'])} | {ms((c.get('timing') or {}).get('median_s'))} | "
        f"{cmp.get('speedup', 0):.2f}x | {cmp.get('significant')} | {pct(roofpct(b))} → {pct(roofpct(c))} | "
        f"{pct(dram(b))} → {pct(dram(c))} | {', '.join(r.get('flags', [])) or '–'} | {status.get(('bench', ex), '')} |"
    )
for (kind, name), text in sorted(status.items()):
    if kind == "bench" and not (work / f"bench_{name}.json").exists():
        print(f"| {name} | | | | | | | | {short(text)} |")

print("\n## The loop: `perfagent optimize --backend recipes`\n")
print("| example | top finding | baseline | best | speed-up | % DRAM peak base → best | % compute peak | % roofline base → best | "
      "≥ 85 % DRAM (memory-bound) | transforms won | rejected (why) | status |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
incorrect_accepted = 0
names = sorted({n for (k, n) in status if k == "optimize"} | {p.name[4:] for p in work.glob("run_*")})
for name in names:
    record_path = work / f"run_{name}" / "record.json"
    run_status = status.get(("optimize", name), "")
    cands, base, best_id = [], {}, None
    if record_path.exists():
        rec = json.loads(record_path.read_text())
        cands, base, best_id = rec.get("candidates", []), rec.get("baseline") or {}, rec.get("best")
        stopped = (rec.get("optimize") or {}).get("stopped", "")
    else:  # killed by its timeout: read what the candidates left behind
        for p in sorted((work / f"run_{name}" / "candidates").glob("*/outcome.json")):
            cands.append(json.loads(p.read_text()))
        stopped = "partial (no record.json)" if (work / f"run_{name}").exists() else ""
    for c in cands:
        if c.get("accepted") and (c.get("verification") or {}).get("verdict") != "pass":
            incorrect_accepted += 1
    best = next((c for c in cands if c.get("id") == best_id), None)
    def how(c):
        geometry = ", ".join(f"{k}={v}" for k, v in (c.get("launch") or {}).items())
        return f"{c['id']} {c['transform']} ({c.get('recipe') or c.get('backend')}{'; ' + geometry if geometry else ''})"

    won = ", ".join(how(c) for c in cands if c.get("accepted")) or "–"
    top = ((base.get("findings") or [{}])[0]).get("category", "?")
    rejected = "; ".join(f"{c['id']} {c['transform']}: {c['verdict']} ({short(c.get('reason', ''), 70)})" for c in cands if not c.get("accepted")) or "–"
    bound = ((base.get("profile") or {}).get("bound")) or "?"
    dram_best = (best or {}).get("pct_of_dram_peak") if best else base.get("pct_of_dram_peak")
    target85 = "–" if bound != "memory" else ("yes" if (dram_best or 0) >= 85 else "no")
    speed = f"{best['speedup']:.2f}x" if best and best.get("speedup") else "–"
    print(
        f"| {name} | {top} | {ms(base.get('time_s'))} | {ms((best or {}).get('time_s'))} | {speed} | "
        f"{pct(base.get('pct_of_dram_peak'))} → {pct((best or {}).get('pct_of_dram_peak'))} | "
        f"{pct(base.get('pct_of_compute_peak'))} → {pct((best or {}).get('pct_of_compute_peak'))} | "
        f"{pct(base.get('pct_of_roofline'))} → {pct((best or {}).get('pct_of_roofline'))} | {target85} ({bound}) | "
        f"{won} | {rejected.replace('|', '/')} | {short(run_status + ('; ' + stopped if stopped else ''), 80)} |"
    )
print(f"\nIncorrect kernels accepted: **{incorrect_accepted}** (every accepted candidate passed verification).")
print("\nPer-example records: `optimize/run_<example>/record.json`, `summary.md`; logs: `optimize/*.log`.")
PYEOF
cat "$OUT/optimize_bench.md"
echo "elapsed: $(( $(date +%s) - START )) s (budget ${BUDGET_S} s)" >&2
