#!/usr/bin/env bash
# Record one Nsight Compute report of each launch-spec kernel of a set (the slow.cu of every entry), for
# `perfagent optimize --propose-only --report` on a machine without a GPU (the llm path's two-machine flow).
# On a GPU machine:
#
#   OUT=/tmp/out SET=benchmarks/unseen2 bash scripts/gpu_record_reports.sh
#
# Writes $OUT/reports/<entry>.ncu-rep and $OUT/reports/index.txt (entry, exit status, seconds), then
# $OUT/reports.tgz. Knobs (env): SET (folder of entry folders), ONLY (regex on the entry folder name).
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}; SET=${SET:-benchmarks/unseen2}; ONLY=${ONLY:-.}
mkdir -p "$OUT/reports"
for dir in "$SET"/*/; do
  name=$(basename "$dir")
  [[ $name =~ $ONLY ]] || continue
  spec=$(ls "$dir"*.launch.toml 2>/dev/null | head -1)
  [ -n "$spec" ] && [ -f "$dir/slow.cu" ] || continue
  start=$(date +%s)
  timeout 120 python3 -m perfagent profile --save-report "$OUT/reports/$name.ncu-rep" --force \
    -- python3 -m perfagent.workloads.run_spec "$spec" --kernel-file "$dir/slow.cu" \
    > "$OUT/reports/$name.log" 2>&1
  echo "$name exit $? $(( $(date +%s) - start )) s" >> "$OUT/reports/index.txt"
done
cat "$OUT/reports/index.txt"
(cd "$OUT" && tar czf reports.tgz reports && rm -rf reports)
