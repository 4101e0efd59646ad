#!/usr/bin/env bash
# scripts/gpu_llm_evaluate.sh MODE=evaluate spread over several GPUs: the committed relay cassettes
# (tests/data/llm_relay/*) are dealt round-robin to LANES lanes (KernelBench first, their builds are the
# long ones), each lane evaluates its share on its own GPU, and one table is written from all of them.
#
#   OUT=/tmp/out LANES=3 bash scripts/gpu_llm_lanes.sh     # GPUs 0..LANES-1
#
# Writes $OUT/llm/table.md and table.json (scripts/llm_table.py) and $OUT/llm/evaluate.log.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}; LANES=${LANES:-3}; CASSETTES=${CASSETTES:-tests/data/llm_relay}
mkdir -p "$OUT/llm/runs"
i=0
for folder in $(ls -d "$CASSETTES"/kb_*/ 2>/dev/null) $(ls -d "$CASSETTES"/*/ | grep -v '/kb_'); do
  lane=$(( i % LANES )); i=$(( i + 1 ))
  mkdir -p "/tmp/llm_lane$lane"
  ln -sfn "$PWD/$folder" "/tmp/llm_lane$lane/$(basename "$folder")"
done
pids=()
for lane in $(seq 0 $(( LANES - 1 ))); do
  [ -d "/tmp/llm_lane$lane" ] || continue
  CUDA_VISIBLE_DEVICES=$lane OUT="$OUT/lane$lane" CASSETTES="/tmp/llm_lane$lane" MODE=evaluate \
    bash scripts/gpu_llm_evaluate.sh > "$OUT/lane$lane.log" 2>&1 &
  pids+=($!)
done
wait "${pids[@]}"
for lane in $(seq 0 $(( LANES - 1 ))); do
  cp -r "$OUT/lane$lane/llm/runs/." "$OUT/llm/runs/" 2>/dev/null
  cat "$OUT/lane$lane/llm/evaluate.log" >> "$OUT/llm/evaluate.log" 2>/dev/null
done
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
python3 scripts/llm_table.py "$OUT/llm/runs" "$CASSETTES" "$OUT/llm" "${GPU:-unknown GPU}" > /dev/null
cat "$OUT/llm/table.md"
(cd "$OUT" && tar czf llm_runs.tgz llm/runs lane*.log && rm -rf llm/runs lane*)
