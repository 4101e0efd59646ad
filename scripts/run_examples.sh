#!/usr/bin/env bash
# Builds and runs every example on a GPU (no profiler) and prints their timing lines.
#
# Usage: scripts/run_examples.sh [EXAMPLE...]     (default: all of examples/cuda/NN_*, suite, Triton)
#   Env: ARCH (default sm_90), BUILD_DIR (default build/examples), EXAMPLE_REPS (timed launches per
#        kernel, default 10 here; the programs default to 2 when run under a profiler),
#        PYTHON (default python3).
# Each CUDA example is built with `nvcc -arch=$ARCH -O3 -lineinfo` and must print PASS; the Triton
# examples run when torch with CUDA and triton import. Exit status 1 if any example failed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
ARCH="${ARCH:-sm_90}"
BUILD_DIR="${BUILD_DIR:-build/examples}"
PY="${PYTHON:-python3}"
export EXAMPLE_REPS="${EXAMPLE_REPS:-10}"
mkdir -p "$BUILD_DIR"

if [[ $# -gt 0 ]]; then
    targets=("$@")
else
    targets=()
    for dir in examples/cuda/[0-9][0-9]_*/; do targets+=("$(basename "$dir")"); done
    targets+=(suite triton/01_matmul_bad_config.py triton/02_softmax_small_block.py)
fi

failed=()
summary=()
for t in "${targets[@]}"; do
    echo "== $t"
    log="$BUILD_DIR/$(echo "$t" | tr '/' '_').log"
    if [[ "$t" == triton/* ]]; then
        if ! "$PY" -c "import torch, triton; assert torch.cuda.is_available()" 2>/dev/null; then
            echo "   skipped: torch with CUDA or triton not importable"
            summary+=("$t: skipped")
            continue
        fi
        cmd=("$PY" "examples/$t")
    else
        exe="$BUILD_DIR/$t"
        if ! nvcc -arch="$ARCH" -O3 -lineinfo -o "$exe" "examples/cuda/$t/main.cu"; then
            echo "   BUILD FAILED"
            failed+=("$t")
            summary+=("$t: build failed")
            continue
        fi
        cmd=("$exe")
    fi
    start=$(date +%s%N)
    if "${cmd[@]}" >"$log" 2>&1; then rc=0; else rc=$?; fi
    ms=$((($(date +%s%N) - start) / 1000000))
    wall=$(printf '%d.%02d' $((ms / 1000)) $((ms % 1000 / 10)))
    grep -E '^(device|launch|occupancy|sum|fp32 peak|dram peak|total kernel time|[A-Za-z0-9_.]+: [0-9.]+ ms)' "$log" | sed 's/^/   /' || true
    if [[ $rc -eq 0 ]] && grep -q '^PASS' "$log"; then
        summary+=("$t: PASS (${wall} s wall)")
    else
        echo "   FAILED (exit $rc), last lines of $log:"
        tail -n 5 "$log" | sed 's/^/     /'
        failed+=("$t")
        summary+=("$t: FAIL (exit $rc)")
    fi
done

echo
echo "== summary"
printf '   %s\n' "${summary[@]}"
[[ ${#failed[@]} -eq 0 ]]
