#!/usr/bin/env bash
# The README's test command under CPU load (issue 26: "passes 10 runs out of 10 under stress-like load on
# 2 cores"). Runs `python3 -m pytest -q` RUNS times in a row while LOAD busy-loop processes (default: one
# per core, as `stress --cpu N` does) compete for the CPU, and appends one row per run to OUT (markdown):
# run, exit status, wall time, the pytest summary line and the failed test ids; each run's whole log is kept
# in ${OUT%.md}_logs/.
#
#   RUNS=10 LOAD=2 OUT=tests/data/stress_runs.md bash scripts/stress_tests.sh
#
# The load is `yes > /dev/null` per worker (a pure CPU spinner with no memory or I/O), killed on exit.
# RUN_TIMEOUT (s, default 5400) bounds one pytest run.
set -u
cd "$(dirname "$0")/.." || exit 1
RUNS=${RUNS:-10}
LOAD=${LOAD:-$(nproc)}
OUT=${OUT:-tests/data/stress_runs.md}
RUN_TIMEOUT=${RUN_TIMEOUT:-5400}
spinners=()
cleanup() { [ ${#spinners[@]} -gt 0 ] && kill "${spinners[@]}" 2>/dev/null; }
# INT/TERM must end the script: a trap that only cleans up lets the loop go on to the next run (2026-11-27: a
# TERM stopped one run's spinners, and the loop started the next run without load).
trap cleanup EXIT
trap 'cleanup; exit 143' INT TERM
for _ in $(seq "$LOAD"); do
  yes > /dev/null &
  spinners+=($!)
done
if [ ! -s "$OUT" ]; then
  {
    echo "| date (UTC) | commit | cores | load | run | exit | wall s | summary | failed |"
    echo "|---|---|---:|---:|---:|---:|---:|---|---|"
  } > "$OUT"
fi
commit=$(git rev-parse --short HEAD 2>/dev/null || echo "?")
# Each run's log is kept beside OUT, not in /tmp: a mktemp file there was deleted mid-run by another
# process cleaning /tmp (2026-11-27), which lost the run's summary line.
LOGS=${OUT%.md}_logs
mkdir -p "$LOGS"
for run in $(seq "$RUNS"); do
  log="$LOGS/$(date -u +%Y%m%dT%H%M%S)_run${run}.log"
  start=$(date +%s)
  timeout -k 30 "$RUN_TIMEOUT" python3 -m pytest -q > "$log" 2>&1
  rc=$?
  wall=$(( $(date +%s) - start ))
  summary=$(grep -E "^(=+ )?[0-9]+ (passed|failed)|passed|failed" "$log" | tail -1 | sed 's/=//g; s/|/\//g; s/^ *//; s/ *$//')
  failed=$(grep -E "^FAILED|^ERROR" "$log" | awk '{print $2}' | sort -u | tr '\n' ' ')
  echo "| $(date -u +%Y-%m-%dT%H:%MZ) | $commit | $(nproc) | $LOAD x yes | $run | $rc | $wall | $summary | ${failed:--} |" >> "$OUT"
  echo "run $run: exit $rc after $wall s: $summary"
done
