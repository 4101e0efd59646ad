"""thread-coarsening on textbook one-element-per-thread kernels (PMPP ch. 2-3, the Best Practices Guide).

Each accepted kernel is checked on the parse tree (the loop and the re-tuned grid), built with nvcc, and
run block by block on the CPU (``cuda_blocks.py``) at the original grid against every candidate at its
new grid (the launch override evaluated with small device attributes, so grid-stride loops really
loop), every output and guard word compared.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from perfagent.rewrite.base import LaunchContext, RewriteRequest
from perfagent.rewrite.recipes import thread_coarsening
from perfagent.rewrite.recipes_backend import RecipesRewriter
from perfagent.workloads.expr import evaluate
from tests.rewrite import cuda_blocks
from tests.rewrite.cuda_blocks import Buf, Case
from tests.rewrite.helpers import assert_clean_cuda, assert_compiled, nvcc_compile

DEVICE = {"sm_count": 2, "max_threads_per_sm": 256, "max_threads_per_block": 1024, "warp_size": 32}
"""Small device attributes: one wave is a handful of blocks, so the grid-stride loop walks several times."""

GELU_EARLY_EXIT = """
__global__ void gelu(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    y[i] = 0.5f * v * (1.0f + tanhf(0.79788456f * (v + 0.044715f * v * v * v)));
}
"""
SAXPY_SIZE_T_BLOCK_GUARD = """
__global__ void saxpy(size_t n, float a, const float *__restrict__ x, float *__restrict__ y)
{
    const float scale = a;
    size_t idx = threadIdx.x + (size_t)blockIdx.x * blockDim.x;
    if (idx < n) {
        float t = scale * x[idx];
        y[idx] = t + y[idx];
    }
}
"""
BIAS_BROADCAST_HALF = """
#include <cuda_fp16.h>
__global__ void add_bias_rows(const __half *x, const float *bias, float *out, int rows, int cols)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols)
        out[row * cols + col] = __half2float(x[row * cols + col]) + bias[col];
}
"""
CLAMP_MULTI_RETURN = """
__global__ void clamp_scale(float *data, float lo, float hi, unsigned n)
{
    unsigned i = blockDim.x * blockIdx.x + threadIdx.x;
    if (n <= i) return;
    float v = data[i];
    if (v != v) { data[i] = 0.0f; return; }
    data[i] = v < lo ? lo : (v > hi ? hi : v) * 2.0f;
}
"""

SCALE_LITERAL_BLOCK = """
#define BLOCK 64
__global__ void axpb(float *y, const float *x, float a, float b, int n)
{
    int idx = blockIdx.x * BLOCK + threadIdx.x;
    if (idx < n) y[idx] = a * x[idx] + b;
}
"""

ACCEPTED = {
    "literal-block-extent": (
        SCALE_LITERAL_BLOCK,
        "axpb",
        (["ceil_div(n, 64)"], [64]),
        lambda p: (Buf("float", p["n"]), Buf("float", p["n"]), "2.0f", "0.5f", str(p["n"])),
        [{"n": 1000}],
    ),
    # name: (source, kernel, launch grid/block, arguments, shapes to run (params))
    "gelu-early-exit": (
        GELU_EARLY_EXIT,
        "gelu",
        (["ceil_div(n, 64)"], [64]),
        lambda p: (Buf("float", p["n"]), Buf("float", p["n"]), str(p["n"])),
        [{"n": 1000}, {"n": 64}, {"n": 1}],
    ),
    "saxpy-size_t-block-guard": (
        SAXPY_SIZE_T_BLOCK_GUARD,
        "saxpy",
        (["(n + 127) / 128"], [128]),
        lambda p: (f"(size_t){p['n']}", "1.5f", Buf("float", p["n"]), Buf("float", p["n"])),
        [{"n": 3001}, {"n": 127}],
    ),
    "bias-broadcast-half-2d": (
        BIAS_BROADCAST_HALF,
        "add_bias_rows",
        (["ceil_div(cols, 16)", "ceil_div(rows, 8)"], [16, 8]),
        lambda p: (
            Buf("__half", p["rows"] * p["cols"]),
            Buf("float", p["cols"]),
            Buf("float", p["rows"] * p["cols"]),
            str(p["rows"]),
            str(p["cols"]),
        ),
        [{"rows": 37, "cols": 45}, {"rows": 8, "cols": 16}],
    ),
    "clamp-two-returns-unsigned": (
        CLAMP_MULTI_RETURN,
        "clamp_scale",
        (["ceil_div(n, 32)"], [32]),
        lambda p: (Buf("float", p["n"]), "-0.5f", "0.5f", f"{p['n']}u"),
        [{"n": 777}],
    ),
}


def _request(source: str, kernel: str, geometry: tuple[list, list] | None) -> RewriteRequest:
    launch = LaunchContext(grid=geometry[0], block=geometry[1]) if geometry else None
    return RewriteRequest(
        source=source,
        language="cuda",
        transform="thread-coarsening",
        kernel=kernel,
        launch=launch,
        max_candidates=8,
    )


def _dims(exprs: list, params: dict[str, int]) -> tuple[int, ...]:
    return tuple(int(evaluate(e, {**params, **DEVICE})) for e in exprs)


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_kernels_get_chunks_and_grid_stride_with_a_smaller_grid(name: str) -> None:
    source, kernel, geometry, _args, _params = ACCEPTED[name]
    req = _request(source, kernel, geometry)
    assert thread_coarsening.applies(req) is None
    cands = thread_coarsening.propose(req)
    assert cands and len({c.id for c in cands}) == len(cands)
    for cand in cands:
        assert_clean_cuda(cand.source)
        assert cand.launch is not None and cand.launch.grid is not None and cand.launch.block is None
        assert "for (" in cand.source and cand.source != source
        if "chunk" in cand.parameters:
            assert f"* {cand.parameters['chunk']} + perfagent_chunk)" in cand.source
        else:
            assert "+= (" in cand.source and "gridDim." in cand.source and "sm_count" in str(cand.launch.grid)
    assert any("waves" in c.parameters for c in cands)  # every accepted kernel has a plain bound


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_coarsened_kernels_compute_what_the_original_does(name: str, tmp_path: Path) -> None:
    source, kernel, geometry, args, shapes = ACCEPTED[name]
    # chunk 4 and the grid-stride loop (chunks 8 and 2 differ from chunk 4 by one constant)
    for k, cand in enumerate(thread_coarsening.propose(_request(source, kernel, geometry))[:2]):
        assert cand.launch is not None and cand.launch.grid is not None
        cases = []
        for params in shapes:
            block = (*(int(b) for b in geometry[1]), 1)[:2]
            cases.append(
                Case(
                    args=args(params),
                    original=(_dims(geometry[0], params), block),  # type: ignore[arg-type]
                    rewritten=(_dims(cand.launch.grid, params), block),  # type: ignore[arg-type]
                    name=f"{name} {cand.parameters} {params}",
                )
            )
        sub = tmp_path / str(k)
        sub.mkdir()
        cuda_blocks.assert_same(sub, source, cand.source, kernel, cases, rtol=0.0, atol=0.0)


def test_every_candidate_compiles_with_nvcc(tmp_path: Path) -> None:
    sources = {}
    for name, (source, kernel, geometry, _a, _p) in ACCEPTED.items():
        for k, cand in enumerate(thread_coarsening.propose(_request(source, kernel, geometry))):
            sources[f"{name}_{k}"] = cand.source
    assert len(sources) >= 4 * len(ACCEPTED)
    assert_compiled(nvcc_compile(sources, tmp_path))


REFUSED = {
    "shared-memory reduction": (
        """
        __global__ void block_sum(const float *x, float *out, int n)
        {
            __shared__ float s[256];
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            s[threadIdx.x] = i < n ? x[i] : 0.0f;
            __syncthreads();
            if (threadIdx.x == 0) out[blockIdx.x] = s[0];
        }
        """,
        "__shared__ memory on line 3",
    ),
    "per-block output": (
        """
        __global__ void first_of_block(const float *x, float *out, int n)
        {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) out[blockIdx.x] = x[i];
        }
        """,
        "blockIdx.x on line 4 is used outside the global index i",
    ),
    "no bound check": (
        """
        __global__ void copy_exact(const float *x, float *y)
        {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            y[i] = x[i];
        }
        """,
        "line 4 runs before any bound check on i",
    ),
    "return inside a loop": (
        """
        __global__ void find_first(const int *x, int *pos, int n, int m)
        {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i >= n) return;
            for (int k = 0; k < m; ++k)
                if (x[i * m + k] < 0) { pos[i] = k; return; }
        }
        """,
        "return inside a loop or switch on line 6",
    ),
    "side effect before the guard": (
        """
        __global__ void counted(const float *x, float *y, int *calls, int n)
        {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            atomicAdd(calls, 1);
            if (i < n) y[i] = x[i];
        }
        """,
        "line 4 runs before any bound check on i",
    ),
    "thread index used for a lane test": (
        """
        __global__ void lanes(const float *x, float *y, int n)
        {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) y[i] = (threadIdx.x % 32 == 0) ? x[i] : 0.0f;
        }
        """,
        "threadIdx.x on line 4 is used outside the global index i",
    ),
    "block extent reassigned": (
        """
        __global__ void k(float *y, int n, int step)
        {
            int i = blockIdx.x * step + threadIdx.x;
            step = 0;
            if (i < n) y[i] = 1.0f;
        }
        """,
        "the block extent step of i is assigned on line 4",
    ),
    "no global index": (
        """
        __global__ void one_block(float *y, int n)
        {
            for (int i = threadIdx.x; i < n; i += blockDim.x) y[i] = 0.0f;
        }
        """,
        "no top-level global index",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_kernels_say_why_with_the_line(name: str) -> None:
    source, reason = REFUSED[name]
    req = _request(textwrap.dedent(source).lstrip("\n"), None, (["ceil_div(n, 256)"], [256]))  # type: ignore[arg-type]
    why = thread_coarsening.applies(req)
    assert why is not None and reason in why, why
    assert thread_coarsening.propose(req) == []


def test_without_a_launch_spec_there_is_no_grid_to_retune() -> None:
    req = _request(GELU_EARLY_EXIT, "gelu", None)
    why = thread_coarsening.applies(req)
    assert why is not None and "no launch spec" in why
    backend = RecipesRewriter()
    assert "no launch spec" in (backend.applies(req) or "")
    planned = backend.applies(_request(GELU_EARLY_EXIT, "gelu", (["ceil_div(n, 256)"], [256])))
    assert planned is None


def test_a_reassigned_index_gets_chunks_but_no_grid_stride_loop() -> None:
    source = """
    __global__ void odd(float *y, int n)
    {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= n) return;
        i = n - 1 - i;
        y[i] = 1.0f;
    }
    """
    cands = thread_coarsening.propose(_request(textwrap.dedent(source), "odd", (["ceil_div(n, 256)"], [256])))
    assert cands and all("chunk" in c.parameters for c in cands)
