"""Batched naive matmul nests (``batch = blockIdx.z``) under smem-tiling and register-tiling (_matmul_batch).

Own forms (issue 23: not the measuring set's kernel): a float nest with ``&A[(size_t)b * sa]`` aliases,
``fmaf`` and the ``if (row < M && col < N) {...}`` guard; a ``__half`` nest with float accumulation,
``A + b * M * K`` aliases, an early return and a ``C`` subscript carrying its batch term. Every candidate
of both recipes runs against its original on the block-synchronous CPU emulator over a 3-D grid with
ragged M, N, K, and compiles with nvcc. Refused forms name why.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.rewrite.base import LaunchContext, RewriteRequest, launch_context
from perfagent.rewrite.recipes import register_tiling, smem_tiling
from tests.rewrite.cuda_blocks import Buf, Case, assert_same
from tests.rewrite.helpers import assert_compiled, nvcc_compile

FLOAT_ALIASES = """
__global__ void bmm_f32(const float *A, const float *B, float *C, int M, int N, int K, long long sa, long long sb, long long sc) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int b = blockIdx.z;
    const float *a = &A[(size_t)b * sa];
    const float *bb = &B[(size_t)b * sb];
    if (row < M && col < N) {
        float s = 0.0f;
        for (int k = 0; k < K; ++k)
            s = fmaf(a[row * K + k], bb[k * N + col], s);
        C[(size_t)b * sc + row * N + col] = s;
    }
}
"""
HALF_EARLY_RETURN = """
#include <cuda_fp16.h>
extern "C" __global__ void bmm_f16(int M, int N, int K, const __half *X, const __half *W, __half *Y) {
    const int item = blockIdx.z;
    const int c = threadIdx.x + blockIdx.x * blockDim.x;
    const int r = threadIdx.y + blockIdx.y * blockDim.y;
    const __half *x = X + item * M * K;
    const __half *w = W + item * K * N;
    if (r >= M || c >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; k++)
        acc += __half2float(x[r * K + k]) * __half2float(w[k * N + c]);
    Y[r * N + c + item * M * N] = __float2half(acc);
}
"""


def _spec(args: list[tuple[str, str | None]]) -> LaunchContext:
    return launch_context(
        {
            "grid": ["ceil_div(N, 8)", "ceil_div(M, 8)", "batch"],
            "block": [8, 8],
            "args": [{"name": n, "value": v} for n, v in args],
            "params": {"M": 33, "N": 40, "K": 19, "batch": 2},
        }
    )


FLOAT_SPEC = _spec(
    [
        ("A", None),
        ("B", None),
        ("C", None),
        ("M", "M"),
        ("N", "N"),
        ("K", "K"),
        ("sa", "M * K"),
        ("sb", "K * N"),
        ("sc", "M * N"),
    ]
)
HALF_SPEC = _spec([("M", "M"), ("N", "N"), ("K", "K"), ("X", None), ("W", None), ("Y", None)])
FORMS = {
    "float-aliases": (FLOAT_ALIASES, FLOAT_SPEC, "bmm_f32"),
    "half-early-return": (HALF_EARLY_RETURN, HALF_SPEC, "bmm_f16"),
}
RECIPES = {"smem-tiling": smem_tiling, "register-tiling": register_tiling}

REFUSED: dict[str, tuple[str, str]] = {
    "batch-read-in-the-epilogue": (
        FLOAT_ALIASES.replace("= s;", "= s * (float)b;"),
        "is used other than in the operands' batch offsets",
    ),
}


def _request(source: str, launch: LaunchContext, transform: str) -> RewriteRequest:
    return RewriteRequest(source=source, language="cuda", transform=transform, launch=launch)


@pytest.mark.parametrize("recipe", sorted(RECIPES))
@pytest.mark.parametrize("name", sorted(FORMS))
def test_batched_nests_keep_the_grid_z(name: str, recipe: str) -> None:
    source, launch, _ = FORMS[name]
    cands = RECIPES[recipe].propose(_request(source, launch, recipe))
    assert cands, RECIPES[recipe].applies(_request(source, launch, recipe))
    for cand in cands:
        assert cand.launch is not None and cand.launch.grid is not None and cand.launch.grid[2] == "batch"
        assert "= blockIdx.z;  // one 2-D problem per blockIdx.z" in cand.source


@pytest.mark.parametrize("name", ["batch-read-in-the-epilogue"])
def test_refused_batched_forms_say_why(name: str) -> None:
    source, why = REFUSED[name]
    reason = smem_tiling.applies(_request(source, FLOAT_SPEC, "smem-tiling"))
    assert reason is not None and "not a batch of 2-D problems either" in reason and why in reason, reason


def test_a_nest_without_a_z_grid_is_not_batched() -> None:
    launch = launch_context({"grid": ["ceil_div(N, 8)", "ceil_div(M, 8)"], "block": [8, 8], "args": []})
    reason = smem_tiling.applies(_request(FLOAT_ALIASES, launch, "smem-tiling"))
    assert reason is not None and "pointer parameters" in reason, reason


@pytest.mark.parametrize("recipe", sorted(RECIPES))
@pytest.mark.parametrize("name", sorted(FORMS))
def test_every_candidate_matches_the_original_per_batch(name: str, recipe: str, tmp_path: Path) -> None:
    source, launch, kernel = FORMS[name]
    m, n, k, batch = 33, 40, 19, 2
    element = "float" if name.startswith("float") else "__half"
    for i, cand in enumerate(RECIPES[recipe].propose(_request(source, launch, recipe))):
        assert cand.launch is not None and cand.launch.grid is not None and cand.launch.block is not None
        tile_x = int(str(cand.launch.grid[0]).split(", ")[1].rstrip(")"))
        tile_y = int(str(cand.launch.grid[1]).split(", ")[1].rstrip(")"))
        bx, by = (int(v) for v in cand.launch.block[:2])
        bufs = [Buf(element, batch * m * k), Buf(element, batch * k * n), Buf(element, batch * m * n)]
        scalars = [str(m), str(n), str(k)]
        args = (
            (*bufs, *scalars, f"{m * k}LL", f"{k * n}LL", f"{m * n}LL")
            if element == "float"
            else (*scalars, *bufs)
        )
        original = ((-(-n // 8), -(-m // 8), batch), (8, 8))
        rewritten = ((-(-n // tile_x), -(-m // tile_y), batch), (bx, by))
        tol = 1e-5 if element == "float" else 1e-2
        (tmp_path / str(i)).mkdir()
        assert_same(
            tmp_path / str(i),
            source,
            cand.source,
            kernel,
            [Case(args, original, rewritten)],
            rtol=tol,
            atol=tol,
        )


def test_candidates_compile(tmp_path: Path) -> None:
    sources = {
        f"{name}_{recipe}_{i}".replace("-", "_"): c.source
        for name, (source, launch, _) in FORMS.items()
        for recipe, mod in RECIPES.items()
        for i, c in enumerate(mod.propose(_request(source, launch, recipe)))
    }
    assert_compiled(nvcc_compile(sources, tmp_path))


def test_the_emulation_catches_a_missing_batch_offset(tmp_path: Path) -> None:
    """Without B's offset every batch multiplies by batch 0's B: the comparison must fail."""
    from tests.rewrite.cuda_blocks import run

    source, launch, kernel = FORMS["float-aliases"]
    [cand, *_] = smem_tiling.propose(_request(source, launch, "smem-tiling"))
    broken = cand.source.replace("    B += (size_t)b * sb;\n", "")
    assert broken != cand.source
    m, n, k = 33, 40, 19
    bufs = (Buf("float", 2 * m * k), Buf("float", 2 * k * n), Buf("float", 2 * m * n))
    args = (*bufs, str(m), str(n), str(k), f"{m * k}LL", f"{k * n}LL", f"{m * n}LL")
    case = Case(args, ((5, 5, 2), (8, 8)), ((2, 2, 2), (32, 32)))
    ok, _ = run(tmp_path, source, broken, kernel, [case], rtol=1e-5, atol=1e-5)
    assert not ok
