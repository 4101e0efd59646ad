"""async-copy on textbook shared-memory tiled loops (PMPP ch. 5 tiled matmul and its variants).

Accepted kernels are checked on the parse tree (two stages, cp.async, the wait before the barrier),
built with nvcc for sm_90 (the PTX holds cp.async), and run block by block on the CPU
(``cuda_blocks.py``, where the helper copies synchronously: the stage bookkeeping and every barrier
are what is tested) against the original on sizes that are not tile multiples where the kernel allows.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from perfagent.rewrite.base import RewriteRequest
from perfagent.rewrite.recipes import async_copy
from profilers.process import run_command
from tests.rewrite import cuda_blocks
from tests.rewrite.cuda_blocks import Buf, Case
from tests.rewrite.helpers import assert_clean_cuda, assert_compiled, nvcc_compile, nvcc_or_skip

PMPP_GUARDED = """
#define TILE 16
__global__ void matmul(const float *A, const float *B, float *C, int N)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int ph = 0; ph < (N + TILE - 1) / TILE; ++ph) {
        if (row < N && ph * TILE + tx < N)
            As[ty][tx] = A[row * N + ph * TILE + tx];
        else
            As[ty][tx] = 0.0f;
        Bs[ty][tx] = (ph * TILE + ty < N && col < N) ? B[(ph * TILE + ty) * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < N && col < N)
        C[row * N + col] = acc;
}
"""
PMPP_SQUARE = """
#define TILE_WIDTH 16
__global__ void MatrixMulKernel(float *Md, float *Nd, float *Pd, int Width)
{
    __shared__ float Mds[TILE_WIDTH][TILE_WIDTH];
    __shared__ float Nds[TILE_WIDTH][TILE_WIDTH];
    int bx = blockIdx.x; int by = blockIdx.y;
    int tx = threadIdx.x; int ty = threadIdx.y;
    int Row = by * TILE_WIDTH + ty;
    int Col = bx * TILE_WIDTH + tx;
    float Pvalue = 0;
    for (int m = 0; m < Width / TILE_WIDTH; ++m) {
        Mds[ty][tx] = Md[Row * Width + (m * TILE_WIDTH + tx)];
        Nds[ty][tx] = Nd[(m * TILE_WIDTH + ty) * Width + Col];
        __syncthreads();
        for (int k = 0; k < TILE_WIDTH; ++k)
            Pvalue += Mds[ty][k] * Nds[k][tx];
        __syncthreads();
    }
    Pd[Row * Width + Col] = Pvalue;
}
"""
DGEMM_K_STEP_MULTI_ROW = """
#define BM 32
#define BK 8
__global__ void dgemm_rows(const double *A, const double *B, double *C, int M, int N, int K)
{
    __shared__ double As[BM][BK];
    __shared__ double Bs[BK][BM];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row0 = blockIdx.y * BM, col = blockIdx.x * BM + tx;
    double acc[4] = {0.0, 0.0, 0.0, 0.0};
    for (int t = 0; t < K; t += BK) {
        for (int r = 0; r < BM; r += 8)
            As[ty + r][tx % BK] = A[(row0 + ty + r) * K + t + tx % BK];
        Bs[ty][tx] = B[(t + ty) * N + col];
        __syncthreads();
        for (int k = 0; k < BK; ++k)
            for (int r = 0; r < 4; ++r)
                acc[r] += As[ty + 8 * r][k] * Bs[k][tx];
        __syncthreads();
    }
    for (int r = 0; r < 4; ++r)
        C[(row0 + ty + 8 * r) * N + col] = acc[r];
}
"""

ACCEPTED = {
    # name: (source, kernel, cases)
    "pmpp-guarded": (
        PMPP_GUARDED,
        "matmul",
        [
            Case((Buf("float", n * n), Buf("float", n * n), Buf("float", n * n), str(n)), g, g)
            for n, g in ((37, ((3, 3), (16, 16))), (16, ((1, 1), (16, 16))))
        ],
    ),
    "pmpp-square-unguarded": (
        PMPP_SQUARE,
        "MatrixMulKernel",
        [
            Case(
                (Buf("float", 32 * 32), Buf("float", 32 * 32), Buf("float", 32 * 32), "32"),
                ((2, 2), (16, 16)),
                ((2, 2), (16, 16)),
            )
        ],
    ),
    "dgemm-k-step-multi-row": (
        DGEMM_K_STEP_MULTI_ROW,
        "dgemm_rows",
        [
            Case(
                (Buf("double", 64 * 24), Buf("double", 24 * 64), Buf("double", 64 * 64), "64", "64", "24"),
                ((2, 2), (32, 8)),
                ((2, 2), (32, 8)),
            )
        ],
    ),
}


def _request(source: str, kernel: str | None = None) -> RewriteRequest:
    return RewriteRequest(
        source=textwrap.dedent(source).lstrip("\n"), language="cuda", transform="async-copy", kernel=kernel
    )


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_tiled_loops_get_two_stages_filled_one_tile_ahead(name: str) -> None:
    source, kernel, _cases = ACCEPTED[name]
    req = _request(source, kernel)
    assert async_copy.applies(req) is None
    [cand] = async_copy.propose(req)
    assert_clean_cuda(cand.source)
    text = cand.source
    assert text.count("[2][") >= 2  # both tiles got a stage dimension
    assert "perfagent_cp_async(&" in text and "cp.async.wait_group 1" in text
    loop = text[text.index("for (", text.index("perfagent_cp_async_commit();\n")) :]
    # inside the loop: issue next, commit, wait, barrier, compute, barrier, flip
    order = ["perfagent_load(perfagent_step(", "perfagent_cp_async_commit()", "perfagent_cp_async_wait_prior_1()",
             "__syncthreads()", "__syncthreads()", "perfagent_stage ^= 1"]  # fmt: skip
    at = 0
    for step in order:
        at = loop.index(step, at) + 1


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_double_buffered_loops_compute_what_the_original_does(name: str, tmp_path: Path) -> None:
    source, kernel, cases = ACCEPTED[name]
    [cand] = async_copy.propose(_request(source, kernel))
    cuda_blocks.assert_same(tmp_path, textwrap.dedent(source), cand.source, kernel, cases, rtol=0.0, atol=0.0)


def test_candidates_compile_and_issue_cp_async_in_ptx(tmp_path: Path) -> None:
    sources = {
        name: async_copy.propose(_request(src, k))[0].source for name, (src, k, _c) in ACCEPTED.items()
    }
    assert_compiled(nvcc_compile(sources, tmp_path))
    nvcc = nvcc_or_skip()
    ptx = tmp_path / "guarded.ptx"
    built = run_command(
        [nvcc, "-arch=sm_90", "-ptx", str(tmp_path / "pmpp-guarded.cu"), "-o", str(ptx)], timeout_s=180
    )
    assert built.ok, built.tail()
    text = ptx.read_text()
    assert "cp.async.ca.shared.global" in text and "cp.async.wait_group 1" in text


REFUSED = {
    "if without else": (
        PMPP_GUARDED.replace("        else\n            As[ty][tx] = 0.0f;\n", ""),
        "if without else on line 10",
    ),
    "compute writes the tile": (
        PMPP_SQUARE.replace(
            "Pvalue += Mds[ty][k] * Nds[k][tx];",
            "Pvalue += Mds[ty][k] * Nds[k][tx];\n            Mds[ty][k] = 0;",
        ),
        "the compute phase writes a staged array on line 17",
    ),
    "converting load": (
        PMPP_SQUARE.replace("float *Md,", "const __half *Md,").replace(
            "Mds[ty][tx] = Md[Row * Width + (m * TILE_WIDTH + tx)];",
            "Mds[ty][tx] = __half2float(Md[Row * Width + (m * TILE_WIDTH + tx)]);",
        ),
        "is not an element of a pointer parameter",
    ),
    "one barrier": (
        PMPP_SQUARE.replace("        __syncthreads();\n    }", "    }"),
        "body is not loads; __syncthreads(); compute; __syncthreads();",
    ),
    "break in compute": (
        PMPP_SQUARE.replace(
            "        __syncthreads();\n    }",
            "        if (Pvalue > 1e30f) break;\n        __syncthreads();\n    }",
        ),
        "would skip the stage flip",
    ),
    "two stages too big": (
        PMPP_SQUARE.replace("#define TILE_WIDTH 16", "#define TILE_WIDTH 64"),
        "over 48 KiB",
    ),
    "no tiles": (
        """
        __global__ void axpy(const float *x, float *y, float a, int n)
        {
            for (int i = threadIdx.x; i < n; i += blockDim.x) y[i] += a * x[i];
        }
        """,
        "no static __shared__ array",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_loops_say_why(name: str) -> None:
    source, reason = REFUSED[name]
    req = _request(source)
    why = async_copy.applies(req)
    assert why is not None and reason in why, why
    assert async_copy.propose(req) == []
