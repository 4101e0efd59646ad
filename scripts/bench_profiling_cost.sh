#!/usr/bin/env bash
# Profiling-cost benchmark (issue 27, BENCHMARKS.md): wall time of `perfagent diagnose` (staged profiling:
# durations first, then tier A on the kernels making 90 % of GPU time, tier B where tier A calls for it)
# against `ncu --set basic` and `--set full` on the same programs, on an H100/H200, plus the classification
# of each kernel before (one targeted run over every launch, `--single-run`) and after staging, the replay
# passes of each stage, stage 1 by ncu (one metric) vs by an nsys CUDA trace, and the CLI's import time.
#
#   OUT=/tmp/out bash scripts/bench_profiling_cost.sh            # all four workloads
#   OUT=/tmp/out WORKLOADS="suite torch" REPS=3 REPS_FULL=1 bash scripts/bench_profiling_cost.sh
#
# Workloads: suite = examples/cuda/suite (20 kernels, one launch each); longtail = examples/cuda/longtail
# (63 kernels, 3 dominant, 60 tail kernels x 2 launches); torch = examples/torch/transformer_block.py (bf16
# pre-norm block, 2 forwards); unseen = examples/cuda/longtail_unseen (51 kernels, 2 rounds, never used to
# tune the staging rules; REPS_UNSEEN runs, default 1, and FULL_UNSEEN runs of --set full, default 0).
# nsys (stage 1's alternative) on suite and torch. The "before" classification is one targeted run
# (`--single-run`) over every launch of the kernels the staged run profiled in depth. Targets: staged diagnose <= 1.25x basic on suite and torch, <= 1.0x on longtail.
# Writes $OUT/profcost/{summary.md,import_time.md,<workload>.md,<workload>/...}. Expected GPU time on an
# H100: 7-8 minutes with the defaults (`--set full` is the slow part: ~45 s on the suite per run); split
# it with WORKLOADS="suite torch" / WORKLOADS="longtail unseen" if a call is limited to fewer minutes.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}/profcost
REPS=${REPS:-3}
REPS_FULL=${REPS_FULL:-1}
REPS_UNSEEN=${REPS_UNSEEN:-1}
FULL_UNSEEN=${FULL_UNSEEN:-0}
WORKLOADS=${WORKLOADS:-"suite longtail torch unseen"}
LIMIT=${LIMIT:-300}
mkdir -p "$OUT"
work=$(mktemp -d)
export PERFAGENT_CACHE_DIR="$work/cache"
STAGE1=$(python3 -c "from profilers.ncu.tiers import STAGE1_METRICS; print(','.join(STAGE1_METRICS))")

build() {  # name, source: prints the binary path (bin/<name>: $work/<name> is the workload's data folder)
  mkdir -p "$work/bin" && nvcc -arch=sm_90 -O3 -lineinfo -o "$work/bin/$1" "$2" >&2 && echo "$work/bin/$1"
}

timed() {  # dir, label, command...: appends "label<TAB>seconds" to dir/times.tsv
  local dir=$1 label=$2; shift 2
  local t0 t1
  t0=$(date +%s.%N)
  if ! timeout "$LIMIT" "$@" >"$dir/last.out" 2>"$dir/last.err"; then
    echo "FAILED: $label: $(tail -3 "$dir/last.err" | tr '\n' ' ')" | tee -a "$dir/failures.txt" >&2
    return 1
  fi
  t1=$(date +%s.%N)
  printf '%s\t%s\n' "$label" "$(python3 -c "print(f'{$t1-$t0:.3f}')")" >>"$dir/times.tsv"
}

bench() {  # name, repeats, repeats of --set full, command...
  local name=$1 reps=$2 reps_full=$3; shift 3
  local dir="$work/$name"
  mkdir -p "$dir"
  "$@" >/dev/null 2>&1  # warm the driver, JIT and torch caches once
  timed "$dir" "program alone" "$@"
  for i in $(seq "$reps"); do
    timed "$dir" "ncu --set basic" ncu --clock-control none --set basic -f -o "$dir/basic" "$@"
    timed "$dir" "perfagent diagnose (staged)" python3 -m perfagent diagnose --run-dir "$dir/staged_$i" \
      --format json -o "$dir/staged_$i.json" --force -- "$@"
  done
  for _ in $(seq "$reps_full"); do
    timed "$dir" "ncu --set full" ncu --clock-control none --set full -f -o "$dir/full" "$@"
  done
  # before staging: one targeted run over every launch of the kernels the staged run profiled in depth
  local depth
  depth=$(python3 -c "import json, sys; from perfagent.staging.select import names_regex
k = json.load(open(sys.argv[1]))['kernels']
print(names_regex(x['profile']['base_name'] for x in k if 'A' in (x['profile'].get('tiers') or [])))" "$dir/staged_1.json")
  timed "$dir" "perfagent diagnose --single-run --kernel <in-depth kernels> (before staging)" python3 -m perfagent \
    diagnose --single-run --kernel "$depth" --no-save --format json -o "$dir/single.json" --force -- "$@"
  timed "$dir" "stage 1 alone: ncu durations + launch attributes (CSV)" ncu --clock-control none \
    --target-processes all --metrics "$STAGE1" --apply-rules no --csv --page raw --print-units base \
    --log-file "$dir/stage1.csv" "$@"
  if [ "$name" = suite ] || [ "$name" = torch ] && command -v nsys >/dev/null; then
    timed "$dir" "stage 1 alternative: nsys CUDA trace + kernel summary" bash -c \
      'nsys profile --trace=cuda --sample=none --cpuctxsw=none -f true -o "$0/trace" "${@:1}" >/dev/null &&
       nsys stats --report cuda_gpu_kern_sum --format csv -o "$0/kern" "$0/trace.nsys-rep" >/dev/null' "$dir" "$@"
  fi
  python3 scripts/profcost_report.py "$dir" "$name ($*)" >"$OUT/$name.md" 2>"$OUT/$name.err"
  mkdir -p "$OUT/$name"
  cp "$dir"/times.tsv "$dir"/staged_1.json "$dir"/single.json "$dir"/stage1.csv "$OUT/$name/" 2>/dev/null
  cp "$dir"/staged_1/perfagent-ncu-* "$OUT/$name/" 2>/dev/null
  [ -f "$dir/failures.txt" ] && cp "$dir/failures.txt" "$OUT/$name/"
}

import_time() {
  {
    echo "### CLI import time ($(python3 --version), $(nproc) CPUs)"
    echo
    echo "| command | median wall s of 5 | -X importtime cumulative of the top module, s |"
    echo "|---|---|---|"
    for code in "pass" "import perfagent" "import perfagent.api" "-m perfagent diagnose --help"; do
      local args
      if [[ $code == -m* ]]; then read -ra args <<<"$code"; else args=(-c "$code"); fi
      local walls=""
      for _ in 1 2 3 4 5; do
        t0=$(date +%s.%N); python3 "${args[@]}" >/dev/null 2>&1; t1=$(date +%s.%N)
        walls="$walls $(python3 -c "print($t1-$t0)")"
      done
      cum=$(python3 -X importtime "${args[@]}" 2>&1 >/dev/null | awk -F'|' '/^import time: +[0-9]/ && $3 ~ /^ [a-z_]/ {s+=$2} END {printf "%.3f", s/1e6}')
      echo "| python3 $code | $(python3 -c "import statistics; print(f'{statistics.median([float(x) for x in \"$walls\".split()]):.3f}')") | $cum |"
    done
  } >"$OUT/import_time.md"
}

{
  echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(ncu --version | tail -1)"
  echo "REPS=$REPS REPS_FULL=$REPS_FULL; $(date -u +%FT%TZ)"
} >"$OUT/summary.md"
import_time
for w in $WORKLOADS; do
  case $w in
    suite) prog=$(build suite examples/cuda/suite/main.cu) && bench suite "$REPS" "$REPS_FULL" "$prog" ;;
    longtail) prog=$(build longtail examples/cuda/longtail/main.cu) && bench longtail "$REPS" "$REPS_FULL" "$prog" ;;
    unseen) prog=$(build longtail_unseen examples/cuda/longtail_unseen/main.cu) &&
      bench unseen "$REPS_UNSEEN" "$FULL_UNSEEN" "$prog" ;;
    torch) bench torch "$REPS" "$REPS_FULL" python3 examples/torch/transformer_block.py ;;
  esac
  [ -f "$OUT/$w.md" ] && { echo; cat "$OUT/$w.md"; } >>"$OUT/summary.md"
done
cat "$OUT/import_time.md" >>"$OUT/summary.md"
cat "$OUT/summary.md"
rm -rf "$work"
