"""stencil-rows on a real GPU: every candidate of our own five (six) stencil forms is checked bit for bit
against its original on a 4093 x 4091 grid (ragged: no multiple of any block or walk) and timed with CUDA
events (cupy).

Runs with ``pytest -m gpu`` (scripts/gpu_r23_stencil.sh); writes a markdown table to ``$STENCIL_OUT`` when
set. It asserts correctness only: the times are data for BENCHMARKS.md (the forms read through L1, where
the saved loads matter less than on unseen2/11's integer-bound torus)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from perfagent.rewrite.recipes import stencil_rows as rec
from perfagent.workloads.expr import evaluate
from tests.rewrite.cuda_blocks import Buf
from tests.rewrite.cupy_timing import time_launches
from tests.rewrite.test_stencil_rows import FORMS, _request

W, H = 4093, 4091
_DTYPES = {"float": "float32", "double": "float64", "int": "int32", "unsigned char": "uint8"}


def _arrays(cp: object, args: tuple[Buf | str, ...]) -> list[object]:
    rng = cp.random.default_rng(0)  # type: ignore[attr-defined]
    out: list[object] = []
    for a in args:
        if isinstance(a, Buf):
            dtype = _DTYPES[a.ctype]
            data = (
                rng.integers(0, 2, a.size)
                if a.ctype in ("int", "unsigned char")
                else rng.uniform(-1, 1, a.size)
            )
            out.append(data.astype(dtype))
        elif a.startswith("(size_t)"):
            out.append(cp.uint64(int(a.removeprefix("(size_t)"))))  # type: ignore[attr-defined]
        elif a.endswith("f"):
            out.append(cp.float32(float(a[:-1])))  # type: ignore[attr-defined]
        else:
            v = int(a.rstrip("u"))
            out.append(cp.uint32(v) if a.endswith("u") else cp.int32(v))  # type: ignore[attr-defined]
    return out


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(FORMS))
def test_gpu_every_candidate_is_bit_exact_and_timed(name: str) -> None:
    cp = pytest.importorskip("cupy")
    source, kernel, _dims, args, original, _pairs = FORMS[name]
    inputs = _arrays(cp, args(W, H))

    def launch(text: str, grid: tuple[int, ...], block: tuple[int, ...]) -> tuple[list[object], float]:
        # a C++ (not extern "C") kernel has a mangled symbol: NVRTC names it through name_expressions
        module = cp.RawModule(code=text, options=("-std=c++17",), name_expressions=[kernel])
        fn = module.get_function(kernel)
        bufs = [a.copy() if hasattr(a, "copy") else a for a in inputs]
        return bufs, time_launches(cp, lambda: fn(grid, block, tuple(bufs)))

    grid, block = original(W, H)
    if name.startswith("cross2"):  # a grid-stride loop: one wave of blocks, as such kernels launch
        grid = (132 * 8,)
    want, base_us = launch(source, grid, block)
    rows = [f"| {name} | original | {base_us:.1f} µs | 1.00x |"]
    for cand in rec.propose(_request(name)):
        assert cand.source is not None and cand.launch is not None and cand.launch.grid is not None
        params = {"W": W, "H": H}
        g = tuple(int(evaluate(str(e), params)) for e in cand.launch.grid)
        b = tuple(int(evaluate(str(e), params)) for e in cand.launch.block or [])
        got, us = launch(cand.source, g, b)
        for w, o in zip(want, got, strict=True):
            if hasattr(w, "shape"):
                assert bool(cp.array_equal(w, o)), f"{name} {cand.parameters}: differs from the original"
        p = cand.parameters
        rows.append(
            f"| {name} | ({p['block_x']}, {p['block_y']}) x {p['cells_per_thread']} | {us:.1f} µs | "
            f"{base_us / us:.2f}x |"
        )
    table = os.environ.get("STENCIL_OUT")
    if table:
        with Path(table).open("a", encoding="utf-8") as fh:
            fh.write("\n".join(rows) + "\n")
