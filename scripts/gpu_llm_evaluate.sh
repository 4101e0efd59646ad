#!/usr/bin/env bash
# The GPU half of the real-model measurement (issue 24; docs/optimize.md "A real model through the relay").
#
#   OUT=/tmp/out MODE=reports  bash scripts/gpu_llm_evaluate.sh   # 1. reports the prompts are written from (~3 min)
#   ... on the CPU machine: scripts/record_llm_cassettes.py relay --reports $OUT/llm/reports ...
#   OUT=/tmp/out MODE=evaluate bash scripts/gpu_llm_evaluate.sh   # 2. evaluate every proposal (~5 min on one H100)
#   OUT=/tmp/out MODE=tests    bash scripts/gpu_llm_evaluate.sh   # the GPU tests of this flow (~3 min): a first
#       CUDA kernel proposed then evaluated, and torch.compile baselines (tests/gpu/test_first_kernel_phases_gpu.py)
#
# MODE=reports: for every target of scripts/llm_targets.toml (TARGETS) records the ncu report of the original
# (the launch-spec kernels; the KernelBench references too) into $OUT/llm/reports/<name>.ncu-rep.
# MODE=evaluate: copies each recorded proposals run (CASSETTES/<name>/run, default tests/data/llm_relay) to
# $OUT/llm/runs/<name>, runs `perfagent optimize --evaluate` on it (build, verify, time against eager and
# torch.compile, re-profile), and writes $OUT/llm/table.md / table.json with scripts/llm_table.py: per target
# the proposals, how many were correct, the best's speed-up over eager and over torch.compile, and tokens.
# Look for: the correct rate; speed-ups > 1 over eager; over torch.compile for the KernelBench rows; any
# "build-failed" (a proposal that compiled on the CPU machine but not here: report it).
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}
MODE=${MODE:-evaluate}
TARGETS=${TARGETS:-scripts/llm_targets.toml}
CASSETTES=${CASSETTES:-tests/data/llm_relay}
mkdir -p "$OUT/llm"
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
echo "${GPU:-no GPU}" > "$OUT/llm/gpu.txt"

if [ "$MODE" = tests ]; then
  timeout 900 python3 -m pytest -m gpu -q -s tests/gpu/test_first_kernel_phases_gpu.py -p no:cacheprovider \
    > "$OUT/llm/gpu_tests.log" 2>&1
  echo "exit $?" >> "$OUT/llm/gpu_tests.log"
  tail -5 "$OUT/llm/gpu_tests.log"
  exit 0
fi

if [ "$MODE" = reports ]; then
  mkdir -p "$OUT/llm/reports"
  python3 - "$TARGETS" "$OUT/llm/reports" > "$OUT/llm/reports.log" 2>&1 <<'PY'
import shlex, subprocess, sys, tomllib
from pathlib import Path
from perfagent.workloads.detect import resolve
targets = tomllib.loads(Path(sys.argv[1]).read_text())["target"]
out = Path(sys.argv[2])
for t in targets:
    wl = resolve(t["path"])
    command = wl.report_command(str).replace("base.ncu-rep", str(out / f"{t['name']}.ncu-rep"))
    argv = ["python3", "-m", *shlex.split(command)] if command.startswith("perfagent") else shlex.split(command)
    print(t["name"], " ".join(argv), flush=True)
    done = subprocess.run(argv, timeout=240, capture_output=True, text=True)
    print(f"  exit {done.returncode}: {done.stderr.strip().splitlines()[-1:] }", flush=True)
PY
  ls -la "$OUT/llm/reports" >> "$OUT/llm/reports.log"
  exit 0
fi

mkdir -p "$OUT/llm/runs"
for folder in "$CASSETTES"/*/; do
  name=$(basename "$folder")
  [ -d "$folder/run" ] || continue
  target=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['target']['path'])" "$folder/expected.json")
  rm -rf "$OUT/llm/runs/$name"
  cp -r "$folder/run" "$OUT/llm/runs/$name"
  timeout "${EVAL_TIMEOUT:-600}" python3 -m perfagent optimize --evaluate "$OUT/llm/runs/$name" "$target" \
    --format json -o "$OUT/llm/runs/$name.json" > "$OUT/llm/runs/$name.log" 2>&1
  echo "$name: exit $?" >> "$OUT/llm/evaluate.log"
done
python3 scripts/llm_table.py "$OUT/llm/runs" "$CASSETTES" "$OUT/llm" "${GPU:-unknown GPU}" > /dev/null
cat "$OUT/llm/table.md"
