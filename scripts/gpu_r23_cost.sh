#!/usr/bin/env bash
# Issue 23's cost target (<= 60 s per 3-iteration run on an H100, launch-spec kernels), after the r23-cost
# changes of 2026-11-27 (morning): fresh confined GPU workers started ahead (perfagent.sandbox.standby: their
# torch import overlaps ncu and the other stages) and one NVRTC build per worker of each kernel file
# (cuda_launch.compile_kernel). On a GPU machine (H100/H200, ncu 2025.3.1, nvcc 13, torch cu130), ONE GPU:
#
#   OUT=/tmp/out bash scripts/gpu_r23_cost.sh
#
# Runs `SET=benchmarks/unseen2 ONLY='^(01|02|28|05|12)_' ITER=3 JOBS=optimize bash
# scripts/gpu_generalization_bench.sh` (the suite's optimize job, the after-table's settings: 50 timing
# rounds) with its output under $OUT/r23_cost/, then writes $OUT/r23_cost/cost.md: per entry the process and
# record wall seconds, seconds per stage (the record's optimize.cost), iterations, candidates,
# re-profiles (skipped) and fresh workers (started ahead); per iteration its wall time and candidates;
# and the suite's table (best speed-up, share of the textbook fix). 01, 02 and 28 were the three runs over
# 60 s on 4 x H200 at main 57d280a (64.1, 70.5, 84.7 s); 05 and 12 are two typical ones (53, 54 s wall).
# Knobs (env): ONLY (the regex above) AB (0; 1: the same entries again with PERFAGENT_WORKER_STANDBY=0 into
#   $OUT/r23_cost/nostandby/, a second table in cost.md: the difference the workers started ahead make,
#   on the same card; doubles the runtime) SUITE_TIMEOUT (420 per pass) GPU_TESTS (1; 0 skips the GPU tests).
# Expected runtime: about 5 minutes (the GPU tests ~45 s, five runs of 40-70 s, suite start-up); AB=1
# about 9-10.
# What to look for: gpu_test.log: 4 passed (its printed lines: 28's bench 'N interleaved rounds (of 50: the
# 0.5 s timing budget was filled)' with N ~10-12, the copy kernel's 50 rounds; a fresh GPU worker's verification vs one
# started ahead and ready (a few seconds less); the NVRTC build vs the second call); in cost.md: 'record s' <= 60 on every row (on an H100); 'fresh workers (started
# ahead)' equal, e.g. 4 (4): every fresh worker found one started ahead (fewer ahead: it waited for one);
# 'baseline-time' and 'verify' lower than the H200 after-table's (baseline-time ~5 s, verify 22-29 s on
# 01/02/28): about 2.5-3.5 s less per fresh worker; 'profile' ~10 s per re-profile (unchanged: ncu's
# application start); best speed-ups as in BENCHMARKS.md (nothing about the measurements changed).
# r23-cost2 (timing rounds from a 0.5 s budget, at least 10, at most --runs): the 'timing rounds' table
# says 50 for every candidate of 01, 02, 05, 12 and ~10-12 for 28's; 28's 'time' ~6 s and 'baseline-time'
# ~2 s lower than without it (H200 after-table: 13.3 and 7.9 s, less (1)'s start-ups); 28's winner still
# accepted with a noise threshold near 1 %.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
ROOT=${OUT:-/tmp/out}/r23_cost
ONLY=${ONLY:-'^(01|02|28|05|12)_'}
mkdir -p "$ROOT"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$ROOT/gpu.txt" 2>&1

one_pass() {  # $1: folder; runs the suite's optimize job there and unpacks its records into $1/runs
  local where=$1
  mkdir -p "$where"
  OUT=$where SET=benchmarks/unseen2 ONLY=$ONLY ITER=3 JOBS=optimize WORKERS=1 \
    SUITE_TIMEOUT=${SUITE_TIMEOUT:-420} bash scripts/gpu_generalization_bench.sh > "$where/bench.log" 2>&1
  echo "$(basename "$where"): gpu_generalization_bench.sh exit $?" >> "$ROOT/exit_codes.txt"
  mkdir -p "$where/runs"
  tar xzf "$where/gen_runs.tgz" -C "$where/runs" 2>> "$ROOT/errors.txt"
}

tables() {  # $1: folder of one pass; prints its cost tables (scripts/optimize_cost_table.py)
  python3 - "$1" <<'PY'
import json, runpy, shutil, sys
from pathlib import Path
where = Path(sys.argv[1])
gen = where / "runs" / "gen" / "run"
walls = {}
if (gen / "results.jsonl").is_file():
    for line in (gen / "results.jsonl").read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            walls[Path(row["name"]).parent.name] = row.get("elapsed_s")
runs = []
for record in sorted(gen.glob("runs/*/record.json")):
    name = record.parent.name.removesuffix("_slow.cu")
    run = where / "table" / name / "run"  # the layout optimize_cost_table.py reads: RUN/record.json, RUN/../wall_s
    run.mkdir(parents=True, exist_ok=True)
    shutil.copy(record, run / "record.json")
    if walls.get(name) is not None:
        (run.parent / "wall_s").write_text(f"{walls[name]}\n")
    runs.append(run)
script = runpy.run_path("scripts/optimize_cost_table.py")
print(script["table"](runs) if runs else "no record.json came back (see bench.log)")
# r23-cost2: the timing rounds each candidate's timing took (the 0.5 s budget: 50 for a fast kernel, ~11 for
# 28's 22 ms original; '-' not timed, '?' a record from before timing_rounds)
print()
print("| entry | timing rounds per candidate (c1, c2, ...) |")
print("|---|---|")
for run in runs:
    cands = json.loads((run / "record.json").read_text()).get("candidates", [])
    rounds = [c.get("timing_rounds", "?") if c.get("time_s") is not None else "-" for c in cands]
    print(f"| {run.parent.name} | {', '.join(str(r) for r in rounds)} |")
PY
}

# the worker side on this GPU first (~30 s): a GPU worker started ahead is taken and judges as a fresh one,
# and is faster when ready; a kernel file is built once per process
# (r23-cost2) and the timing budget: unseen2/28's original in fewer rounds, a copy kernel in all of them
if [ "${GPU_TESTS:-1}" = 1 ]; then  # GPU_TESTS=0: the cost table only (the tests ran in an earlier call)
  timeout -k 10 300 python3 -m pytest -q -m gpu tests/gpu/test_worker_standby_gpu.py \
    tests/gpu/test_timing_budget_gpu.py -s -p no:cacheprovider > "$ROOT/gpu_test.log" 2>&1
  echo "gpu tests (test_worker_standby_gpu.py, test_timing_budget_gpu.py): exit $?" >> "$ROOT/exit_codes.txt"
fi
one_pass "$ROOT/standby"
if [ "${AB:-0}" = 1 ]; then
  export PERFAGENT_WORKER_STANDBY=0
  one_pass "$ROOT/nostandby"
  unset PERFAGENT_WORKER_STANDBY
fi
{
  echo "GPU: $(head -n1 "$ROOT/gpu.txt"); ONLY=$ONLY ITER=3 JOBS=optimize (50 timing rounds)"
  echo
  echo "## workers started ahead (this branch)"
  echo
  tables "$ROOT/standby"
  echo
  cat "$ROOT/standby/generalization.md" 2>/dev/null
  if [ "${AB:-0}" = 1 ]; then
    echo
    echo "## PERFAGENT_WORKER_STANDBY=0 (every fresh worker starts when it is needed), same card"
    echo
    tables "$ROOT/nostandby"
    echo
    cat "$ROOT/nostandby/generalization.md" 2>/dev/null
  fi
  echo
  echo "Exit codes: $(tr '\n' ' ' < "$ROOT/exit_codes.txt")"
} > "$ROOT/cost.md"
cat "$ROOT/cost.md"
