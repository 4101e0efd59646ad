#!/usr/bin/env bash
# The rewriter on kernels it was not written for (issue 12), for BENCHMARKS.md. On a GPU machine:
#
#   OUT=/tmp/out ONLY='0[1-6]_' bash scripts/gpu_generalization_bench.sh      # a subset (regex on the name)
#
# Runs `perfagent suite examples/unseen --jobs bench,optimize` (bench: slow.cu vs its textbook fixed.cu;
# optimize: `--backend recipes` on slow.cu alone), then writes $OUT/generalization.md: per entry the
# baseline, the recipes' best speed-up, the textbook speed-up on the same GPU, the best as a share of
# the textbook's, % of DRAM peak before/after, the transforms that won, those rejected and why, and the
# wall time. Knobs (env): ONLY (regex, default all) ITER (3) RUNS (20) ENTRY_TIMEOUT (240) SET (examples/unseen)
# JOBS (bench,optimize) WORKERS (GPUs, 1) SUITE_TIMEOUT (s, the table and the tarball of records are written either way).
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}
SET=${SET:-examples/unseen}
ONLY=${ONLY:-.}
ITER=${ITER:-3}
RUNS=${RUNS:-20}
ENTRY_TIMEOUT=${ENTRY_TIMEOUT:-240}
mkdir -p "$OUT/gen"
python3 - "$SET" "$ONLY" "$OUT/gen/suite.toml" <<'PY'
import re, sys
from pathlib import Path
from perfagent.suite.manifest import discover
folder, only, out = Path(sys.argv[1]), re.compile(sys.argv[2]), Path(sys.argv[3])
lines = []
for e in discover(folder):
    if not only.search(e.name):
        continue
    lines += ["[[entry]]", f'name = "{e.name}"', f'target = "{e.target}"']
    if e.candidate:
        lines.append(f'candidate = "{e.candidate}"')
    lines.append("")
out.write_text("\n".join(lines))
print(f"{lines.count('[[entry]]')} entries")
PY
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$OUT/gen/gpu.txt" 2>&1
timeout "${SUITE_TIMEOUT:-3000}" python3 -m perfagent suite "$OUT/gen/suite.toml" --device cuda --workers "${WORKERS:-1}" --jobs "${JOBS:-bench,optimize}" --iterations "$ITER" \
  --runs "$RUNS" --entry-timeout "$ENTRY_TIMEOUT" --out "$OUT/gen/run" --force > "$OUT/gen/summary.txt" 2> "$OUT/gen/suite.log"
python3 - "$OUT/gen/run" "$(cat "$OUT/gen/gpu.txt")" > "$OUT/generalization.md" <<'PY'
import json, math, sys
from pathlib import Path
run, gpu = Path(sys.argv[1]), sys.argv[2]
rows = [json.loads(l) for l in (run / "results.jsonl").read_text().splitlines() if l.strip()]
print(f"GPU: {gpu}\n")


def record(r):
    if r.get("optimize_run") and (Path(r["optimize_run"]) / "record.json").is_file():
        return json.loads((Path(r["optimize_run"]) / "record.json").read_text())
    return None


def parts(r):
    rec = record(r) or {}
    o = rec.get("optimize") or {}
    base = o.get("baseline") or {}
    best = next((c for c in rec.get("candidates", []) if c["id"] == o.get("best")), None)
    top = (base.get("findings") or [{}])[0].get("category", "–")
    rej = {}
    for c in rec.get("candidates", []):
        if not c.get("accepted") and c.get("verdict") != "duplicate":
            rej.setdefault(c["transform"], (c.get("reason") or "")[:70])
    rej_s = "; ".join(f"{t}: {why}" for t, why in list(rej.items())[:3]) or "–"
    fail = r.get("failure")
    if fail:
        rej_s += f" ({fail}: {[j['message'][:80] for j in r['jobs'] if not j['ok']]})"
    won = ", ".join(r.get("transforms_won") or []) or "–"
    return base, best, top, o.get("best_speedup") or 1.0, won, rej_s


def fmt(x, f="{:.2f}×"):
    return f.format(x) if x is not None else "–"


cuda = sorted((r for r in rows if not r["name"].endswith(".py")), key=lambda r: r["name"])
kb = sorted((r for r in rows if r["name"].endswith(".py")), key=lambda r: r["name"])
print("| entry | top finding | baseline | recipes best | textbook fix | share of textbook | % DRAM peak before → after | won | rejected (why) | wall s |")
print("|---|---|---|---|---|---|---|---|---|---|")
shares = {}
for r in cuda:
    base, best, top, sp, won, rej = parts(r)
    bt, tb = base.get("time_s"), r.get("speedup")
    share = (sp - 1) / (tb - 1) if tb and tb > 1.0 else None
    shares[r["name"]] = share
    d0, d1 = base.get("pct_of_dram_peak"), (best or {}).get("pct_of_dram_peak")
    print(f"| {Path(r['name']).parent} | {top} | {fmt(bt * 1e6 if bt else None, '{:.1f} µs')} | {sp:.2f}× | {fmt(tb)} | "
          f"{fmt(share, '{:.0%}')} | {fmt(d0, '{:.1f}')} → {fmt(d1, '{:.1f}')} | {won} | {rej} | {r['elapsed_s']:.0f} |")
def unseen(n):  # an entry of examples/unseen (named "NN_x/slow.cu" there, "unseen/NN_x/slow.cu" from examples)
    return Path(n).parent.parent.name in ("", "unseen")


def number(n):
    return Path(n).parent.name[:2]


for label, keep in (
    ("examples", lambda n: not unseen(n)),
    ("unseen 01–11", lambda n: unseen(n) and number(n) <= "11"),
    ("unseen 12–17 (held out)", lambda n: unseen(n) and number(n) >= "12"),
):
    sel = {n: s for n, s in shares.items() if keep(n)}
    if not sel:
        continue
    hit = sum(1 for s in sel.values() if s is not None and s >= 0.8)
    print(f"\n{label}: {hit}/{len(sel)} entries reach ≥ 80 % of the textbook fix's speed-up", end="")
print("\n")
if kb:
    print("| KernelBench solution | top finding | solution time | solution vs eager | recipes best over the solution | best vs eager | won | rejected (why) | wall s |")
    print("|---|---|---|---|---|---|---|---|---|")
    logs = []
    for r in kb:
        base, best, top, sp, won, rej = parts(r)
        bt, vs_eager = base.get("time_s"), r.get("speedup")
        logs.append(math.log(sp))
        print(f"| {r['name'].split('/')[-1]} | {top} | {fmt(bt * 1e6 if bt else None, '{:.1f} µs')} | {fmt(vs_eager, '{:.3f}×')} | "
              f"{sp:.2f}× | {fmt(vs_eager * sp if vs_eager else None, '{:.3f}×')} | {won} | {rej} | {r['elapsed_s']:.0f} |")
    print(f"\ngeometric-mean speed-up of the recipes over the {len(kb)} solutions: {math.exp(sum(logs) / len(logs)):.2f}×")
PY
cat "$OUT/generalization.md"
cd "$OUT" && tar czf gen_runs.tgz gen/run/results.jsonl gen/run/summary.json gen/run/runs/*/record.json gen/run/runs/*/candidates/*/outcome.json gen/suite.log gen/summary.txt 2>/dev/null; rm -rf "$OUT/gen/run"
