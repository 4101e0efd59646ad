"""cooperative-row on row passes written one thread per *element* (_row_hoist), own forms (issue 23):

- ``softmax-elem-early-return``: a flat index behind ``if (idx >= n * d) return;``, the row's max by a
  compare-and-assign and the sum of exponentials recomputed per element, ``out[idx] = e / s``;
- ``layernorm-elem-with-column``: a ``size_t`` index, the row and the column both decoded
  (``c = t % D`` reads the per-column weight), two sums (mean, variance) per element;
- ``rms-elem-in-load-inline``: the same kind inside a ``load_inline`` string, its wrapper launching
  one thread per element with sizes from ``.size()``: the candidate's grid is re-derived per row.

Every candidate runs against the original on the CPU emulators (the warp variants lane by lane, the
block-per-row variants block by block with real barriers) over ragged shapes, and compiles with nvcc.
Forms where the hoist would change what an element sees are refused with the reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.rewrite.base import Candidate, LaunchContext, RewriteRequest
from perfagent.rewrite.embed.adapter import Embedded, embedded_cuda
from perfagent.rewrite.recipes import _cuda, _row_hoist, cooperative_row
from perfagent.rewrite.recipes._variant import Source
from perfagent.workloads.expr import evaluate
from tests.rewrite import cuda_blocks, cuda_lanes
from tests.rewrite.helpers import assert_compiled, nvcc_compile

SOFTMAX = """
__global__ void softmax_elem(const float* in, float* out, int n, int d) {
    int idx = threadIdx.x + blockDim.x * blockIdx.x;
    if (idx >= n * d) return;
    int row = idx / d;
    float m = in[row * d];
    for (int k = 1; k < d; k++) {
        if (in[row * d + k] > m) m = in[row * d + k];
    }
    float s = 0.0f;
    for (int k = 0; k < d; k++) s += __expf(in[row * d + k] - m);
    float e = __expf(in[idx] - m);
    out[idx] = e / s;
}
"""
LAYERNORM = """
__global__ void ln_elem(const float* X, const float* gamma, float* Y, size_t N, size_t D, float eps) {
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < N * D) {
        size_t r = t / D;
        size_t c = t % D;
        float mean = 0.f;
        for (size_t j = 0; j < D; ++j) mean += X[r * D + j];
        mean = mean / (float)D;
        float var = 0.f;
        for (size_t j = 0; j < D; ++j) { float z = X[r * D + j] - mean; var += z * z; }
        var = var / (float)D;
        Y[t] = (X[t] - mean) * rsqrtf(var + eps) * gamma[c];
    }
}
"""
RMS_INLINE = '''import torch
from torch.utils.cpp_extension import load_inline

rms_src = """
#include <torch/extension.h>

__global__ void rms_scale_kernel(const float* a, float* b, int rows, int width) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g < rows * width) {
        int r = g / width;
        float ss = 0.0f;
        for (int q = 0; q < width; ++q) {
            float v = a[r * width + q];
            ss += v * v;
        }
        b[g] = a[g] / sqrtf(ss / width + 1e-6f);
    }
}

torch::Tensor rms_scale(torch::Tensor a) {
    int rows = a.size(0);
    int width = a.size(1);
    auto b = torch::empty_like(a);
    int threads = 128;
    int blocks = (rows * width + threads - 1) / threads;
    rms_scale_kernel<<<blocks, threads>>>(a.data_ptr<float>(), b.data_ptr<float>(), rows, width);
    return b;
}
"""

ext = load_inline(name="rms", cpp_sources="torch::Tensor rms_scale(torch::Tensor a);", cuda_sources=rms_src, functions=["rms_scale"])
'''


def _launch(rows: str, cols: str, args: list[tuple[str, str | None]], block: int = 128) -> LaunchContext:
    return LaunchContext(
        grid=[f"ceil_div({rows} * {cols}, {block})"],
        block=[block],
        params={"rows": 50, "cols": 70},
        args=[{"name": n, "value": v} for n, v in args],  # type: ignore[misc]
    )


SPEC_FORMS: dict[str, tuple[str, str, LaunchContext]] = {
    "softmax-elem-early-return": (
        SOFTMAX,
        "softmax_elem",
        _launch("rows", "cols", [("in", None), ("out", None), ("n", "rows"), ("d", "cols")]),
    ),
    "layernorm-elem-with-column": (
        LAYERNORM,
        "ln_elem",
        _launch(
            "rows",
            "cols",
            [("X", None), ("gamma", None), ("Y", None), ("N", "rows"), ("D", "cols"), ("eps", None)],
        ),
    ),
}
SHAPES = [(3, 1), (5, 100), (37, 33)]


def _args(name: str, rows: int, cols: int, lanes: bool) -> tuple[object, ...]:
    buf = cuda_lanes.Buf if lanes else cuda_blocks.Buf
    if name.startswith("softmax"):
        return (buf("float", rows * cols), buf("float", rows * cols), str(rows), str(cols))
    return (
        buf("float", rows * cols),
        buf("float", cols),
        buf("float", rows * cols),
        f"(size_t){rows}",
        f"(size_t){cols}",
        "1e-5f",
    )


def _request(source: str, launch: LaunchContext) -> RewriteRequest:
    return RewriteRequest(source=source, language="cuda", transform="cooperative-row", launch=launch)


def _dims(expr: object, rows: int, cols: int) -> int:
    return int(evaluate(str(expr), {"rows": rows, "cols": cols}))


def _cases(name: str, cand: Candidate, launch: LaunchContext, lanes: bool) -> list[object]:
    case = cuda_lanes.Case if lanes else cuda_blocks.Case
    out = []
    for rows, cols in SHAPES:
        assert cand.launch is not None and cand.launch.grid is not None
        block = cand.launch.block or launch.block
        original = ((_dims(launch.grid[0], rows, cols),), (_dims(launch.block[0], rows, cols),))
        rewritten = ((_dims(cand.launch.grid[0], rows, cols),), (_dims(block[0], rows, cols),))
        if lanes:
            out.append(
                case(
                    _args(name, rows, cols, lanes),
                    (original[0][0], original[1][0]),
                    (rewritten[0][0], rewritten[1][0]),
                    f"{rows}x{cols}",
                )
            )  # type: ignore[call-arg]
        else:
            out.append(case(_args(name, rows, cols, lanes), original, rewritten, f"{rows}x{cols}"))  # type: ignore[call-arg]
    return out


@pytest.mark.parametrize("name", sorted(SPEC_FORMS))
def test_each_row_is_computed_once_per_row(name: str) -> None:
    source, kernel, launch = SPEC_FORMS[name]
    cands = cooperative_row.propose(_request(source, launch))
    assert cands, cooperative_row.applies(_request(source, launch))
    for cand in cands:
        text = _cuda.text(_cuda.kernels(_cuda.parse(cand.source))[0])
        assert "for (" in text and "pa_col" in text, text
        assert cand.launch is not None and cand.launch.grid is not None
        # the grid counts rows (x lanes or x block), never rows x cols threads
        assert "cols, 128" not in str(cand.launch.grid[0]) and "rows" in str(cand.launch.grid[0]), cand.launch


@pytest.mark.parametrize("name", sorted(SPEC_FORMS))
def test_warp_and_block_variants_match_the_original(name: str, tmp_path: Path) -> None:
    source, kernel, launch = SPEC_FORMS[name]
    cands = [
        c for c in cooperative_row.propose(_request(source, launch)) if not c.parameters.get("vector_lanes")
    ]
    kinds = {str(c.parameters.get("rows_per_block")) for c in cands}
    assert kinds == {"block / 32", "1"}, kinds
    for i, cand in enumerate(cands):
        where = tmp_path / str(i)
        where.mkdir()
        if cand.parameters.get("rows_per_block") == 1:
            cases = _cases(name, cand, launch, lanes=False)
            cuda_blocks.assert_same(where, source, cand.source, kernel, cases, rtol=3e-5, atol=3e-5)  # type: ignore[arg-type]
        else:
            cases = _cases(name, cand, launch, lanes=True)
            cuda_lanes.assert_same(where, source, cand.source, kernel, cases, rtol=3e-5, atol=3e-5)  # type: ignore[arg-type]


def _embedded() -> Embedded:
    found = embedded_cuda(
        RewriteRequest(source=RMS_INLINE, path="m.py", language="python", transform="cooperative-row")
    )
    assert isinstance(found, Embedded) and found.inner.launch is not None, found
    return found


def test_load_inline_wrapper_gets_a_grid_per_row(tmp_path: Path) -> None:
    found = _embedded()
    cands = cooperative_row.propose(found.inner)
    assert cands, cooperative_row.applies(found.inner)
    for cand in cands:
        assert cand.launch is not None and cand.launch.grid is not None
        grid = str(cand.launch.grid[0])
        assert "a_size_1" not in grid and "a_size_0" in grid, grid  # rows only, not rows x width
    units = {
        f"rms_{i}": "\n".join(_cuda.text(k) for k in _cuda.kernels(_cuda.parse(c.source)))
        for i, c in enumerate(cands)
    }
    assert_compiled(nvcc_compile(units, tmp_path))


def test_spec_candidates_compile(tmp_path: Path) -> None:
    units = {
        f"{name}_{i}".replace("-", "_"): c.source
        for name, (source, _k, launch) in SPEC_FORMS.items()
        for i, c in enumerate(cooperative_row.propose(_request(source, launch)))
    }
    assert len(units) >= 4
    assert_compiled(nvcc_compile(units, tmp_path))


REFUSED = {
    # the element's statement changes a statistic: once per row it would carry over between elements
    "element-changes-a-statistic": (
        SOFTMAX.replace("out[idx] = e / s;", "s = s + 1.0f;\n    out[idx] = e / s;"),
        "the element's statements change s",
    ),
    # a store among the statistics: once per row instead of once per element
    "store-before-the-element": (
        SOFTMAX.replace("float s = 0.0f;", "out[row * d] = m;\n    float s = 0.0f;"),
        "a store before the element's statements",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_unsafe_hoists_are_refused_with_the_reason(name: str) -> None:
    source, why = REFUSED[name]
    request = _request(source, SPEC_FORMS["softmax-elem-early-return"][2])
    reason = _row_hoist.normalise(Source(request))
    assert isinstance(reason, str) and why in reason, reason
    # whatever cooperative-row still proposes (a warp per element) keeps one element per thread's warp
    assert all("pa_col" not in c.source for c in cooperative_row.propose(request))
