# Sourced by scripts/bench_profiling_cost.sh: check its inputs before any GPU time is spent, and estimate
# the GPU wall time of the chosen workloads. Uses the caller's settings (WORKLOADS, REPS..., DRY_RUN,
# DRY_BUILD, STRICT, FULL, NSYS, STAGE1_ALONE) and its source_of / reps_of / listed functions.

# Seconds per command on an H100/H200 (tests/gpu/h200x4_2026-11-26d/profcost/, BENCHMARKS.md; staged
# diagnose after the tier-B fold and longtail's figures are estimates): alone basic staged single full nsys
# stage1 build, one line per workload.
_PROFCOST_SECONDS="suite 0.5 9.3 8 5 47 3 2 5
torch 6.4 23.3 25 18.2 63 10 8.1 0
longtail 0.5 70 20 15 250 0 5 5
unseen 0.5 62.1 18.6 15 250 0 4.7 5"

_need() {  # what, exit code, message: collects a failure of the check
  echo "preflight: $1 — $3" >&2
  [ "$_preflight_rc" -ge "$2" ] 2>/dev/null || _preflight_rc=$2
}

_gpu_tool() {  # name, present (0/1), what for
  [ "$2" = 1 ] && return 0
  if [ "$DRY_RUN" = 1 ] && [ "$STRICT" != 1 ]; then
    echo "preflight: $1 missing here (needed on the GPU host: $3)" >&2
  else
    _need "$1 missing" 3 "needed for $3; run on the GPU host (scripts/gpu_env.sh sets the path up)"
  fi
}

preflight() {  # exit status: 0 ok, 2 a missing input or bad setting, 3 a missing GPU tool
  _preflight_rc=0
  local v w cuda=0
  for v in REPS REPS_LONGTAIL REPS_UNSEEN REPS_FULL LIMIT; do
    [[ ${!v} =~ ^[0-9]+$ ]] || _need "$v=${!v}" 2 "give a whole number"
  done
  for v in REPS REPS_LONGTAIL REPS_UNSEEN; do
    [ "${!v}" = 0 ] && _need "$v=0" 2 "at least one staged run is needed (its record names the in-depth kernels)"
  done
  for w in $WORKLOADS; do
    if ! source_of "$w" >/dev/null; then
      _need "workload '$w'" 2 "not one of: suite longtail torch unseen"
      continue
    fi
    [ -f "$(source_of "$w")" ] || _need "$(source_of "$w")" 2 "the workload's source is missing"
    [ "$w" = torch ] || cuda=1
  done
  [ -f scripts/profcost_report.py ] && python3 -m py_compile scripts/profcost_report.py ||
    _need scripts/profcost_report.py 2 "missing or not valid Python"
  python3 -c "import perfagent.cli, perfagent.staging.select, perfagent.staging.plan, profilers.ncu.tiers" 2>/dev/null ||
    _need "perfagent's modules" 2 "not importable with PYTHONPATH=$PYTHONPATH (run from the repository)"
  python3 -m perfagent diagnose --help >/dev/null 2>&1 || _need "python3 -m perfagent diagnose" 2 "the CLI does not start"
  _gpu_tool ncu "$(command -v ncu >/dev/null && echo 1)" "every measurement"
  _gpu_tool nvidia-smi "$(command -v nvidia-smi >/dev/null && echo 1)" "the GPU's name in the summary"
  if [ "$cuda" = 1 ]; then
    if [ "$DRY_RUN" = 1 ] && [ "$DRY_BUILD" = 1 ]; then
      command -v nvcc >/dev/null || _need nvcc 3 "DRY_BUILD=1 builds the CUDA workloads (DRY_BUILD=0 skips that)"
    else
      _gpu_tool nvcc "$(command -v nvcc >/dev/null && echo 1)" "building the CUDA workloads"
    fi
  fi
  if listed torch "$WORKLOADS"; then
    _gpu_tool torch "$(python3 -c 'import torch' 2>/dev/null && echo 1)" "the transformer-block workload"
  fi
  for w in $NSYS; do
    if listed "$w" "$WORKLOADS" && ! command -v nsys >/dev/null; then
      echo "preflight: nsys missing: stage 1's nsys alternative is skipped on $w" >&2
    fi
  done
  [ "$_preflight_rc" = 0 ] && echo "preflight: ok (workloads: $WORKLOADS)" >&2
  return "$_preflight_rc"
}

estimate() {  # prints the estimated GPU wall time of the chosen workloads
  local w total=0 line
  for w in $WORKLOADS; do
    line=$(grep "^$w " <<<"$_PROFCOST_SECONDS") || continue
    total=$(python3 - "$line" "$(reps_of "$w")" "$REPS_FULL" "$(listed "$w" "$FULL" && echo 1)" \
      "$(listed "$w" "$NSYS" && echo 1)" "$(listed "$w" "$STAGE1_ALONE" && echo 1)" "$total" <<'EOF'
import sys
name, alone, basic, staged, single, full, nsys, stage1, build = sys.argv[1].split()
reps, reps_full = int(sys.argv[2]), int(sys.argv[3])
want_full, want_nsys, want_stage1, total = sys.argv[4] == "1", sys.argv[5] == "1", sys.argv[6] == "1", float(sys.argv[7])
s = float(build) + 2 * float(alone) + reps * (float(basic) + float(staged)) + float(single)
s += (reps_full * float(full) if want_full else 0) + (float(nsys) if want_nsys else 0) + (float(stage1) if want_stage1 else 0)
print(f"estimate: {name} ~{s:.0f} s (basic and staged x{reps})", file=sys.stderr)
print(f"{total + s:.0f}")
EOF
    )
  done
  echo "estimate: ~$((total + 6)) s of GPU wall time in all (import times included; a device call allows 300 s)" >&2
}
