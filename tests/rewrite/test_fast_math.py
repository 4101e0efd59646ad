"""fast-math on transcendental-heavy element-wise kernels (GELU/sigmoid/softplus styles): intrinsics for
single precision only, float divisions proven float on the parse tree, double untouched; nvcc builds and
a block-by-block CPU run (``cuda_blocks.py``, where each intrinsic is its accurate function) proves
the rewrite kept every operand in place."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from perfagent.rewrite.base import RewriteRequest
from perfagent.rewrite.recipes import fast_math
from tests.rewrite import cuda_blocks
from tests.rewrite.cuda_blocks import Buf, Case
from tests.rewrite.helpers import assert_clean_cuda, assert_compiled, nvcc_compile

MIXED = """
__device__ float sigmoid(float v) { return 1.0f / (1.0f + expf(-v)); }
__global__ void swish_norm(const float *x, float *y, const double *d, double *e, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float a = x[i];
        float s = logf(a * a + 1.0f) / (a + 2.0f) / sqrtf(a * a + 1.0f);
        y[i] = a * sigmoid(a) * s + 1.0f / sqrtf(fabsf(a) + 1.0f) + powf(fabsf(a), 1.5f) / 3;
        e[i] = exp(d[i]) / 3.0;
    }
}
"""
SOFTPLUS_ONLY_TRANSCENDENTAL = """
__global__ void softplus(float *out, const float *in, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        out[i] = in[i] > 20.0f ? in[i] : log1pf(expf(in[i]));
}
"""


def _request(source: str) -> RewriteRequest:
    return RewriteRequest(source=textwrap.dedent(source).lstrip("\n"), language="cuda", transform="fast-math")


def test_transcendentals_then_divisions_double_untouched(tmp_path: Path) -> None:
    cands = fast_math.propose(_request(MIXED))
    assert [c.parameters["divisions"] for c in cands] == [False, True]
    first, second = (c.source for c in cands)
    for text in (first, second):
        assert_clean_cuda(text)
        assert "__expf(-v)" in text and "__logf(a * a + 1.0f)" in text and "__powf(" in text
        assert "e[i] = exp(d[i]) / 3.0;" in text  # double precision stays accurate
    assert "/ (a + 2.0f)" in first and "rsqrtf" not in first
    assert "__fdividef(__fdividef(__logf(a * a + 1.0f), (a + 2.0f)), sqrtf(a * a + 1.0f))" in second
    assert "rsqrtf(fabsf(a) + 1.0f)" in second and "__fdividef(__powf(fabsf(a), 1.5f), 3)" in second
    assert "__fdividef(1.0f, (1.0f + __expf(-v)))" in second
    case = Case(
        (Buf("float", 100), Buf("float", 100), Buf("double", 100), Buf("double", 100), "100"),
        ((2,), (64, 1)),
        ((2,), (64, 1)),
    )
    for k, text in enumerate((first, second)):
        sub = tmp_path / str(k)
        sub.mkdir()
        cuda_blocks.assert_same(sub, textwrap.dedent(MIXED), text, "swish_norm", [case], rtol=1e-6, atol=1e-6)


def test_a_kernel_without_float_divisions_gets_one_candidate(tmp_path: Path) -> None:
    [cand] = fast_math.propose(_request(SOFTPLUS_ONLY_TRANSCENDENTAL))
    assert "log1pf(__expf(in[i]))" in cand.source
    sources = {
        "mixed_0": fast_math.propose(_request(MIXED))[0].source,
        "mixed_1": fast_math.propose(_request(MIXED))[1].source,
        "softplus": cand.source,
    }
    assert_compiled(nvcc_compile(sources, tmp_path))


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        (
            "__global__ void k(double *y, const double *x) { y[threadIdx.x] = exp(x[threadIdx.x]) / 2.0; }",
            "no single-precision",
        ),
        ("__global__ void k(int *y, int d) { y[threadIdx.x] = y[threadIdx.x] / d; }", "or float division"),
        # a struct field's type is not read: unknown types are left alone
        (
            "struct P { float s; };\n__global__ void k(float *y, P p) { y[threadIdx.x] = y[threadIdx.x] / p.s; }",
            "or float division",
        ),
    ],
)
def test_kernels_without_single_precision_math_are_refused(source: str, reason: str) -> None:
    why = fast_math.applies(_request(source))
    assert why is not None and reason in why, why
