"""permute-tile (coalesce-access, smem-tiling): flat-index permutes that move the innermost dimension.

Own forms (issue 23: not the measuring set's kernel): a float NCHW -> NHWC copy over the output with
an early return (4-D: two digits left for grid z), a templated rank-3 reversal ``<T, 2, 1, 0>`` whose
strides sit in local arrays indexed by the template arguments, in a grid-stride loop with a ``long
long`` index and an ``__ldg`` read, and an ``int`` scatter that walks the *input* and writes transposed rows (``i / W / H``).
Each runs against its original on the CPU block emulator (barriers honoured) on shapes that are not
multiples of the tile, and compiles with nvcc. A ``__half`` NHWC -> NCHW copy guarded by ``if (o < total) {...}``
with the size computed between the index and the guard covers the other guard form. Refused forms name the reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.rewrite.base import LaunchContext, RewriteRequest, launch_context
from perfagent.rewrite.recipes import RECIPES, permute_tile, recipes_for
from tests.rewrite.cuda_blocks import Buf, Case, assert_same, run
from tests.rewrite.helpers import assert_compiled, nvcc_compile

NCHW_TO_NHWC = """
__global__ void nchw_to_nhwc(const float *x, float *y, int N, int C, int H, int W)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N * C * H * W) return;
    int c = i % C;
    int w = (i / C) % W;
    int h = (i / C / W) % H;
    int n = i / C / W / H;
    y[i] = x[((n * C + c) * H + h) * W + w];
}
"""
REVERSE3 = """
template <typename T, int P0, int P1, int P2>
__global__ void reverse3(const T *in, T *out, long long count, int a, int b, int c)
{
    long long dims[3] = {a, b, c};
    long long stride_in[3];
    stride_in[2] = 1;
    stride_in[1] = c;
    stride_in[0] = b * c;
    long long odims[3];
    odims[0] = dims[P0];
    odims[1] = dims[P1];
    odims[2] = dims[P2];
    for (long long o = blockIdx.x * blockDim.x + threadIdx.x; o < count; o += blockDim.x * gridDim.x) {
        long long q = o;
        long long k2 = q % odims[2];
        q /= odims[2];
        long long k1 = q % odims[1];
        long long k0 = q / odims[1];
        long long from = k0 * stride_in[P0] + k1 * stride_in[P1] + k2 * stride_in[P2];
        out[o] = __ldg(&in[from]);
    }
}

template __global__ void reverse3<float, 2, 1, 0>(const float *, float *, long long, int, int, int);
"""
SCATTER_ROWS = """
__global__ void scatter_rows(const int *src, int *dst, int total, int W, int H)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= total) return;
    int x = i % W;
    int y = (i / W) % H;
    int b = i / W / H;
    dst[(b * W + x) * H + y] = src[i];
}
"""

NHWC_TO_NCHW_HALF = """
#include <cuda_fp16.h>
__global__ void nhwc_to_nchw(const __half *src, __half *dst, int B, int H, int W, int C)
{
    long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long total = (long long)B * C * H * W;
    if (o < total) {
        long long w = o % W;
        long long h = (o / W) % H;
        long long c = (o / W / H) % C;
        long long b = o / W / H / C;
        dst[o] = src[((b * H + h) * W + w) * C + c];
    }
}
"""


def _spec(total: str, args: list[str], block: int = 128, grid: str | None = None) -> LaunchContext:
    return launch_context(
        {
            "grid": [grid or f"ceil_div({total}, {block})"],
            "block": [block],
            "args": [{"name": n, "value": n if n.isupper() or n in ("a", "b", "c") else None} for n in args]
            if total != "count"
            else [
                {"name": n, "value": {"count": "a * b * c"}.get(n, n if n in ("a", "b", "c") else None)}
                for n in args
            ],
        }
    )


FORMS: dict[str, tuple[str, LaunchContext, str, str | None]] = {
    "nchw-to-nhwc-float": (
        NCHW_TO_NHWC,
        _spec("N * C * H * W", ["x", "y", "N", "C", "H", "W"]),
        "nchw_to_nhwc",
        None,
    ),
    "reverse3-template": (
        REVERSE3,
        _spec("count", ["in", "out", "count", "a", "b", "c"], 256, "32 * sm_count"),
        "reverse3<float, 2, 1, 0>",
        "reverse3<float, 2, 1, 0>",
    ),
    "nhwc-to-nchw-half-if-block": (
        NHWC_TO_NCHW_HALF,
        launch_context(
            {
                "grid": ["ceil_div(B * C * H * W, 256)"],
                "block": [256],
                "args": [
                    {"name": "src"},
                    {"name": "dst"},
                    {"name": "B", "value": "B"},
                    {"name": "H", "value": "H"},
                    {"name": "W", "value": "W"},
                    {"name": "C", "value": "C"},
                ],
            }
        ),
        "nhwc_to_nchw",
        None,
    ),
    "scatter-rows-int": (
        SCATTER_ROWS,
        launch_context(
            {
                "grid": ["ceil_div(T, 128)"],
                "block": [128],
                "args": [
                    {"name": "src"},
                    {"name": "dst"},
                    {"name": "total", "value": "T"},
                    {"name": "W", "value": "W"},
                    {"name": "H", "value": "H"},
                ],
            }
        ),
        "scatter_rows",
        None,
    ),
}


def _request(name: str, source: str | None = None, transform: str = "coalesce-access") -> RewriteRequest:
    text, launch, _, kernel = FORMS[name]
    return RewriteRequest(
        source=source or text, language="cuda", transform=transform, launch=launch, kernel=kernel
    )


REFUSED: dict[str, tuple[str, str, str]] = {
    "innermost-kept": (
        "nchw-to-nhwc-float",
        NCHW_TO_NHWC.replace("x[((n * C + c) * H + h) * W + w]", "x[((n * W + w) * H + h) * C + c]"),
        "contiguous along the same digit",
    ),
    "not-a-copy": ("scatter-rows-int", SCATTER_ROWS.replace("= src[i]", "= 2 * src[i]"), "not a copy"),
    "a-branch": (
        "scatter-rows-int",
        SCATTER_ROWS.replace("    int b = i / W / H;\n", "    int b = i / W / H;\n    if (b > 3) b = 3;\n"),
        "(if statement): only declarations and assignments",
    ),
    "two-decompositions": (
        "scatter-rows-int",
        SCATTER_ROWS.replace("int y = (i / W) % H;", "int y = (i / H) % W;"),
        "two different decompositions",
    ),
    "no-instantiation": ("reverse3-template", REVERSE3, "no instantiation named"),
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_positive_forms_get_the_tiled_body_and_a_3d_grid(name: str) -> None:
    req = _request(name)
    assert permute_tile.applies(req) is None, permute_tile.applies(req)
    cands = permute_tile.propose(req)
    assert [c.launch.block if c.launch else None for c in cands] == [[32, 8], [32, 4]]
    assert all("__syncthreads();" in c.source and "perfagent_tile[32][33]" in c.source for c in cands)
    assert cands[0].launch is not None and len(cands[0].launch.grid) == 3


def test_the_template_body_is_pinned_to_its_instantiation() -> None:
    [cand, _] = permute_tile.propose(_request("reverse3-template"))
    assert 'static_assert(P0 == 2 && P1 == 1 && P2 == 0, "permute-tile' in cand.source


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_forms_say_why(name: str) -> None:
    form, source, why = REFUSED[name]
    req = _request(form, source)
    if name == "no-instantiation":
        req = req.model_copy(update={"kernel": None})
    reason = permute_tile.applies(req)
    assert reason is not None and why in reason, reason


def test_registered_for_coalescing_and_tiling() -> None:
    from knowledge.transforms import catalog

    assert RECIPES["permute-tile"] is permute_tile.RECIPE
    for transform in ("coalesce-access", "smem-tiling"):
        assert permute_tile.RECIPE in recipes_for(transform, "cuda")
        assert "permute-tile" in catalog()[transform].recipes


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _cases(name: str, rows: int) -> list[Case]:
    out = []
    if name == "nchw-to-nhwc-float":
        for n, c, h, w in ((2, 5, 3, 7), (1, 33, 2, 40)):
            total = n * c * h * w
            args = (Buf("float", total), Buf("float", total), str(n), str(c), str(h), str(w))
            new = ((_ceil(w, 32), _ceil(c, 32), n * h), (32, rows))
            out.append(Case(args, ((_ceil(total, 128),), (128, 1)), new, f"{n}x{c}x{h}x{w}"))
    elif name == "reverse3-template":
        for a, b, c in ((3, 5, 37), (2, 40, 1)):
            total = a * b * c
            args = (Buf("float", total), Buf("float", total), f"{total}LL", str(a), str(b), str(c))
            new = ((_ceil(c, 32), _ceil(a, 32), b), (32, rows))
            out.append(Case(args, ((3,), (64, 1)), new, f"{a}x{b}x{c}"))
    elif name == "nhwc-to-nchw-half-if-block":
        for b, h, w, c in ((2, 3, 37, 5), (1, 2, 3, 70)):
            total = b * h * w * c
            args = (Buf("__half", total), Buf("__half", total), str(b), str(h), str(w), str(c))
            new = ((_ceil(c, 32), _ceil(w, 32), h * b), (32, rows))
            out.append(Case(args, ((_ceil(total, 256),), (256, 1)), new, f"{b}x{h}x{w}x{c}"))
    else:
        for w, h, batches in ((37, 5, 3), (3, 70, 2)):
            total = w * h * batches
            args = (Buf("int", total), Buf("int", total), str(total), str(w), str(h))
            new = ((_ceil(w, 32), _ceil(h, 32), batches), (32, rows))
            out.append(Case(args, ((_ceil(total, 128),), (128, 1)), new, f"{w}x{h}x{batches}"))
    return out


@pytest.mark.parametrize("name", sorted(FORMS))
def test_rewrite_moves_what_the_original_moves(name: str, tmp_path: Path) -> None:
    text, _, kernel, _ = FORMS[name]
    for cand in permute_tile.propose(_request(name)):
        rows = cand.launch.block[1] if cand.launch else 8
        assert_same(tmp_path, text, cand.source, kernel, _cases(name, int(rows)), rtol=0.0, atol=0.0)


def test_the_emulation_catches_a_missing_barrier(tmp_path: Path) -> None:
    text, _, kernel, _ = FORMS["nchw-to-nhwc-float"]
    cand = permute_tile.propose(_request("nchw-to-nhwc-float"))[0]
    broken = cand.source.replace("        __syncthreads();\n", "", 1)
    assert broken != cand.source
    ok, _ = run(tmp_path, text, broken, kernel, _cases("nchw-to-nhwc-float", 8), rtol=0.0, atol=0.0)
    assert not ok


def test_candidates_compile(tmp_path: Path) -> None:
    sources = {name.replace("-", "_"): permute_tile.propose(_request(name))[0].source for name in FORMS}
    assert_compiled(nvcc_compile(sources, tmp_path))
