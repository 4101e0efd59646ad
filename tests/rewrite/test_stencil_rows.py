"""stencil-rows: 2-D stencils written several ways (our own kernels: a 5-point Jacobi on a flat 1-D launch, a
3x3 uint8 box blur with clamped edges on a 2-D launch, a neighbour count on a torus wrapped by
compare-and-select, a 9-point Laplacian with zero ghost cells, a radius-2 cross in a grid-stride loop over
a size_t flat index), each candidate run against its original on the CPU block emulator at the
candidate's own launch (square and ragged sizes), compiled with nvcc, and the shapes it cannot prove
refused with the reason and the line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from perfagent.rewrite.base import LaunchArg, LaunchContext, RewriteRequest
from perfagent.rewrite.recipes import stencil_rows as rec
from perfagent.workloads.expr import evaluate
from tests.rewrite import cuda_blocks
from tests.rewrite.cuda_blocks import Buf, Case
from tests.rewrite.helpers import assert_clean_cuda, assert_compiled, nvcc_compile

# flat 1-D launch, int index, row and column peeled with / and %, borders copied, interior averaged
JACOBI5 = """
__global__ void jacobi5(const float *__restrict__ src, float *__restrict__ dst, int rows, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows * cols) return;
    int r = i / cols;
    int c = i % cols;
    if (r == 0 || c == 0 || r == rows - 1 || c == cols - 1) {
        dst[i] = src[i];
        return;
    }
    dst[i] = 0.25f * (src[i - cols] + src[i + cols] + src[i - 1] + src[i + 1]);
}
"""

# 2-D launch, uint8, edges clamped with min/max, early exit
BOX_BLUR_U8 = """
__global__ void box3(const unsigned char *img, unsigned char *out, int w, int h) {
    int px = blockIdx.x * blockDim.x + threadIdx.x;
    int py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= w || py >= h) return;
    int xm = max(px - 1, 0), xp = min(px + 1, w - 1);
    int ym = max(py - 1, 0), yp = min(py + 1, h - 1);
    int s = img[ym * w + xm] + img[ym * w + px] + img[ym * w + xp]
          + img[py * w + xm] + img[py * w + px] + img[py * w + xp]
          + img[yp * w + xm] + img[yp * w + px] + img[yp * w + xp];
    out[py * w + px] = (unsigned char)(s / 9);
}
"""

# 2-D launch, unsigned, torus wrapped by compare-and-select (not %), int cells, if-guarded work
COUNT_TORUS = """
extern "C" __global__ void neighbours(const int *cells, int *count, unsigned int nx, unsigned int ny) {
    unsigned int col = threadIdx.x + blockIdx.x * blockDim.x;
    unsigned int row = threadIdx.y + blockIdx.y * blockDim.y;
    if (col < nx && row < ny) {
        unsigned int n = row == 0 ? ny - 1 : row - 1;
        unsigned int s = row + 1 == ny ? 0 : row + 1;
        unsigned int w = col == 0 ? nx - 1 : col - 1;
        unsigned int e = col + 1 == nx ? 0 : col + 1;
        int alive = cells[n * nx + w] + cells[n * nx + col] + cells[n * nx + e] + cells[row * nx + w]
                  + cells[row * nx + e] + cells[s * nx + w] + cells[s * nx + col] + cells[s * nx + e];
        count[row * nx + col] = alive == 3 || (alive == 2 && cells[row * nx + col]) ? 1 : 0;
    }
}
"""

# 2-D launch, 9-point Laplacian, zero ghost cells: the neighbour reads are under ?:
LAPLACE9 = """
__global__ void lap9(const float *u, float *v, int nx, int ny, float h2) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= nx) return;
    if (y >= ny) return;
    const bool l = x > 0, r = x + 1 < nx, t = y > 0, b = y + 1 < ny;
    float s = -20.0f * u[y * nx + x];
    s += 4.0f * ((t ? u[(y - 1) * nx + x] : 0.0f) + (b ? u[(y + 1) * nx + x] : 0.0f)
               + (l ? u[y * nx + x - 1] : 0.0f) + (r ? u[y * nx + x + 1] : 0.0f));
    s += (t && l ? u[(y - 1) * nx + x - 1] : 0.0f) + (t && r ? u[(y - 1) * nx + x + 1] : 0.0f)
       + (b && l ? u[(y + 1) * nx + x - 1] : 0.0f) + (b && r ? u[(y + 1) * nx + x + 1] : 0.0f);
    v[y * nx + x] = s / (6.0f * h2);
}
"""

# grid-stride loop over a size_t flat index, radius-2 cross, interior only (continue), double data
CROSS_R2 = """
__global__ void cross2(const double *__restrict__ a, double *__restrict__ o, size_t width, size_t height) {
    for (size_t k = blockIdx.x * blockDim.x + threadIdx.x; k < width * height; k += blockDim.x * gridDim.x) {
        const size_t col = k % width, row = k / width;
        if (col < 2 || row < 2 || col + 2 >= width || row + 2 >= height) continue;
        o[k] = a[k] * 0.5 + 0.125 * (a[k - 2 * width] + a[k - width] + a[k + width] + a[k + 2 * width])
             + 0.0625 * (a[k - 2] + a[k - 1] + a[k + 1] + a[k + 2]);
    }
}
"""

# name: (source, kernel, dims, args at (W, H), launch of the original at (W, H), least pairs)
Form = tuple[str, str, int, object, object, int]
FORMS: dict[str, Form] = {
    "jacobi5-flat-float": (
        JACOBI5,
        "jacobi5",
        1,
        lambda w, h: (Buf("float", w * h), Buf("float", w * h), str(h), str(w)),
        lambda w, h: ((-(-w * h // 64),), (64,)),
        2,
    ),
    "box3-uint8-clamp-2d": (
        BOX_BLUR_U8,
        "box3",
        2,
        lambda w, h: (Buf("unsigned char", w * h), Buf("unsigned char", w * h), str(w), str(h)),
        lambda w, h: ((-(-w // 16), -(-h // 8)), (16, 8)),
        6,
    ),
    "count-torus-select-2d": (
        COUNT_TORUS,
        "neighbours",
        2,
        lambda w, h: (Buf("int", w * h), Buf("int", w * h), f"{w}u", f"{h}u"),
        lambda w, h: ((-(-w // 8), -(-h // 8)), (8, 8)),
        6,
    ),
    "laplace9-zero-ghost-2d": (
        LAPLACE9,
        "lap9",
        2,
        lambda w, h: (Buf("float", w * h), Buf("float", w * h), str(w), str(h), "0.5f"),
        lambda w, h: ((-(-w // 16), -(-h // 16)), (16, 16)),
        6,
    ),
    "cross2-gridstride-double": (
        CROSS_R2,
        "cross2",
        1,
        lambda w, h: (Buf("double", w * h), Buf("double", w * h), f"(size_t){w}", f"(size_t){h}"),
        lambda w, h: ((7,), (96,)),
        3,
    ),
    "cross2-int-width-size_t-index": (
        CROSS_R2.replace("size_t width, size_t height", "int width, int height"),
        "cross2",
        1,
        lambda w, h: (Buf("double", w * h), Buf("double", w * h), str(w), str(h)),
        lambda w, h: ((5,), (128,)),
        3,
    ),
}
SIZES = ((40, 36), (37, 29))
"""A square-ish and a ragged grid (neither a multiple of the blocks nor of the rows per thread)."""


def _launch(name: str) -> LaunchContext:
    _src, _k, dims, _args, _orig, _pairs = FORMS[name]
    if dims == 2:
        return LaunchContext(
            grid=["ceil_div(W, 16)", "ceil_div(H, 8)"], block=[16, 8], params={"W": 40, "H": 36}
        )
    names = ["src", "dst", "rows", "cols"] if name.startswith("jacobi") else ["a", "o", "width", "height"]
    values = {"rows": "H", "cols": "W", "width": "W", "height": "H"}
    return LaunchContext(
        grid=["ceil_div(W * H, 64)"],
        block=[64],
        params={"W": 40, "H": 36},
        args=[LaunchArg(name=n, value=values.get(n)) for n in names],
    )


def _request(name: str) -> RewriteRequest:
    source, kernel, *_rest = FORMS[name]
    return RewriteRequest(
        source=source, language="cuda", transform="thread-coarsening", kernel=kernel, launch=_launch(name)
    )


@pytest.mark.parametrize("name", sorted(FORMS))
def test_each_form_walks_rows_with_kept_reads(name: str) -> None:
    request = _request(name)
    assert rec.applies(request) is None
    candidates = rec.propose(request)
    assert len(candidates) == len(rec.GEOMETRIES)
    pairs = FORMS[name][5]
    for cand in candidates:
        assert cand.source is not None and cand.launch is not None and cand.launch.block is not None
        assert_clean_cuda(cand.source)
        assert len(cand.launch.block) == 2 and len(cand.launch.grid or []) == 2
        assert cand.source.count("_1 = perfagent_sr_a") >= 1  # a history shift: something is kept
        assert cand.source.count(f"{rec.FETCH}(") >= pairs + 1  # the helper, and the kept reads


def _dims(exprs: list[object], params: dict[str, int]) -> tuple[int, ...]:
    return tuple(int(evaluate(str(e), params)) for e in exprs)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_every_geometry_computes_what_the_original_does(name: str, tmp_path: Path) -> None:
    source, kernel, _dims_n, args, original, _pairs = FORMS[name]
    cases = []
    for k, cand in enumerate(rec.propose(_request(name))):
        assert cand.source is not None and cand.launch is not None and cand.launch.grid is not None
        for w, h in SIZES:
            params = {"W": w, "H": h}
            rewritten = (_dims(cand.launch.grid, params), _dims(list(cand.launch.block or []), params))
            cases.append(
                (k, Case(args=args(w, h), original=original(w, h), rewritten=rewritten, name=f"{w}x{h}"))
            )
    for k, cand in enumerate(rec.propose(_request(name))):
        assert cand.source is not None
        (tmp_path / str(k)).mkdir()
        mine = [c for j, c in cases if j == k]
        # bit-identical: the same expressions over the same values
        cuda_blocks.assert_same(tmp_path / str(k), source, cand.source, kernel, mine, rtol=0.0, atol=0.0)


def test_every_candidate_compiles_with_nvcc(tmp_path: Path) -> None:
    sources = {
        f"{name}_{k}": cand.source or ""
        for name in FORMS
        for k, cand in enumerate(rec.propose(_request(name)))
    }
    assert_compiled(nvcc_compile(sources, tmp_path))


_PREV = re.compile(r"perfagent_sr_a(\d+)_(\d+), perfagent_sr_v\1_\2(?=, perfagent_sr_a\d+_0, )")


def _scrambled(source: str) -> str:
    """Every kept read handed another read's row before (a wrong guess of the pairing)."""
    prevs = [m.group(0) for m in _PREV.finditer(source)]
    rotated = iter(prevs[1:] + prevs[:1])
    return _PREV.sub(lambda _m: next(rotated), source)


def test_a_wrong_pairing_is_caught_by_the_address_check_and_only_by_it(tmp_path: Path) -> None:
    # the pairing is a guess: scrambled, the run-time address check still keeps every value right;
    # without the check, the emulation sees the wrong cells (it has teeth)
    source, kernel, _d, args, original, _p = FORMS["laplace9-zero-ghost-2d"]
    cand = rec.propose(_request("laplace9-zero-ghost-2d"))[1]
    assert cand.source is not None and cand.launch is not None and cand.launch.grid is not None
    scrambled = _scrambled(cand.source)
    unchecked = scrambled.replace(
        "val = at == prev_at ? prev : p[idx];", f"val = prev_at != {rec._NONE} ? prev : p[idx];"
    )
    assert scrambled != cand.source and unchecked != scrambled
    params = {"W": 37, "H": 29}
    case = Case(
        args=args(37, 29),
        original=original(37, 29),
        rewritten=(_dims(cand.launch.grid, params), _dims(list(cand.launch.block or []), params)),
    )
    (tmp_path / "checked").mkdir()
    (tmp_path / "unchecked").mkdir()
    cuda_blocks.assert_same(tmp_path / "checked", source, scrambled, kernel, [case], rtol=0.0, atol=0.0)
    ok, out = cuda_blocks.run(tmp_path / "unchecked", source, unchecked, kernel, [case], rtol=0.0, atol=0.0)
    assert not ok and "differs" in out


REFUSED: dict[str, tuple[str, str, str]] = {
    "data-dependent-neighbourhood": (
        "count-torus-select-2d",
        COUNT_TORUS.replace("cells[n * nx + w]", "cells[cells[row * nx] * nx + w]"),
        "line 10: the index of cells reads memory: the neighbourhood is data-dependent",
    ),
    "output-aliases-input": (
        "box3-uint8-clamp-2d",
        BOX_BLUR_U8.replace(
            "out[py * w + px] = (unsigned char)(s / 9);", "img[py * w + px] = (unsigned char)(s / 9);"
        ).replace("const unsigned char *img", "unsigned char *img"),
        "line 11: img is read and written (the output aliases the input)",
    ),
    "bound-not-width-times-rows": (
        "jacobi5-flat-float",
        JACOBI5.replace("int rows, int cols)", "int rows, int cols, int n)").replace(
            "if (i >= rows * cols)", "if (i >= n)"
        ),
        "line 4: the bound n is not the width cols times a row count",
    ),
    "two-widths": (
        "jacobi5-flat-float",
        JACOBI5.replace("int r = i / cols;", "int r = i / rows;"),
        "is divided by more than one width",
    ),
    "return-inside-a-loop": (
        "box3-uint8-clamp-2d",
        BOX_BLUR_U8.replace(
            "    out[py * w + px]", "    for (int k = 0; k < 2; ++k) if (s > k) return;\n    out[py * w + px]"
        ),
        "a return inside a loop of the cell's work",
    ),
    "neighbourhood-only-in-a-loop": (
        "box3-uint8-clamp-2d",
        BOX_BLUR_U8.replace(
            "int s = img[ym * w + xm]",
            "int s = 0;\n    for (int dy = -1; dy <= 1; ++dy) s += img[min(max(py + dy, 0), h - 1) * w + px];\n    s += 0 * img[ym * w + xm]",
        ).replace(
            "+ img[ym * w + px] + img[ym * w + xp]\n          + img[py * w + xm] + img[py * w + px] + img[py * w + xp]\n          + img[yp * w + xm] + img[yp * w + px] + img[yp * w + xp]",
            "",
        ),
        "nothing to keep in registers",
    ),
    "index-through-a-macro": (
        "laplace9-zero-ghost-2d",
        "#define IDX(yy, xx) ((yy) * nx + (xx))\n"
        + LAPLACE9.replace("u[(y - 1) * nx + x]", "u[IDX(y - 1, x)]"),
        "line 10: the index of u calls IDX",
    ),
    "no-row-guard": (
        "laplace9-zero-ghost-2d",
        LAPLACE9.replace("    if (y >= ny) return;\n", ""),
        "line 4: no guard bounds y",
    ),
    "shared-memory": (
        "box3-uint8-clamp-2d",
        BOX_BLUR_U8.replace("    int xm =", "    __shared__ int tile[32];\n    tile[0] = 0;\n    int xm ="),
        "__shared__",
    ),
    "row-index-written": (
        "laplace9-zero-ghost-2d",
        LAPLACE9.replace("const int y =", "int y =").replace(
            "    v[y * nx + x] = s", "    y = 0;\n    v[y * nx + x] = s"
        ),
        "y is assigned after its declaration",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_shapes_it_cannot_prove_are_refused(name: str) -> None:
    form, source, words = REFUSED[name]
    request = _request(form).model_copy(update={"source": source})
    why = rec.applies(request)
    assert why is not None and words in why, why


def test_a_3d_launch_is_left_to_register_streaming() -> None:
    request = _request("box3-uint8-clamp-2d").model_copy(
        update={"launch": LaunchContext(grid=["4", "4", "4"], block=[8, 8, 8])}
    )
    why = rec.applies(request)
    assert why is not None and "1-D or both 2-D" in why
