"""chunk-stride (coalesce-access): per-thread contiguous chunks folded into a partial, visited block-strided.

Own forms (issue 23: not the measuring set's kernel): a per-row max-abs with a ``tid`` local and the
``k < begin + chunk && k < n`` condition, an unsigned OR over fixed ``CHUNK``-sized pieces with
``size_t`` counters, and a conditional double sum with two accumulators. Each rewrite runs against its
original on the block-synchronous CPU emulator (real barriers) with lengths that the block does not
divide, and compiles with nvcc. Refused forms name why.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.rewrite.base import RewriteRequest, launch_context
from perfagent.rewrite.recipes import RECIPES, chunk_stride, recipes_for
from tests.rewrite.cuda_blocks import Buf, Case, assert_same
from tests.rewrite.helpers import assert_compiled, nvcc_compile

ROW_MAXABS = """
#define BLOCK 64
__global__ void row_maxabs(const float *x, float *out, int n) {
    __shared__ float best[BLOCK];
    const float *row = x + (size_t)blockIdx.x * n;
    int tid = threadIdx.x;
    int chunk = (n + blockDim.x - 1) / blockDim.x;
    int begin = tid * chunk;
    float m = 0.0f;
    for (int k = begin; k < begin + chunk && k < n; k++)
        m = fmaxf(m, fabsf(row[k]));
    best[tid] = m;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) best[tid] = fmaxf(best[tid], best[tid + s]);
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = best[0];
}
"""
OR_PIECES = """
#define CHUNK 5
__global__ void or_pieces(const unsigned *flags, unsigned *out, size_t len) {
    __shared__ unsigned acc[64];
    size_t first = CHUNK * threadIdx.x;
    size_t last = min(len, first + CHUNK);
    unsigned bits = 0;
    for (size_t i = first; i < last; i += 1) {
        unsigned f = flags[i];
        bits |= f;
    }
    acc[threadIdx.x] = bits;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned all = 0;
        for (int t = 0; t < 64; ++t) all |= acc[t];
        out[0] = all;
    }
}
"""
POSITIVE_SUMS = """
__global__ void positive_sums(const double *v, double *out, int n) {
    __shared__ double pos_part[32];
    __shared__ double neg_part[32];
    int chunk = (n + 31) / 32;
    int begin = threadIdx.x * chunk;
    int end = min(begin + chunk, n);
    double pos = 0.0, neg = 0.0;
    for (int k = begin; k < end; ++k) {
        if (v[k] > 0.0) pos += v[k];
        if (v[k] < 0.0) neg += v[k];
    }
    pos_part[threadIdx.x] = pos;
    neg_part[threadIdx.x] = neg;
    __syncthreads();
    if (threadIdx.x == 0) {
        double p = 0.0, q = 0.0;
        for (int t = 0; t < 32; ++t) { p += pos_part[t]; q += neg_part[t]; }
        out[0] = p;
        out[1] = q;
    }
}
"""

LAUNCH = launch_context({"grid": ["rows"], "block": [64], "args": []})
FORMS: dict[str, tuple[str, str]] = {
    "row-maxabs-tid-local": (ROW_MAXABS, "row_maxabs"),
    "or-fixed-pieces": (OR_PIECES, "or_pieces"),
    "two-conditional-sums": (POSITIVE_SUMS, "positive_sums"),
}

REFUSED: dict[str, tuple[str, str]] = {
    "return-before-the-loop": (
        ROW_MAXABS.replace("    float m = 0.0f;\n", "    if (tid >= n) return;\n    float m = 0.0f;\n"),
        "a return before the chunk loop",
    ),
    "loop-writes-memory": (
        POSITIVE_SUMS.replace("if (v[k] < 0.0) neg += v[k];", "out[k] = v[k];"),
        "the loop writes memory",
    ),
    "order-dependent-fold": (
        ROW_MAXABS.replace("m = fmaxf(m, fabsf(row[k]));", "m = m * 0.5f + row[k];"),
        "is not a commutative fold into m",
    ),
    "chunk-depends-on-the-thread": (
        ROW_MAXABS.replace("int chunk = (n + blockDim.x - 1) / blockDim.x;", "int chunk = tid + 1;"),
        "depends on the thread",
    ),
    "not-a-per-thread-chunk": (
        ROW_MAXABS.replace("int begin = tid * chunk;", "int begin = blockIdx.x * chunk;"),
        "does not start at threadIdx.x * C",
    ),
    "chunk-loop-under-a-condition": (
        POSITIVE_SUMS.replace("    for (int k = begin;", "    if (n > 7)\n    for (int k = begin;"),
        "under a condition",
    ),
}


def _request(source: str) -> RewriteRequest:
    return RewriteRequest(source=source, language="cuda", transform="coalesce-access", launch=LAUNCH)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_positive_forms_stride_by_the_block(name: str) -> None:
    req = _request(FORMS[name][0])
    assert chunk_stride.applies(req) is None, chunk_stride.applies(req)
    vectorised, scalar = chunk_stride.propose(req)
    assert "= threadIdx.x;" in scalar.source and "+= blockDim.x)" in scalar.source
    assert scalar.launch is None and vectorised.launch is None
    # the vectorised variant first: 16-byte groups dealt block-strided, the scalar loop for the tail
    assert vectorised.parameters.get("vector_lanes") and "perfagent_q += blockDim.x" in vectorised.source


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_forms_say_why(name: str) -> None:
    source, why = REFUSED[name]
    reason = chunk_stride.applies(_request(source))
    assert reason is not None and why in reason, reason


def test_registered_for_coalesce_access_and_in_the_catalog() -> None:
    from knowledge.transforms import catalog

    assert RECIPES["chunk-stride"] is chunk_stride.RECIPE
    assert chunk_stride.RECIPE in recipes_for("coalesce-access", "cuda")
    assert "chunk-stride" in catalog()["coalesce-access"].recipes


def _cases(name: str) -> list[Case]:
    if name == "row-maxabs-tid-local":
        return [
            Case((Buf("float", 3 * n), Buf("float", 3), str(n)), ((3,), (64, 1)), ((3,), (64, 1)), f"n={n}")
            for n in (1, 63, 200)
        ]
    if name == "or-fixed-pieces":
        return [
            Case(
                (Buf("unsigned", n), Buf("unsigned", 1), f"{n}ul"), ((1,), (64, 1)), ((1,), (64, 1)), f"n={n}"
            )
            for n in (7, 319, 500)
        ]
    return [
        Case((Buf("double", n), Buf("double", 2), str(n)), ((1,), (32, 1)), ((1,), (32, 1)), f"n={n}")
        for n in (5, 97, 300)
    ]


@pytest.mark.parametrize("name", sorted(FORMS))
def test_rewrite_folds_the_same_elements(name: str, tmp_path: Path) -> None:
    source, kernel = FORMS[name]
    for cand in chunk_stride.propose(_request(source)):  # vectorised lanes, then scalar
        assert_same(tmp_path, source, cand.source, kernel, _cases(name), rtol=1e-12, atol=1e-12)


def test_candidates_compile(tmp_path: Path) -> None:
    sources = {
        f"{name.replace('-', '_')}_{k}": cand.source
        for name, (src, _) in FORMS.items()
        for k, cand in enumerate(chunk_stride.propose(_request(src)))
    }
    assert_compiled(nvcc_compile(sources, tmp_path))
