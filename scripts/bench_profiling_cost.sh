#!/usr/bin/env bash
# Profiling-cost benchmark (BENCHMARKS.md): wall time of `perfagent diagnose program.cu` against
# `ncu --set basic` and `ncu --set full` on the same multi-kernel program, on a real GPU.
# Usage: scripts/bench_profiling_cost.sh [program.cu] [repeats]   (prints a Markdown table)
set -euo pipefail
src=${1:-examples/cuda/suite/main.cu}
reps=${2:-3}
work=$(mktemp -d)
nvcc -arch=sm_90 -O3 -lineinfo -o "$work/prog" "$src"
"$work/prog" >/dev/null   # warm the driver / JIT caches once

time_it() {  # label, command...
  local label=$1; shift
  local best=""
  for _ in $(seq "$reps"); do
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >"$work/out.txt" 2>&1 || { echo "FAILED: $label"; tail -5 "$work/out.txt"; }
    t1=$(date +%s.%N)
    local dt
    dt=$(python3 -c "print(f'{$t1-$t0:.2f}')")
    echo "$label run: $dt s" >&2
    best="$best $dt"
  done
  python3 -c "import statistics,sys; v=[float(x) for x in '$best'.split()]; print(f'| $label | {statistics.median(v):.2f} | {min(v):.2f} | {max(v):.2f} |')"
}

echo "| command | median s | min s | max s |"
echo "|---|---|---|---|"
time_it "program alone" "$work/prog"
time_it "ncu --set basic" ncu --clock-control none --set basic -f -o "$work/basic" "$work/prog"
time_it "ncu --set full" ncu --clock-control none --set full -f -o "$work/full" "$work/prog"
time_it "perfagent diagnose (targeted, incl. build + parse + classify)" \
  python3 -m perfagent diagnose "$src" --no-save --format json -o "$work/diag.json" --force
time_it "perfagent diagnose on the prebuilt binary (-- prog)" \
  python3 -m perfagent diagnose --no-save --format json -o "$work/diag2.json" --force -- "$work/prog"
python3 - "$work/diag.json" <<'PY'
import json, sys
rec = json.load(open(sys.argv[1]))
ks = rec["kernels"]
print(f"\nkernels diagnosed: {len(ks)}; metrics collected per kernel: "
      f"{ks[0]['profile'].get('raw_metric_count') if ks else 'n/a'}")
missing = {}
for k in ks:
    for s in k.get("skipped", []):
        missing[s["rule"]] = s["reason"]
print("rules skipped for missing metrics:", missing or "none")
PY
for f in basic full; do ls -la "$work/$f.ncu-rep" | awk -v f=$f '{print f" report bytes: "$5}'; done
rm -rf "$work"
