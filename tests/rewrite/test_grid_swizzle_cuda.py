"""grid-swizzle-cuda on textbook 2-D tiled kernels: grouped block order, checked on the parse tree, with
nvcc, and block by block on the CPU (``cuda_blocks.py``) on grids whose last group is partial."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from perfagent.rewrite.base import LaunchContext, RewriteRequest
from perfagent.rewrite.recipes import grid_swizzle_cuda
from perfagent.rewrite.recipes_backend import RecipesRewriter
from tests.rewrite import cuda_blocks
from tests.rewrite.cuda_blocks import Buf, Case
from tests.rewrite.helpers import assert_clean_cuda, assert_compiled, nvcc_compile
from tests.rewrite.test_async_copy import PMPP_GUARDED

NAIVE_MATMUL = """
__global__ void sgemm_naive(int M, int N, int K, const float *A, const float *B, float *C)
{
    const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (y < M && x < N) {
        float tmp = 0.0f;
        for (int i = 0; i < K; ++i)
            tmp += A[y * K + i] * B[i * N + x];
        C[y * N + x] = tmp;
    }
}
"""
BATCHED_BMM = """
__global__ void bmm(const float *A, const float *B, float *C, int M, int N, int K)
{
    int b = blockIdx.z;
    int row = blockIdx.y * 8 + threadIdx.y;
    int col = blockIdx.x * 8 + threadIdx.x;
    if (row >= M || col >= N) return;
    const float *a = A + (size_t)b * M * K;
    float s = 0.0f;
    for (int k = 0; k < K; ++k)
        s += a[row * K + k] * B[((size_t)b * K + k) * N + col];
    C[((size_t)b * M + row) * N + col] = s;
}
"""

ACCEPTED = {
    "pmpp-tiled": (
        PMPP_GUARDED,
        "matmul",
        [
            Case((Buf("float", 70 * 70), Buf("float", 70 * 70), Buf("float", 70 * 70), "70"), g, g)
            for g in [((5, 5), (16, 16))]
        ],
    ),
    "naive-sgemm": (
        NAIVE_MATMUL,
        "sgemm_naive",
        [
            Case(("37", "45", "9", Buf("float", 37 * 9), Buf("float", 9 * 45), Buf("float", 37 * 45)), g, g)
            for g in [((6, 10), (8, 4))]
        ],
    ),
    "batched-bmm": (
        BATCHED_BMM,
        "bmm",
        [
            Case(
                (
                    Buf("float", 2 * 20 * 5),
                    Buf("float", 2 * 5 * 30),
                    Buf("float", 2 * 20 * 30),
                    "20",
                    "30",
                    "5",
                ),
                g,
                g,
            )
            for g in [((4, 3, 2), (8, 8))]
        ],
    ),
}


def _request(source: str, kernel: str | None = None, grid: list | None = None) -> RewriteRequest:
    launch = LaunchContext(grid=grid, block=[16, 16]) if grid else None
    return RewriteRequest(
        source=textwrap.dedent(source).lstrip("\n"),
        language="cuda",
        transform="grid-swizzle",
        kernel=kernel,
        launch=launch,
    )


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_tiled_kernels_get_grouped_block_orders(name: str, tmp_path: Path) -> None:
    source, kernel, cases = ACCEPTED[name]
    req = _request(source, kernel)
    assert grid_swizzle_cuda.applies(req) is None
    cands = grid_swizzle_cuda.propose(req)
    assert [c.parameters["GROUP"] for c in cands] == [8, 4, 16]
    for cand in cands:
        assert_clean_cuda(cand.source)
        body = cand.source[cand.source.index("perfagent_bx = ") :]
        assert "blockIdx.x" not in body and "blockIdx.y" not in body  # every use goes through the remap
        assert cand.launch is None
    # grids of 5 and 10 block rows: the last group of 4 or 8 is partial
    cuda_blocks.assert_same(
        tmp_path, textwrap.dedent(source), cands[1].source, kernel, cases, rtol=0.0, atol=0.0
    )


def test_candidates_compile(tmp_path: Path) -> None:
    sources = {
        f"{n}_{k}": c.source
        for n, (s, kn, _c) in ACCEPTED.items()
        for k, c in enumerate(grid_swizzle_cuda.propose(_request(s, kn)))
    }
    assert_compiled(nvcc_compile(sources, tmp_path))


REFUSED = {
    "transpose reads each element once": (
        """
        __global__ void transpose(float *out, const float *in, int w, int h)
        {
            int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
            for (int j = 0; j < 32; j += 8)
                if (x < w && y + j < h) out[x * h + y + j] = in[(y + j) * w + x];
        }
        """,
        "reads each element once",
    ),
    "1-D grid": (
        """
        __global__ void rows(const float *a, float *s, int n, int m)
        {
            int r = blockIdx.x * blockDim.x + threadIdx.x;
            for (int c = 0; c < m; ++c) s[r] += a[r * m + c];
        }
        """,
        "blockIdx.y is not used",
    ),
    "already walks the grid": (
        NAIVE_MATMUL.replace(
            "const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;",
            "const unsigned x = (blockIdx.x + gridDim.x / 2) % gridDim.x * blockDim.x + threadIdx.x;",
        ),
        "gridDim.x on line 3",
    ),
    "device helper reads blockIdx": (
        "__device__ int tile_row() { return blockIdx.y * 16; }\n"
        + NAIVE_MATMUL.lstrip("\n").replace("blockIdx.y * blockDim.y", "tile_row()"),
        "device function tile_row reads blockIdx",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_kernels_say_why(name: str) -> None:
    source, reason = REFUSED[name]
    why = grid_swizzle_cuda.applies(_request(source))
    assert why is not None and reason in why, why


def test_a_one_dimensional_launch_spec_is_refused_and_triton_still_has_its_own_recipe() -> None:
    why = grid_swizzle_cuda.applies(_request(NAIVE_MATMUL, grid=["ceil_div(N, 16)"]))
    assert why is not None and "1-D" in why
    assert (
        RecipesRewriter().applies(_request(NAIVE_MATMUL, grid=["ceil_div(N, 16)", "ceil_div(M, 16)"])) is None
    )
