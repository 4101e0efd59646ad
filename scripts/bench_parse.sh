#!/usr/bin/env bash
# Parse + diagnose benchmark on a CPU: wall time of `perfagent diagnose REPORT --format json`.
# Usage: scripts/bench_parse.sh REPORT.ncu-rep [repeats]
set -euo pipefail
report=$1; reps=${2:-5}
ls -la "$report"
for _ in $(seq "$reps"); do
  /usr/bin/time -f "%e s wall, %M KB max RSS" python3 -m perfagent diagnose "$report" --format json -o /dev/null 2>&1 | tail -1
done
