"""demote-double on float, half and bf16 kernels promoted to fp64 (literals, double math, locals, casts,
helpers, #defines), guard and grid-stride forms; double data refused with its line. Every candidate
builds with nvcc -arch=sm_90; the fp32 candidate runs against the original on the CPU
(``cuda_blocks.py``) within a tolerance the data type allows (the SFU one needs the GPU:
tests/gpu/test_elementwise_recipes_gpu.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from perfagent.rewrite.base import RewriteRequest
from perfagent.rewrite.recipes import demote_double
from tests.rewrite import cuda_blocks
from tests.rewrite.cuda_blocks import Buf, Case
from tests.rewrite.helpers import assert_clean_cuda, assert_compiled, nvcc_compile

SIGMOID_GELU_FLOAT_GUARD = """
__global__ void quick_gelu(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = v / (1.0 + exp(-1.702 * v));
    }
}
"""
SOFTPLUS_HALF_GRID_STRIDE = """
#include <cuda_fp16.h>
__global__ void softplus_half(const __half *x, __half *y, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        float v = __half2float(x[i]);
        y[i] = __float2half(v > 20.0 ? v : log1p(exp(v)));
    }
}
"""
GELU_BF16_HELPER = """
#include <cuda_bf16.h>
#define SQRT_2_OVER_PI 0.7978845608028654
__device__ double cube(double a) { return pow(a, 3.0); }
__global__ void gelu_bf16(const __nv_bfloat16 *in, __nv_bfloat16 *out, long n)
{
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v = (double)__bfloat162float(in[i]);
    out[i] = __float2bfloat16(0.5 * v * (1.0 + tanh(SQRT_2_OVER_PI * (v + 0.044715 * cube(v)))));
}
"""
TEMPLATE_SCALE = """
template <typename T, int K>
__global__ void scale_pow(const T *x, T *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * K * sqrt(2.0);
}
template __global__ void scale_pow<float, 4>(const float *, float *, int);
"""


def _request(source: str, kernel: str | None = None) -> RewriteRequest:
    return RewriteRequest(
        source=textwrap.dedent(source).lstrip("\n"), language="cuda", transform="fast-math", kernel=kernel
    )


def test_a_float_guard_kernel_gets_fp32_then_intrinsics() -> None:
    accurate, fast = demote_double.propose(_request(SIGMOID_GELU_FLOAT_GUARD))
    assert "y[i] = v / (1.0f + expf(-1.702f * v));" in accurate.source
    assert "y[i] = v / (1.0f + __expf(-1.702f * v));" in fast.source
    assert accurate.parameters == {"intrinsics": False, "sites": 3}
    for cand in (accurate, fast):
        assert_clean_cuda(cand.source)


def test_a_half_grid_stride_kernel_keeps_its_loop_and_demotes_the_math() -> None:
    accurate, fast = demote_double.propose(_request(SOFTPLUS_HALF_GRID_STRIDE))
    assert "v > 20.0f ? v : log1pf(expf(v))" in accurate.source
    assert "v > 20.0f ? v : log1pf(__expf(v))" in fast.source
    assert "i += blockDim.x * gridDim.x" in accurate.source


def test_a_bf16_kernel_with_a_double_helper_define_and_cast() -> None:
    accurate, fast = demote_double.propose(_request(GELU_BF16_HELPER))
    text = accurate.source
    assert "#define SQRT_2_OVER_PI 0.7978845608028654f" in text
    assert "__device__ float cube(float a) { return (a * a * a); }" in text
    assert "float v = (float)__bfloat162float(in[i]);" in text
    assert "0.5f * v * (1.0f + tanhf(SQRT_2_OVER_PI * (v + 0.044715f * cube(v))))" in text
    assert "double" not in text
    assert "perfagent_tanh_approx(SQRT_2_OVER_PI" in fast.source
    assert fast.source.index("perfagent_tanh_approx(float x)") < fast.source.index("__device__ float cube")


def test_a_template_kernel_named_by_its_instantiation() -> None:
    # the launch spec names the instantiation it runs; the source defines the template
    [accurate] = demote_double.propose(_request(TEMPLATE_SCALE, kernel="scale_pow<float, 4>"))
    assert "y[i] = x[i] * K * sqrtf(2.0f);" in accurate.source


def test_every_candidate_builds_with_nvcc(tmp_path: Path) -> None:
    sources = {}
    for name, text in (
        ("gelu_f32", SIGMOID_GELU_FLOAT_GUARD),
        ("softplus_f16", SOFTPLUS_HALF_GRID_STRIDE),
        ("gelu_bf16", GELU_BF16_HELPER),
        ("template", TEMPLATE_SCALE),
    ):
        for k, cand in enumerate(
            demote_double.propose(_request(text, "scale_pow<float, 4>" if name == "template" else None))
        ):
            sources[f"{name}_{k}"] = cand.source
    assert len(sources) == 7
    assert_compiled(nvcc_compile(sources, tmp_path))


@pytest.mark.parametrize(
    ("source", "kernel", "buffers", "tol"),
    [
        (SIGMOID_GELU_FLOAT_GUARD, "quick_gelu", ("float", "float"), 1e-5),
        (SOFTPLUS_HALF_GRID_STRIDE, "softplus_half", ("__half", "__half"), 2e-3),
        (GELU_BF16_HELPER, "gelu_bf16", ("__nv_bfloat16", "__nv_bfloat16"), 1e-2),
    ],
)
def test_the_fp32_candidate_agrees_with_the_original_on_the_cpu(
    tmp_path: Path, source: str, kernel: str, buffers: tuple[str, str], tol: float
) -> None:
    accurate = demote_double.propose(_request(source))[0]
    n = 1000
    case = Case((Buf(buffers[0], n), Buf(buffers[1], n), str(n)), ((8,), (128, 1)), ((8,), (128, 1)))
    cuda_blocks.assert_same(
        tmp_path, textwrap.dedent(source), accurate.source, kernel, [case], rtol=tol, atol=tol
    )


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        (
            "__global__ void k(const double *x, float *y) { y[threadIdx.x] = exp(x[threadIdx.x]) * 0.5; }",
            "line 1: 'const double *x' is double data",
        ),
        (
            "__global__ void k(float *y, double alpha)\n{\n    y[threadIdx.x] *= alpha * 0.5;\n}",
            "line 1: kernel parameter 'double alpha' is a double the launch passes",
        ),
        (
            "__device__ float f(double *acc) { return 0.5 * acc[0]; }\n"
            "__global__ void k(float *y) { y[threadIdx.x] = f(0); }",
            "line 1: 'double *acc' is double data",
        ),
        (
            "__global__ void k(float *y, int n) { y[threadIdx.x] = expf(y[threadIdx.x]) * 0.5f + n / 2; }",
            "nothing promotes to fp64",
        ),
    ],
)
def test_genuine_double_and_fp32_kernels_are_refused(source: str, reason: str) -> None:
    why = demote_double.applies(_request(source))
    assert why is not None and reason in why, why


def test_a_constant_converted_once_is_not_a_promotion() -> None:
    # 'half tmp = 0.0;' and '__float2half(0.5)' convert a constant: no fp64 arithmetic to take away
    source = (
        "#include <cuda_fp16.h>\n__global__ void k(half *y, const half *x)\n{\n    half tmp = 0.0;\n"
        "    y[threadIdx.x] = x[threadIdx.x] * tmp + __float2half(0.5);\n}\n"
    )
    why = demote_double.applies(_request(source))
    assert why is not None and "nothing promotes to fp64" in why, why
    # a compound assignment does promote: 'acc += 0.1' adds in fp64
    promoted = source.replace("half tmp = 0.0;", "float acc = 1.0f;\n    acc += 0.1;").replace(
        "* tmp", "* __float2half(acc)"
    )
    accurate = demote_double.propose(_request(promoted))[0]
    assert "acc += 0.1f;" in accurate.source
