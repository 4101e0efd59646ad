"""The atomics family's widened recipes on a real GPU (issue 23): cooperative-row's lanes-per-item
candidates of the scatter forms (tests/rewrite/test_cooperative_atomics.py) and privatize-atomics'
per-block / per-warp candidates with packed loads (tests/rewrite/test_privatize_variants.py), each
verified against its original on large random inputs and timed with CUDA events (cupy).

Runs with ``pytest -m gpu`` (scripts/gpu_r23_atomic.sh); writes a markdown table to ``$R23_ATOMIC_OUT``
when set. It asserts every candidate's result, and that the best candidate of each form beats the
original."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from perfagent.rewrite.base import Candidate
from perfagent.rewrite.recipes import cooperative_row
from tests.rewrite import test_cooperative_atomics as coop
from tests.rewrite import test_privatize_variants as priv
from tests.rewrite.cupy_timing import time_launches

NODES = 65536
COOP_SIZES = {  # form: (items, row length); destinations spread over NODES rows (a graph, not a hot spot)
    "edge-scatter-add-early-return": (524288, 64),
    "index-add-int-pointer-plus": (262144, 128),
    "bucket-sum-computed-row-unsigned": (262144, 64),
}


def _coop_inputs(cp: object, name: str, items: int, width: int) -> list[object]:
    rng = cp.random.default_rng(0)  # type: ignore[attr-defined]
    rows = rng.integers(0, NODES, items, dtype=cp.int32)  # type: ignore[attr-defined]
    scalars = [cp.int32(items), cp.int32(width)]  # type: ignore[attr-defined]
    if name == "edge-scatter-add-early-return":
        feat = rng.uniform(-3, 3, NODES * width, dtype=cp.float32)  # type: ignore[attr-defined]
        src = rng.integers(0, NODES, items, dtype=cp.int32)  # type: ignore[attr-defined]
        return [feat, src, rows, cp.zeros(NODES * width, dtype=cp.float32), *scalars]  # type: ignore[attr-defined]
    if name == "index-add-int-pointer-plus":
        vals = rng.integers(-5, 5, items * width, dtype=cp.int32)  # type: ignore[attr-defined]
        return [vals, rows, cp.zeros(NODES * width, dtype=cp.int32), *scalars]  # type: ignore[attr-defined]
    vals = rng.integers(0, 1000, items * width, dtype=cp.uint32)  # type: ignore[attr-defined]
    return [vals, cp.zeros(5 * width, dtype=cp.uint32), *scalars]  # type: ignore[attr-defined]


PRIV_SIZES = {
    "u8-grid-stride-256-bins": 1 << 26,
    "u16-weighted-float-1024-bins": 1 << 22,
    "u8-one-per-thread": 1 << 26,
}


def _c_linkage(source: str) -> str:
    return source if 'extern "C"' in source else source.replace("__global__", 'extern "C" __global__', 1)


def _report(lines: list[str]) -> None:
    out = os.environ.get("R23_ATOMIC_OUT")
    if out:
        with Path(out).open("a", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")


def _run(
    cp: object, source: str, kernel: str, grid: int, block: int, inputs: list[object]
) -> tuple[list[object], float]:
    fn = cp.RawKernel(_c_linkage(source), kernel, options=("-std=c++17",))  # type: ignore[attr-defined]
    args = [a.copy() if hasattr(a, "copy") else a for a in inputs]
    return args, time_launches(cp, lambda: fn((grid,), (block,), tuple(args)), reps=10)


def _compare(cp: object, want: list[object], got: list[object]) -> None:
    for w, g in zip(want, got, strict=True):
        if hasattr(w, "dtype"):
            cp.testing.assert_allclose(g, w, rtol=1e-2, atol=1e-2)  # type: ignore[attr-defined]


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(COOP_SIZES))
def test_gpu_times_the_scatter_forms(name: str) -> None:
    cp = pytest.importorskip("cupy")
    kernel = coop.EMULATED[name][0]
    items, width = COOP_SIZES[name]
    inputs = _coop_inputs(cp, name, items, width)
    grid = -(-items // coop.BLOCK)
    want, base = _run(cp, coop.FORMS[name], kernel, grid, coop.BLOCK, inputs)
    lines, best = [f"| {name} | original | {base:.1f} µs | 1.00x |"], 0.0
    request = coop._request(coop.FORMS[name]).model_copy(update={"max_candidates": 8})
    for cand in cooperative_row.propose(request):
        sharers = cand.parameters["rows_per_block"]
        g = grid * coop.BLOCK if sharers == 1 else grid * int(str(sharers).split("/")[-1])
        got, us = _run(cp, cand.source, kernel, g, coop.BLOCK, inputs)
        _compare(cp, want, got)
        best = max(best, base / us)
        lines.append(f"| {name} | {sharers} | {us:.1f} µs | {base / us:.2f}x |")
    _report(lines)
    assert best > 1.0, lines


def _priv_inputs(cp: object, name: str, n: int) -> list[object]:
    rng = cp.random.default_rng(1)  # type: ignore[attr-defined]
    if name == "u8-grid-stride-256-bins":
        return [
            rng.integers(0, 256, n, dtype=cp.int32).astype(cp.uint8),
            cp.int32(n),
            cp.zeros(256, dtype=cp.int32),
        ]  # type: ignore[attr-defined]
    if name == "u16-weighted-float-1024-bins":
        return [
            rng.integers(0, 65536, n, dtype=cp.int32).astype(cp.uint16),  # type: ignore[attr-defined]
            rng.uniform(0, 1, n, dtype=cp.float32),
            cp.zeros(1024, dtype=cp.float32),  # type: ignore[attr-defined]
            cp.int32(n),  # type: ignore[attr-defined]
        ]
    return [
        rng.integers(0, 256, n, dtype=cp.int32).astype(cp.uint8),
        cp.zeros(32, dtype=cp.uint32),
        cp.int32(n),
    ]  # type: ignore[attr-defined]


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(PRIV_SIZES))
def test_gpu_times_the_histogram_variants(name: str) -> None:
    cp = pytest.importorskip("cupy")
    n = PRIV_SIZES[name]
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    grid = -(-n // 128) if name == "u8-one-per-thread" else 4 * sms
    inputs = _priv_inputs(cp, name, n)
    kernel = priv.FORMS[name][1]
    want, base = _run(cp, priv.FORMS[name][0], kernel, grid, 128, inputs)
    lines, best = [f"| {name} | original | {base:.1f} µs | 1.00x |"], 0.0
    cands: dict[object, Candidate] = priv._variants(name)
    for copies, cand in cands.items():
        g = 2 * sms if cand.launch is not None else grid
        got, us = _run(cp, cand.source, kernel, g, 128, inputs)
        _compare(cp, want, got)
        best = max(best, base / us)
        lines.append(
            f"| {name} | copies {copies}, packed {cand.parameters['packed']} | {us:.1f} µs | {base / us:.2f}x |"
        )
    _report(lines)
    assert best > 1.0, lines
