#!/usr/bin/env bash
# Records Nsight Compute reports of every example on a GPU machine, for perfagent's fixtures.
#
# Usage: scripts/record_fixtures.sh [OUT_DIR]        (default: examples/reports)
#   Env: PYTHON (default python3).
#
# For each CUDA example (examples/cuda/NN_*/main.cu), the suite and the Triton examples it runs
#   python3 -m perfagent profile <target> --save-report OUT_DIR/<name>.ncu-rep --clock-control none
# (Triton: ... --clock-control none -- python3 examples/triton/<script>.py), keeps each run's
# output in OUT_DIR/logs/<name>.log, and writes OUT_DIR/MANIFEST.md: GPU, driver, ncu and nvcc
# versions, date, commit, and per report its size in bytes, status and the exact command.
# A failing example is recorded as FAILED in the manifest and the script goes on; the exit
# status is 1 if any example failed, 0 otherwise.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="${1:-examples/reports}"
PY="${PYTHON:-python3}"
mkdir -p "$OUT/logs"
MANIFEST="$OUT/MANIFEST.md"

rows=()
failures=0

# record NAME CMD...: runs CMD, which must write OUT/NAME.ncu-rep; appends a manifest row.
record() {
    local name="$1"
    shift
    local report="$OUT/$name.ncu-rep"
    local log="$OUT/logs/$name.log"
    local status size rc start elapsed
    rm -f "$report"
    echo "== $name: $*" >&2
    start=$(date +%s)
    if "$@" >"$log" 2>&1; then
        rc=0
    else
        rc=$?
    fi
    elapsed=$(($(date +%s) - start))
    if [[ $rc -eq 0 && -s "$report" ]]; then
        status="ok"
        size=$(stat -c %s "$report")
    elif [[ $rc -eq 0 ]]; then
        status="FAILED (exit 0 but no report written)"
        size="-"
        failures=$((failures + 1))
    else
        status="FAILED (exit $rc, see logs/$name.log)"
        size=$([[ -s "$report" ]] && stat -c %s "$report" || echo "-")
        failures=$((failures + 1))
    fi
    echo "   $status, ${elapsed} s" >&2
    rows+=("| \`$name.ncu-rep\` | $size | $status | ${elapsed} | \`$*\` |")
}

for dir in examples/cuda/[0-9][0-9]_*/; do
    name="$(basename "$dir")"
    record "$name" "$PY" -m perfagent profile "examples/cuda/$name/main.cu" \
        --save-report "$OUT/$name.ncu-rep" --clock-control none
done
record suite "$PY" -m perfagent profile examples/cuda/suite/main.cu \
    --save-report "$OUT/suite.ncu-rep" --clock-control none
# Only the Triton kernels: a whole torch process also launches cuBLAS/ATen kernels whose
# modules would make the report tens of megabytes.
record triton_matmul "$PY" -m perfagent profile --save-report "$OUT/triton_matmul.ncu-rep" \
    --clock-control none --kernel '^matmul_kernel$' -- "$PY" examples/triton/01_matmul_bad_config.py
record triton_softmax "$PY" -m perfagent profile --save-report "$OUT/triton_softmax.ncu-rep" \
    --clock-control none --kernel '^softmax_kernel$' -- "$PY" examples/triton/02_softmax_small_block.py

first_line() { "$@" 2>/dev/null | head -n 1 || true; }
gpu="$(first_line nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
ncu_version="$(ncu --version 2>/dev/null | tail -n 1 || true)"
nvcc_version="$(nvcc --version 2>/dev/null | grep -i release || true)"
# On the lent GPU machine the folder's .git is not this checkout's: give PERFAGENT_COMMIT there.
commit="${PERFAGENT_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}"
dirty=""
[[ -n "${PERFAGENT_COMMIT:-}" ]] || dirty="$(git status --porcelain -- examples perfagent profilers 2>/dev/null | head -n 1 || true)"

{
    echo "# Recorded example reports"
    echo
    echo "Written by \`scripts/record_fixtures.sh\`; every report comes from a real run on the GPU below."
    echo
    echo "| | |"
    echo "|---|---|"
    echo "| GPU, driver | ${gpu:-unknown} |"
    echo "| ncu | ${ncu_version:-unknown} |"
    echo "| nvcc | ${nvcc_version:-unknown} |"
    echo "| python | $("$PY" --version 2>&1) |"
    echo "| date (UTC) | $(date -u +%Y-%m-%dT%H:%M:%SZ) |"
    echo "| commit | $commit${dirty:+ (with uncommitted changes)} |"
    echo "| host | $(uname -srm) |"
    echo
    echo "| report | size (bytes) | status | seconds | command |"
    echo "|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
    echo
    echo "Failures: $failures of ${#rows[@]}. Logs of each run: \`logs/<name>.log\`."
} >"$MANIFEST"

echo "wrote $MANIFEST ($failures failure(s))" >&2
[[ $failures -eq 0 ]]
