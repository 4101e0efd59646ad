#!/usr/bin/env bash
# Where `perfagent diagnose` spends its time, for the profiling-cost target (issue 10, BENCHMARKS.md).
# On a GPU machine:  OUT=/tmp/out bash scripts/gpu_profiling_passes.sh [program.cu] [repeats]
#
# For one multi-kernel program: wall time and replay passes per kernel of `ncu --set basic`, of the
# exact ncu command perfagent runs, and of variants (no ncu rules, metrics without sections), then a
# cProfile of `perfagent diagnose` on the prebuilt binary (ncu vs report reading vs the rest), and
# the cold/warm `.cu` diagnose (the nvcc build cache). Writes $OUT/passes.md. LIGHT=1: only basic,
# perfagent's ncu command and the diagnose timings.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}
src=${1:-examples/cuda/suite/main.cu}
reps=${2:-3}
work=$(mktemp -d)
mkdir -p "$OUT"
nvcc -arch=sm_90 -O3 -lineinfo -o "$work/prog" "$src" || exit 1
"$work/prog" >/dev/null
metrics=$(python3 -c "from profilers.ncu.argv import targeted_metrics; print(','.join(targeted_metrics()))")
common=(--clock-control none --target-processes all --kernel-name-base function -f)

run() {  # label, ncu options... : median wall of $reps runs and the passes ncu reports
  local label=$1; shift
  local times=""
  for _ in $(seq "$reps"); do
    local t0 t1
    t0=$(date +%s.%N)
    ncu "${common[@]}" -o "$work/r" "$@" "$work/prog" > "$work/log.txt" 2>&1 || { echo "| $label | FAILED |"; tail -3 "$work/log.txt" >&2; return; }
    t1=$(date +%s.%N)
    times="$times $(python3 -c "print($t1-$t0)")"
  done
  python3 - "$label" "$times" "$work/log.txt" <<'PY'
import re, statistics, sys
label, times, log = sys.argv[1], [float(t) for t in sys.argv[2].split()], open(sys.argv[3]).read()
passes = [int(p) for p in re.findall(r"(\d+) pass", log)]
print(f"| {label} | {statistics.median(times):.2f} | {min(times):.2f} | "
      f"{statistics.median(passes) if passes else '?'} | {len(passes)} |")
PY
}

{
  echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(ncu --version | tail -1)"
  echo
  echo "program: $src, $reps runs each"
  echo
  echo "| ncu command | median s | min s | passes per kernel (median) | kernels |"
  echo "|---|---|---|---|---|"
  t0=$(date +%s.%N); "$work/prog" > /dev/null; t1=$(date +%s.%N)
  echo "| program alone | $(python3 -c "print(f'{$t1-$t0:.2f}')") | | | |"
  run "--set basic" --set basic
  run "perfagent's targeted run (3 sections + metrics)" --section SpeedOfLight --section LaunchStats --section Occupancy --metrics "$metrics"
  if [ -z "${LIGHT:-}" ]; then
  run "targeted, --apply-rules no" --section SpeedOfLight --section LaunchStats --section Occupancy --metrics "$metrics" --apply-rules no
  run "metrics only (no sections)" --metrics "$metrics"
  run "metrics only, --apply-rules no" --metrics "$metrics" --apply-rules no
  run "--set full" --set full
  echo
  echo '```'
  python3 -m cProfile -o "$work/prof.out" -m perfagent diagnose --no-save --format json -o "$work/d.json" --force -- "$work/prog" 2> "$work/diag.err"
  python3 - "$work/prof.out" <<'PY'
import pstats, sys
s = pstats.Stats(sys.argv[1])
s.sort_stats("cumulative").print_stats(25)
PY
  echo '```'
  fi
  echo
  export PERFAGENT_CACHE_DIR="$work/cache"
  for _ in $(seq "$reps"); do
    t0=$(date +%s.%N)
    python3 -m perfagent diagnose --no-save --format json -o "$work/d3.json" --force -- "$work/prog" 2>"$work/d3.err"
    t1=$(date +%s.%N)
    echo "perfagent diagnose -- prog: $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
  done
  grep -h "tensor-pipe" "$work/d3.err" "$work/d3.json" | head -2
  for label in cold warm warm; do
    t0=$(date +%s.%N)
    python3 -m perfagent diagnose "$src" --no-save --format json -o "$work/d2.json" --force 2>/dev/null
    t1=$(date +%s.%N)
    echo "perfagent diagnose $src ($label build cache): $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
  done
  t0=$(date +%s.%N)
  python3 -m perfagent diagnose --no-save --format json -o "$work/d3.json" --force -- "$work/prog" 2>/dev/null
  t1=$(date +%s.%N)
  echo "perfagent diagnose -- prog: $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
  t0=$(date +%s.%N); python3 -c "import perfagent.cli" ; t1=$(date +%s.%N)
  echo "python3 -c 'import perfagent.cli': $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
} 2>&1 | tee "$OUT/passes.md" | grep -v "^\s*$" | head -120
rm -rf "$work"
