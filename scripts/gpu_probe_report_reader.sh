#!/usr/bin/env bash
# Does reading a recorded report crash the process on the GPU machine (ncu's own extras/python
# ncu_report) when torch was imported first? A pytest run there (xdist, torch imported during collection)
# died with SIGSEGV inside ncu_report's metric.unit() while reading examples/reports. This reads each
# bundled report in a fresh interpreter twice, without and with `import torch` first, with faulthandler on,
# and writes one line per read (exit status; 139 = SIGSEGV) to $OUT/probe_report_reader.md.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
res="$OUT/probe_report_reader.md"
echo "| report | first import | exit | kernels / error |" > "$res"
echo "|---|---|---:|---|" >> "$res"
for rep in examples/reports/*.ncu-rep; do
  for pre in "" "import torch; "; do
    out=$(timeout 120 python3 -X faulthandler -c "${pre}from profilers.ncu.report_reader import read_ncu_rep; print(len(read_ncu_rep('$rep').kernels))" 2>&1)
    rc=$?
    echo "| $(basename "$rep") | ${pre:-none} | $rc | $(echo "$out" | tail -1 | tr '|' '/' | cut -c1-120) |" >> "$res"
  done
done
cat "$res"
