"""transpose-inplace (coalesce-access): the in-place square transpose swapped by 32 x 32 tile pairs.

Positive forms are written here (issue 23: never the measuring set's kernel): the upper-triangle swap
through one temporary, the lower triangle with two temporaries and a braced ``size_t`` index, a
``BLOCK``-scaled index on doubles, and ``__half`` elements with the bound on the larger index only.
Each rewrite runs against its original on the block-synchronous CPU emulator (real barriers, guard
words around the buffer) at sides that are not multiples of the tile, and compiles with nvcc.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.rewrite.base import LaunchContext, RewriteRequest, launch_context
from perfagent.rewrite.recipes import RECIPES, recipes_for, transpose_inplace
from tests.rewrite.cuda_blocks import Buf, Case, assert_same
from tests.rewrite.helpers import assert_compiled, nvcc_compile


def _spec(block: list[object], grid_y: str, args: list[tuple[str, str | None]]) -> LaunchContext:
    return launch_context(
        {
            "grid": [f"ceil_div(m, {block[0]})", grid_y],
            "block": block,
            "args": [{"name": n, "value": v} for n, v in args],
        }
    )


UPPER_ONE_TEMP = """
__global__ void flip_upper(float *mat, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int k = blockIdx.y * blockDim.y + threadIdx.y;
    if (k < m && i < m && i > k) {
        float keep = mat[k * m + i];
        mat[k * m + i] = mat[i * m + k];
        mat[i * m + k] = keep;
    }
}
"""
LOWER_TWO_TEMPS = """
__global__ void flip_lower(int *grid, int side) {
    const int c = threadIdx.x + blockDim.x * blockIdx.x;
    const int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (c < r && r < side) {
        int below = grid[(size_t)r * side + c];
        int above = grid[(size_t)c * side + r];
        grid[(size_t)c * side + r] = below;
        grid[(size_t)r * side + c] = above;
    }
}
"""
BLOCK_MACRO_DOUBLE = """
#define BLOCK 16
__global__ void flip_block(double *a, int w) {
    int x = blockIdx.x * BLOCK + threadIdx.x;
    int y = blockIdx.y * BLOCK + threadIdx.y;
    if (x < w && y < w && y <= x) {
        double t = a[y * w + x];
        a[y * w + x] = a[x * w + y];
        a[x * w + y] = t;
    }
}
"""
HALF_ELEMENTS = """
#include <cuda_fp16.h>
extern "C" __global__ void flip_half(__half *h, int n) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < col && col < n) {
        __half t = h[row * n + col];
        h[row * n + col] = h[col * n + row];
        h[col * n + row] = t;
    }
}
"""

FORMS: dict[str, tuple[str, LaunchContext, str, str, int]] = {
    # name: (source, launch, kernel, element type, original block edge along y)
    "upper-one-temp": (UPPER_ONE_TEMP, _spec([32, 8], "ceil_div(m, 8)", [("mat", None), ("m", "m")]), "flip_upper", "float", 8),
    "lower-two-temps": (LOWER_TWO_TEMPS, _spec([16, 16], "ceil_div(m, 16)", [("grid", None), ("side", "m")]), "flip_lower", "int", 16),
    "block-macro-double": (BLOCK_MACRO_DOUBLE, _spec(["BLOCK", "BLOCK"], "ceil_div(m, BLOCK)", [("a", None), ("w", "m")]), "flip_block", "double", 16),
    "half-elements": (HALF_ELEMENTS, _spec([32, 4], "ceil_div(m, 4)", [("h", None), ("n", "m")]), "flip_half", "__half", 4),
}  # fmt: skip

REFUSED: dict[str, tuple[str, str]] = {
    "a-copy-not-a-swap": (
        UPPER_ONE_TEMP.replace("        mat[i * m + k] = keep;\n", ""),
        "does not swap two elements",
    ),
    "not-mirror-images": (
        UPPER_ONE_TEMP.replace("mat[i * m + k]", "mat[i * m + k + 1]"),
        "not mirror images",
    ),
    "two-sizes": (
        UPPER_ONE_TEMP.replace("int m)", "int m, int m2)").replace("i < m &&", "i < m2 &&"),
        "the guard is not a triangle",
    ),
    "no-triangle": (UPPER_ONE_TEMP.replace(" && i > k", ""), "the guard is not a triangle"),
    "two-arrays": (
        UPPER_ONE_TEMP.replace("float *mat, int m", "float *mat, float *out, int m").replace(
            "mat[i * m + k] = keep", "out[i * m + k] = keep"
        ),
        "does not swap two elements of one array",
    ),
    "a-non-swap-statement": (
        UPPER_ONE_TEMP.replace("float keep", "keep_count++;\n        float keep"),
        "not a load into a temporary or a store",
    ),
}


def _request(source: str, launch: LaunchContext) -> RewriteRequest:
    return RewriteRequest(source=source, language="cuda", transform="coalesce-access", launch=launch)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_positive_forms_get_the_tile_pair_launch(name: str) -> None:
    source, launch, *_ = FORMS[name]
    req = _request(source, launch)
    assert transpose_inplace.applies(req) is None, transpose_inplace.applies(req)
    [cand] = transpose_inplace.propose(req)
    assert cand.source.count("[32][33]") == 2 and "__syncthreads();" in cand.source
    assert cand.launch is not None and cand.launch.block == [32, 8]
    assert cand.launch.grid == ["ceil_div(m, 32)", "ceil_div(m, 32)"]


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_forms_say_why(name: str) -> None:
    source, why = REFUSED[name]
    launch = FORMS["upper-one-temp"][1]
    reason = transpose_inplace.applies(_request(source, launch))
    assert reason is not None and why in reason, reason
    assert transpose_inplace.propose(_request(source, launch)) == []


def test_registered_for_coalesce_access_and_in_the_catalog() -> None:
    from knowledge.transforms import catalog

    assert RECIPES["transpose-inplace"] is transpose_inplace.RECIPE
    assert transpose_inplace.RECIPE in recipes_for("coalesce-access", "cuda")
    assert "transpose-inplace" in catalog()["coalesce-access"].recipes


@pytest.mark.parametrize("name", sorted(FORMS))
def test_rewrite_swaps_what_the_original_swaps(name: str, tmp_path: Path) -> None:
    source, launch, kernel, element, block_y = FORMS[name]
    [cand] = transpose_inplace.propose(_request(source, launch))
    block_x = 16 if block_y == 16 else 32
    cases = []
    for side in (5, 33, 70):
        original = ((-(-side // block_x), -(-side // block_y)), (block_x, block_y))
        tiles = -(-side // 32)
        cases.append(
            Case((Buf(element, side * side), str(side)), original, ((tiles, tiles), (32, 8)), f"n={side}")
        )
    assert_same(tmp_path, source, cand.source, kernel, cases, rtol=0.0, atol=0.0)


def test_candidates_compile(tmp_path: Path) -> None:
    sources = {}
    for name, (source, launch, *_) in FORMS.items():
        [cand] = transpose_inplace.propose(_request(source, launch))
        sources[name.replace("-", "_")] = cand.source
    assert_compiled(nvcc_compile(sources, tmp_path))


FLAT_1D = """
__global__ void flip_flat(float *q, int n) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int col = g % n;
    int row = g / n;
    if (row < n && col < n && row < col) {
        float t = q[row * n + col];
        q[row * n + col] = q[col * n + row];
        q[col * n + row] = t;
    }
}
"""
FLAT_SPEC = launch_context(
    {"grid": ["ceil_div(m * m, 256)"], "block": [256], "args": [{"name": "q"}, {"name": "n", "value": "m"}]}
)


def test_the_one_d_form_with_div_and_mod_gets_the_tile_pairs(tmp_path: Path) -> None:
    req = _request(FLAT_1D, FLAT_SPEC)
    [cand] = transpose_inplace.propose(req)
    assert cand.launch is not None and cand.launch.grid == ["ceil_div(m, 32)", "ceil_div(m, 32)"]
    cases = [
        Case(
            (Buf("float", s * s), str(s)),
            ((-(-s * s // 256),), (256, 1)),
            ((-(-s // 32),) * 2, (32, 8)),
            f"n={s}",
        )
        for s in (5, 33, 70)
    ]
    assert_same(tmp_path, FLAT_1D, cand.source, "flip_flat", cases, rtol=0.0, atol=0.0)
    assert_compiled(nvcc_compile({"flip_flat": cand.source}, tmp_path))


def test_the_one_d_form_with_two_sizes_is_refused() -> None:
    source = FLAT_1D.replace("int row = g / n;", "int row = g / w;").replace("int n)", "int n, int w)")
    reason = transpose_inplace.applies(_request(source, FLAT_SPEC))
    assert reason is not None and "is not a thread index" in reason, reason
