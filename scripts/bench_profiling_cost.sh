#!/usr/bin/env bash
# Profiling-cost benchmark (issue 27, BENCHMARKS.md): wall time of `perfagent diagnose` (staged profiling:
# durations first, then tier A on the kernels making 90 % of GPU time, tier B where tier A calls for it, in
# tier A's run when that is cheaper than one more program start) against `ncu --set basic` (and, on request,
# `--set full`) on the same programs, on an H100/H200, plus the classification of each kernel before (one
# targeted run over every launch, `--single-run`) and after staging, the stage plan and replay passes of
# each stage, and the CLI's import time.
#
#   OUT=/tmp/out WORKLOADS="suite torch" bash scripts/bench_profiling_cost.sh        # ~4 min on an H100
#   OUT=/tmp/out WORKLOADS="longtail unseen" bash scripts/bench_profiling_cost.sh    # ~4 min on an H100
#   DRY_RUN=1 WORKLOADS="suite longtail torch unseen" bash scripts/bench_profiling_cost.sh   # CPU: check only
#
# Workloads: suite = examples/cuda/suite (20 kernels, one launch each); longtail = examples/cuda/longtail
# (63 kernels, 3 dominant, 60 tail kernels x 2 launches); torch = examples/torch/transformer_block.py (bf16
# pre-norm block, 2 forwards); unseen = examples/cuda/longtail_unseen (51 kernels, 2 rounds, never used to
# tune the staging rules). Targets: staged diagnose <= 1.25x basic on suite and torch, <= 1.0x on longtail.
#
# Settings (environment):
#   REPS=3            runs of basic and of staged diagnose on suite and torch (median of REPS)
#   REPS_LONGTAIL=1   the same on longtail (one basic run there is ~60 s)
#   REPS_UNSEEN=1     the same on unseen
#   FULL=""           workloads that also get REPS_FULL runs of `--set full` (suite ~47 s, torch ~63 s
#                     each: with them a split no longer fits 5 minutes; BENCHMARKS.md has both figures)
#   REPS_FULL=1
#   NSYS="suite"      workloads that also time stage 1's alternative, an nsys CUDA trace (when nsys exists)
#   STAGE1_ALONE=""   workloads that also time stage 1 alone (the staged record's notes give its time)
#   LIMIT=300         seconds per command
#   DRY_RUN=1         run nothing on the GPU: print every command, build the CUDA programs (nvcc runs on a
#                     CPU host; DRY_BUILD=0 skips that), check every path, binary and import; the GPU-host
#                     tools (ncu, nvidia-smi, torch, nsys) are reported, and fail the check with STRICT=1
# Writes $OUT/profcost/{summary.md,import_time.md,<workload>.md,<workload>/...}; prints the estimated GPU
# wall time of the chosen workloads first (from the last measured figures). Exit 0 ok, 1 a command failed
# (FAILED lines, $OUT/profcost/<workload>/failures.txt), 2 a missing input
# (a source, a script, a Python module), 3 a missing GPU tool (ncu, nvidia-smi, nvcc, torch).
set -u
cd "$(dirname "$0")/.." || exit 2
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 2
OUT=${OUT:-/tmp/out}/profcost
REPS=${REPS:-3}
REPS_LONGTAIL=${REPS_LONGTAIL:-1}
REPS_UNSEEN=${REPS_UNSEEN:-1}
REPS_FULL=${REPS_FULL:-1}
FULL=${FULL:-}
NSYS=${NSYS:-suite}
STAGE1_ALONE=${STAGE1_ALONE:-}
WORKLOADS=${WORKLOADS:-"suite torch longtail unseen"}
LIMIT=${LIMIT:-300}
DRY_RUN=${DRY_RUN:-0}
DRY_BUILD=${DRY_BUILD:-1}
STRICT=${STRICT:-0}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PERFAGENT_CACHE_DIR="$work/cache"

source_of() {  # workload: its source file
  case $1 in
    suite) echo examples/cuda/suite/main.cu ;;
    longtail) echo examples/cuda/longtail/main.cu ;;
    unseen) echo examples/cuda/longtail_unseen/main.cu ;;
    torch) echo examples/torch/transformer_block.py ;;
    *) return 1 ;;
  esac
}

reps_of() {  # workload: runs of basic and of staged diagnose
  case $1 in longtail) echo "$REPS_LONGTAIL" ;; unseen) echo "$REPS_UNSEEN" ;; *) echo "$REPS" ;; esac
}

listed() { [[ " $2 " == *" $1 "* ]]; }  # word, list

# shellcheck source=scripts/profcost_preflight.sh
source scripts/profcost_preflight.sh || exit 2
preflight || exit $?
estimate
[ "$DRY_RUN" = 1 ] || mkdir -p "$OUT"

build() {  # name, source: prints the binary path (bin/<name>: $work/<name> is the workload's data folder)
  mkdir -p "$work/bin"
  if [ "$DRY_RUN" = 1 ] && [ "$DRY_BUILD" = 0 ]; then
    echo "would build: nvcc -arch=sm_90 -O3 -lineinfo -o $work/bin/$1 $2" >&2
  else
    timeout "$LIMIT" nvcc -arch=sm_90 -O3 -lineinfo -o "$work/bin/$1" "$2" >&2 || return 1
  fi
  echo "$work/bin/$1"
}

timed() {  # dir, label, command...: appends "label<TAB>seconds" to dir/times.tsv
  local dir=$1 label=$2; shift 2
  if [ "$DRY_RUN" = 1 ]; then
    echo "would run: [$label] $(printf '%q ' "$@")"
    return 0
  fi
  local t0 t1
  t0=$(date +%s.%N)
  if ! timeout "$LIMIT" "$@" >"$dir/last.out" 2>"$dir/last.err"; then
    echo "FAILED: $label: $(tail -3 "$dir/last.err" | tr '\n' ' ')" | tee -a "$dir/failures.txt" >&2
    return 1
  fi
  t1=$(date +%s.%N)
  printf '%s\t%s\n' "$label" "$(python3 -c "print(f'{$t1-$t0:.3f}')")" >>"$dir/times.tsv"
}

in_depth_regex() {  # staged record: the regex of the kernels it profiled in depth (empty when unreadable)
  [ "$DRY_RUN" = 1 ] && { echo "<the in-depth kernels of staged_1.json>"; return 0; }
  python3 -c "import json, sys; from perfagent.staging.select import names_regex
k = json.load(open(sys.argv[1]))['kernels']
print(names_regex(x['profile']['base_name'] for x in k if 'A' in (x['profile'].get('tiers') or [])))" "$1" 2>/dev/null
}

bench() {  # name, command...
  local name=$1; shift
  local dir="$work/$name" reps
  reps=$(reps_of "$name")
  mkdir -p "$dir"
  timed "$dir" "warm-up (driver, JIT and torch caches; not reported)" "$@"
  : >"$dir/times.tsv"  # the warm-up's row is not a measurement
  timed "$dir" "program alone" "$@"
  for i in $(seq "$reps"); do
    timed "$dir" "ncu --set basic" ncu --clock-control none --set basic -f -o "$dir/basic" "$@"
    timed "$dir" "perfagent diagnose (staged)" python3 -m perfagent diagnose --run-dir "$dir/staged_$i" \
      --format json -o "$dir/staged_$i.json" --force -- "$@"
  done
  if listed "$name" "$FULL"; then
    for _ in $(seq "$REPS_FULL"); do
      timed "$dir" "ncu --set full" ncu --clock-control none --set full -f -o "$dir/full" "$@"
    done
  fi
  # before staging: one targeted run over every launch of the kernels the staged run profiled in depth
  local depth
  depth=$(in_depth_regex "$dir/staged_1.json")
  if [ -n "$depth" ]; then
    timed "$dir" "perfagent diagnose --single-run --kernel <in-depth kernels> (before staging)" python3 -m \
      perfagent diagnose --single-run --kernel "$depth" --no-save --format json -o "$dir/single.json" --force -- "$@"
  else
    echo "FAILED: no staged record to take the in-depth kernels from: before/after not compared" |
      tee -a "$dir/failures.txt" >&2
  fi
  if listed "$name" "$STAGE1_ALONE"; then
    timed "$dir" "stage 1 alone: ncu durations + launch attributes (CSV)" ncu --clock-control none \
      --target-processes all --metrics "$STAGE1" --apply-rules no --csv --page raw --print-units base \
      --log-file "$dir/stage1.csv" "$@"
  fi
  if listed "$name" "$NSYS" && command -v nsys >/dev/null; then
    timed "$dir" "stage 1 alternative: nsys CUDA trace + kernel summary" bash -c \
      'nsys profile --trace=cuda --sample=none --cpuctxsw=none -f true -o "$0/trace" "${@:1}" >/dev/null &&
       nsys stats --report cuda_gpu_kern_sum --format csv -o "$0/kern" "$0/trace.nsys-rep" >/dev/null' "$dir" "$@"
  fi
  [ "$DRY_RUN" = 1 ] && return 0
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

STAGE1=$(python3 -c "from profilers.ncu.tiers import STAGE1_METRICS; print(','.join(STAGE1_METRICS))") || exit 2
if [ "$DRY_RUN" != 1 ]; then
  {
    echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(ncu --version | tail -1)"
    echo "REPS=$REPS REPS_LONGTAIL=$REPS_LONGTAIL REPS_UNSEEN=$REPS_UNSEEN FULL='$FULL' x$REPS_FULL; $(date -u +%FT%TZ)"
  } >"$OUT/summary.md"
  import_time
fi
status=0
for w in $WORKLOADS; do
  src=$(source_of "$w")
  case $w in
    torch) bench torch python3 "$src" ;;
    *) if prog=$(build "$w" "$src"); then bench "$w" "$prog"; else echo "FAILED: nvcc $src" >&2; status=1; fi ;;
  esac
  [ "$DRY_RUN" != 1 ] && [ -f "$OUT/$w.md" ] && { echo; cat "$OUT/$w.md"; } >>"$OUT/summary.md"
done
if [ "$DRY_RUN" != 1 ]; then
  ls "$work"/*/failures.txt >/dev/null 2>&1 && status=1  # a command failed: its row is missing
  cat "$OUT/import_time.md" >>"$OUT/summary.md"
  cat "$OUT/summary.md"
fi
exit $status
