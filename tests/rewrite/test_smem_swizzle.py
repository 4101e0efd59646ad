"""smem-swizzle on textbook shared-memory tiles (the CUDA transpose sample, a 3-D staged tile, a double
tile): XOR-swizzled columns, checked on the parse tree, with nvcc, by a bank count, and block by block
on the CPU (``cuda_blocks.py``) against the original."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from perfagent.rewrite.base import RewriteRequest
from perfagent.rewrite.recipes import smem_swizzle
from tests.rewrite import cuda_blocks
from tests.rewrite.cuda_blocks import Buf, Case
from tests.rewrite.helpers import assert_clean_cuda, assert_compiled, nvcc_compile

TRANSPOSE = """
#define TILE_DIM 32
#define BLOCK_ROWS 8
__global__ void transposeCoalesced(float *odata, const float *idata, int width, int height)
{
    __shared__ float tile[TILE_DIM][TILE_DIM];
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < width && y + j < height)
            tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < height && y + j < width)
            odata[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}
"""
STAGED_3D_DOUBLE = """
constexpr int T = 16;
__global__ void col_sums(const double *in, double *out, int rows)
{
    __shared__ double buf[2][T][T];
    const int c = blockIdx.x * T + threadIdx.x;
    double acc = 0.0;
    for (int r0 = 0; r0 < rows; r0 += T) {
        int s = (r0 / T) & 1;
        buf[s][threadIdx.x][threadIdx.y] = in[(r0 + threadIdx.y) * gridDim.x * T + c];
        __syncthreads();
        if (threadIdx.y == 0)
            for (int k = 0; k < T; ++k) acc += buf[s][threadIdx.x][k];
        __syncthreads();
    }
    if (threadIdx.y == 0) out[c] = acc;
}
"""

ACCEPTED = {
    "transpose-sample": (
        TRANSPOSE,
        "transposeCoalesced",
        [
            Case(
                (Buf("float", 70 * 45), Buf("float", 45 * 70), "45", "70"),
                ((2, 3), (32, 8)),
                ((2, 3), (32, 8)),
            )
        ],
    ),
    "staged-3d-double": (
        STAGED_3D_DOUBLE,
        "col_sums",
        [Case((Buf("double", 48 * 32), Buf("double", 32), "48"), ((2, 1), (16, 16)), ((2, 1), (16, 16)))],
    ),
}


def _request(source: str, kernel: str | None = None) -> RewriteRequest:
    return RewriteRequest(
        source=textwrap.dedent(source).lstrip("\n"), language="cuda", transform="smem-swizzle", kernel=kernel
    )


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_tiles_get_xor_swizzled_columns(name: str, tmp_path: Path) -> None:
    source, kernel, cases = ACCEPTED[name]
    req = _request(source, kernel)
    assert smem_swizzle.applies(req) is None
    [cand] = smem_swizzle.propose(req)
    assert_clean_cuda(cand.source)
    assert (
        cand.source.count(" ^ ((") == source.count("tile[") + source.count("buf[") - 1
    )  # every use, not the declaration
    cuda_blocks.assert_same(tmp_path, textwrap.dedent(source), cand.source, kernel, cases, rtol=0.0, atol=0.0)


def test_a_warp_reading_a_swizzled_column_hits_32_banks() -> None:
    [cand] = smem_swizzle.propose(_request(TRANSPOSE))
    read = re.search(r"tile\[threadIdx\.x\]\[(.*?)\];", cand.source)
    assert read is not None
    expr = read.group(1).replace("threadIdx.x", "lane").replace("threadIdx.y", "ty")
    for ty, j in ((0, 0), (3, 8), (7, 24)):
        banks = {eval(expr, {"lane": lane, "ty": ty, "j": j}) % 32 for lane in range(32)}  # noqa: S307
        assert len(banks) == 32  # the original tile[lane][ty + j] puts all 32 lanes in one bank


def test_candidates_compile(tmp_path: Path) -> None:
    sources = {n: smem_swizzle.propose(_request(s, k))[0].source for n, (s, k, _c) in ACCEPTED.items()}
    assert_compiled(nvcc_compile(sources, tmp_path))


REFUSED = {
    "padded already": (
        TRANSPOSE.replace("tile[TILE_DIM][TILE_DIM]", "tile[TILE_DIM][TILE_DIM + 1]"),
        "not a power of two",
    ),
    "half elements": (
        TRANSPOSE.replace("__shared__ float tile", "__shared__ __half tile"),
        "2-byte elements",
    ),
    "address taken": (
        TRANSPOSE.replace("    __syncthreads();\n", "    __syncthreads();\n    float *p = &tile[0][0];\n"),
        "its address is taken",
    ),
    "flat tile": (
        """
        __global__ void k(float *o, const float *i)
        {
            __shared__ float s[1024];
            s[threadIdx.x] = i[threadIdx.x];
            __syncthreads();
            o[threadIdx.x] = s[1023 - threadIdx.x];
        }
        """,
        "not a static 2-D or deeper array",
    ),
    "no shared memory": ("__global__ void k(float *o) { o[threadIdx.x] = 0.0f; }", "no __shared__ array"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_tiles_say_why(name: str) -> None:
    source, reason = REFUSED[name]
    why = smem_swizzle.applies(_request(source))
    assert why is not None and reason in why, why
    assert smem_swizzle.propose(_request(source)) == []
