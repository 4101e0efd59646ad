#!/usr/bin/env bash
# Issue 26's loaded runs on a lent GPU host's CPUs: the README test command in SLOTS copies of the repo at
# once, each pinned to its own 2 cores (taskset) with LOAD `yes` spinners pinned to the same 2 cores, the
# GPU hidden (CUDA_VISIBLE_DEVICES=) as on the 2-core CI machine. One run takes longer than one device
# call (10 min), so the slots start in a new session (setsid: they outlive the call while the machine is
# held) and a later call collects them:
#
#   PHASE=start SLOTS=10 bash scripts/gpu_stress_slots.sh      # returns at once
#   PHASE=collect WAIT=540 OUT=$OUT bash scripts/gpu_stress_slots.sh   # waits up to WAIT s, then writes
#                                                                       # $OUT/stress_slots.md (repeat)
# Needs SLOTS * 2 cores (a 1-GPU host has 16: 8 slots; a 4-GPU host 64). Not yet run (2026-11-27).
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=${STRESS_ROOT:-/tmp/stress}
PHASE=${PHASE:-start}
if [ "$PHASE" = start ]; then
  # shellcheck disable=SC1091
  source scripts/gpu_env.sh || exit 1
  SLOTS=${SLOTS:-8}; LOAD=${LOAD:-2}
  mkdir -p "$ROOT"
  for i in $(seq 0 $((SLOTS - 1))); do
    d="$ROOT/slot$i"; rm -rf "$d"; mkdir -p "$d"
    cp -r "$PWD/." "$d/repo"
    cores="$((2 * i)),$((2 * i + 1))"
    setsid bash -c "
      for _ in \$(seq $LOAD); do taskset -c $cores yes > /dev/null & done
      cd '$d/repo' && start=\$(date +%s)
      CUDA_VISIBLE_DEVICES= PYTHONPATH='$PYTHONPATH' timeout 5400 taskset -c $cores python3 -m pytest -q > '$d/log' 2>&1
      echo \$? > '$d/rc'; echo \$(( \$(date +%s) - start )) > '$d/wall'
      kill \$(jobs -p) 2>/dev/null
    " > /dev/null 2>&1 < /dev/null &
  done
  echo "started $SLOTS slots under $ROOT (cores 0-$((2 * SLOTS - 1)), $LOAD spinners each)"
  exit 0
fi
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
deadline=$(( $(date +%s) + ${WAIT:-540} ))
while [ "$(date +%s)" -lt "$deadline" ]; do
  pending=0
  for d in "$ROOT"/slot*; do [ -f "$d/rc" ] || pending=$((pending + 1)); done
  [ "$pending" = 0 ] && break
  sleep 15
done
{
  echo "| slot | cores | exit | wall s | summary | failed |"
  echo "|---|---|---:|---:|---|---|"
  for d in "$ROOT"/slot*; do
    i=${d##*slot}
    summary=$(grep -E "passed|failed" "$d/log" 2>/dev/null | tail -1 | tr '|' '/')
    failed=$(grep -E "^(FAILED|ERROR)" "$d/log" 2>/dev/null | awk '{print $2}' | tr '\n' ' ')
    echo "| $i | $((2 * i)),$((2 * i + 1)) | $(cat "$d/rc" 2>/dev/null || echo running) | $(cat "$d/wall" 2>/dev/null || echo -) | ${summary:--} | ${failed:--} |"
  done
} | tee "$OUT/stress_slots.md"
