#!/usr/bin/env bash
# After the afternoon table: 11 (modulo-to-select was skipped by the XU-idle fit check, since fixed) and 04
# (its textbook fix measured 48x here against 30x in the morning) again, with the textbook bench, and the
# report-reader probe after the child-process fix. One GPU: OUT=... bash this.
set -u
cd "$(dirname "$0")/../../.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt"
bash scripts/gpu_preflight.sh > "$OUT/preflight.txt" 2>&1 || export PERFAGENT_UNCONFINED=1
OUT="$OUT/gen" SET=benchmarks/unseen2 ITER=3 SUITE_TIMEOUT=200 ONLY='^(04|11)_' bash scripts/gpu_generalization_bench.sh > "$OUT/gen.log" 2>&1
OUT="$OUT" timeout 100 bash scripts/gpu_probe_report_reader.sh > /dev/null 2>&1
