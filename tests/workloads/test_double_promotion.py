"""The float64 promotion of a launch-spec kernel's source and launch (``workloads.double_promotion``).

Each form below is our own kernel; the promoted source must hold no float left (checked on the text and,
where nvcc is installed, on the PTX nvcc builds from it: no f32 load, store, arithmetic or atomic), and
every construct the promotion cannot vouch for is refused with its reason.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from perfagent.workloads.double_promotion import (
    PromotionRefused,
    promote_entry,
    promote_launch,
    promote_source,
)
from perfagent.workloads.launch_resolve import resolve_launch
from perfagent.workloads.launch_spec import load_launch_spec

FORMS = {
    "scalar_math": (
        "axpy_exp",
        'extern "C" __global__ void axpy_exp(const float *x, float *y, float alpha, int n)\n'
        "{\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) y[i] = fmaxf(alpha * expf(-fabsf(x[i])) + 1.0f, 0.f) + sqrtf(2.5e-1f) * __expf(x[i]);\n"
        "}\n",
    ),
    "intrinsics_and_casts": (
        "rcp_div",
        "#include <cfloat>\n#define SCALE 0.5f\n"
        'extern "C" __global__ void rcp_div(const float *__restrict__ a, float *b, int n)\n'
        "{\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i >= n) return;\n"
        "    float v = __fdividef(a[i], 3.0f) + __frcp_rn(a[i] + 4.0f) * SCALE;\n"
        "    float m = -FLT_MAX;\n"
        "    m = fmaxf(m, (float)i * 1e-3f + static_cast<float>(n));\n"
        "    b[i] = __saturatef(v) + rsqrtf(m * m + 1.f) + __int2float_rn(i);\n"
        "}\n",
    ),
    "vector_shared_warp": (
        "row_sum4",
        'extern "C" __global__ void row_sum4(const float4 *in, float *out, int rows, int cols4)\n'
        "{\n"
        "    __shared__ float partial[8];\n"
        "    int row = blockIdx.x, lane = threadIdx.x % 32, warp = threadIdx.x / 32;\n"
        "    float acc = 0.0f;\n"
        "    for (int c = threadIdx.x; c < cols4; c += blockDim.x) {\n"
        "        float4 v = in[(size_t)row * cols4 + c];\n"
        "        acc += v.x + v.y + v.z + v.w;\n"
        "    }\n"
        "    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);\n"
        "    if (lane == 0) partial[warp] = acc;\n"
        "    __syncthreads();\n"
        "    if (threadIdx.x == 0) {\n"
        "        float s = 0.f;\n"
        "        for (int w = 0; w < blockDim.x / 32; ++w) s += partial[w];\n"
        "        atomicAdd(out + row % 4, s);\n"
        "    }\n"
        "}\n",
    ),
    "softmax_row": (
        "softmax_row",
        'extern "C" __global__ void softmax_row(const float *x, float *y, int rows, int cols)\n'
        "{\n"
        "    int r = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (r >= rows) return;\n"
        "    float m = __int_as_float(0xff800000);\n"
        "    for (int j = 0; j < cols; ++j) m = fmaxf(m, x[(size_t)r * cols + j]);\n"
        "    float s = 0.f;\n"
        "    for (int j = 0; j < cols; ++j) s += __expf(x[(size_t)r * cols + j] - m);\n"
        "    for (int j = 0; j < cols; ++j) y[(size_t)r * cols + j] = __fdividef(expf(x[(size_t)r * cols + j] - m), s);\n"
        "}\n",
    ),
    "dynamic_shared_helper": (
        "block_scale",
        "__device__ __forceinline__ float twice(float v) { return v * 2.0f; }\n"
        'extern "C" __global__ void block_scale(const float *in, float *out, int n)\n'
        "{\n"
        "    extern __shared__ float tile[];\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    tile[threadIdx.x] = i < n ? twice(in[i]) : 0.0f;\n"
        "    __syncthreads();\n"
        "    if (i < n) out[i] = tile[blockDim.x - 1 - threadIdx.x] + tile[threadIdx.x];\n"
        "}\n",
    ),
}

REFUSED = {
    "bit cast": ("int q = __float_as_int(x[i]);", "bit cast"),
    "inline PTX": ('float r; asm("mov.f32 %0, %1;" : "=f"(r) : "f"(x[i]));', "inline PTX"),
    "std bit cast": ("int q = cuda::std::bit_cast<int>(x[i]);", "a bit cast"),
    "union": ("union { float f; int i; } u; u.f = x[i];", "union"),
    "half arithmetic": ("__half h = __float2half(x[i]);", "half/bf16"),
    "int pointer cast": ("const int *bits = (const int *)x;", "pointer or reference cast to int"),
    "reference cast": ("int bits = (int &)x[i];", "reference cast to int"),
    "reinterpret to int": ("const int *bits = reinterpret_cast<const int *>(x);", "reinterpret_cast"),
    "texture": ("float t = tex1Dfetch<float>(0, i);", "texture"),
    "atomicExch": ("atomicExch(y, x[i]);", "atomicExch"),
    "unknown intrinsic": ("float t = __fsqrt_ru(x[i]) + __fexotic_rn(x[i]);", "__fexotic_rn"),
}


def _kernel_with(statement: str) -> str:
    return (
        'extern "C" __global__ void k(const float *x, float *y, int n)\n'
        "{\n    int i = threadIdx.x;\n    " + statement + "\n    y[i] = x[i];\n}\n"
    )


@pytest.mark.parametrize("form", sorted(FORMS))
def test_promoted_source_holds_no_float(form: str) -> None:
    kernel, source = FORMS[form]
    promoted = promote_source(source, kernel)
    code = re.sub(r"//.*", "", promoted.text)
    assert re.findall(r"\bfloat\d?\b|\d[fF]\b|\b\w+f\(|__f\w+_rn|FLT_", code) == [], promoted.text
    assert "double" in code and promoted.sites > 0


def test_promoted_names_and_parameters() -> None:
    kernel, source = FORMS["intrinsics_and_casts"]
    promoted = promote_source(source, kernel)
    for double_form in (
        "__drcp_rn(",
        "DBL_MAX",
        "__int2double_rn(",
        "#define SCALE 0.5\n",
        "(double)i * 1e-3",
    ):
        assert double_form in promoted.text, double_form
    assert promoted.parameters == ("float*", "float*", "int")
    assert promote_source(*reversed(FORMS["vector_shared_warp"])).parameters == (
        "float4*",
        "float*",
        "int",
        "int",
    )
    assert promote_source(*reversed(FORMS["dynamic_shared_helper"])).extern_shared == ("float",)


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_unprovable_promotions_are_refused(case: str) -> None:
    statement, reason = REFUSED[case]
    with pytest.raises(PromotionRefused, match=re.escape(reason)) as info:
        promote_source(_kernel_with(statement), "k")
    assert "line 4" in str(info.value)


def test_template_entry_is_instantiated_in_double(tmp_path: Path) -> None:
    source = (
        "template <typename T, int UNROLL>\n"
        "__global__ void scale(const T *x, T *y, int n)\n"
        "{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = x[i] * 2.0f;\n}\n"
    )
    promoted = promote_source(source, "scale<float, 4>")
    assert "y[i] = x[i] * 2.0;" in promoted.text and promoted.parameters == ("float*", "float*", "int")
    spec = _spec(tmp_path, source, "scale<float, 4>", ARGS_XYN)
    launch = promote_launch(_resolved(spec), promoted, "/tmp/p.cu")
    assert launch.kernel == "scale<double, 4>" and [a.dtype for a in launch.args][:2] == [
        "float64",
        "float64",
    ]
    integer = promote_source(source, "scale<int, 4>")  # T = int: the spec's float data does not match
    with pytest.raises(PromotionRefused, match="which values are float"):
        promote_launch(_resolved(spec), integer, "/tmp/p.cu")
    assert promote_entry("scale<float, 4>") == "scale<double, 4>"
    assert promote_entry("pack<float4, int>") == "pack<double4, int>"


def test_constant_bit_casts_become_double_constants() -> None:
    """-inf spelled as its bits (the start of a running max) is a constant, not bit-level float code."""
    promoted = promote_source(
        _kernel_with("float m = __int_as_float(0xff800000); float one = __uint_as_float(0x3f800000u);"), "k"
    )
    assert "double m = __longlong_as_double(0xfff0000000000000LL);" in promoted.text
    assert "double one = (1.0);" in promoted.text


def test_names_that_only_look_narrow_are_promoted() -> None:
    """A variable called ``half_width`` or ``fp8_count`` is not half arithmetic."""
    promoted = promote_source(
        _kernel_with(
            "int half_width = n / 2, surf_area = 3; float fhalf = x[i] * 0.5f + half_width + surf_area;"
        ),
        "k",
    )
    assert "double fhalf = x[i] * 0.5 + half_width + surf_area;" in promoted.text


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
@pytest.mark.parametrize("form", sorted(FORMS))
def test_promoted_source_compiles_to_double_only(form: str, tmp_path: Path) -> None:
    """nvcc builds the promoted source for sm_90 (cubin), and its PTX loads, stores, computes and
    adds atomically in f64 only (libdevice's own f32 range tests inside exp are not ours)."""
    kernel, source = FORMS[form]
    cu = tmp_path / f"{form}.cu"
    cu.write_text(promote_source(source, kernel).text)
    for kind in ("-cubin", "-ptx"):
        subprocess.run(
            ["nvcc", "-arch=sm_90", kind, "-o", str(tmp_path / f"out{kind}"), str(cu)],
            check=True, capture_output=True, timeout=600,
        )  # fmt: skip
    ptx = (tmp_path / "out-ptx").read_text()
    f32 = re.findall(
        r"^\s*(?:ld|st|add|sub|mul|fma|div|rcp|sqrt|max|min|atom|red|shfl|cvt)\S*\.f32\b.*", ptx, re.M
    )
    assert f32 == [] and ".f64" in ptx, f32[:5]


def _spec(tmp_path: Path, source: str, kernel: str, args: str, shared: str = "0") -> Path:
    (tmp_path / "k.cu").write_text(source)
    spec = tmp_path / "k.launch.toml"
    spec.write_text(
        f'source = "k.cu"\nkernel = "{kernel}"\ngrid = [4]\nblock = [128]\nshared_mem = "{shared}"\n'
        f"[params]\nn = 512\n{args}"
    )
    return spec


def _resolved(spec: Path):  # type: ignore[no-untyped-def]
    return resolve_launch(load_launch_spec(spec), spec)


ARGS_XYN = (
    '[[args]]\nname = "x"\nshape = ["n"]\n'
    '[[args]]\nname = "y"\nshape = ["n"]\nrole = "output"\n'
    '[[args]]\nname = "n"\ndtype = "int32"\nvalue = "n"\n'
)


def test_launch_promotion_widens_float_arguments_and_float_shared_memory(tmp_path: Path) -> None:
    kernel, source = FORMS["dynamic_shared_helper"]
    spec = _spec(tmp_path, source, kernel, ARGS_XYN, shared="128 * 4")
    resolved = _resolved(spec)
    launch = promote_launch(resolved, promote_source(source, kernel), "/tmp/promoted.cu")
    assert [a.dtype for a in launch.args] == ["float64", "float64", "int32"]
    assert launch.shared_mem == 2 * 128 * 4 and launch.source == "/tmp/promoted.cu"
    assert launch.grid == resolved.grid and launch.block == resolved.block
    ints = _kernel_with("extern __shared__ int counts[];")
    spec = _spec(tmp_path, ints, "k", ARGS_XYN, shared="512")
    assert promote_launch(_resolved(spec), promote_source(ints, "k"), "/tmp/p.cu").shared_mem == 512


@pytest.mark.parametrize(
    ("source", "args", "shared", "reason"),
    [
        (_kernel_with("extern __shared__ unsigned char raw[];"), ARGS_XYN, "512", "declared char"),
        (_kernel_with("extern __shared__ int counts[]; extern __shared__ float sums[];"), ARGS_XYN, "512", "declared float, int"),
        (_kernel_with(""), ARGS_XYN.replace('value = "n"', 'value = "n"\n[[args]]\nname = "m"\ndtype = "int32"\nvalue = 1'), "0", "lists 4 arguments"),
        (_kernel_with(""), ARGS_XYN.replace('name = "x"\nshape', 'name = "x"\ndtype = "int32"\nshape'), "0", "which values are float"),
        (_kernel_with(""), ARGS_XYN.replace('name = "y"\nshape', 'name = "y"\ndtype = "float16"\nshape'), "0", "half/bf16 data"),
    ],
    ids=["byte dynamic shared memory", "float and int dynamic shared memory", "argument count", "float data typed int", "half data"],
)  # fmt: skip
def test_launch_promotion_refusals(tmp_path: Path, source: str, args: str, shared: str, reason: str) -> None:
    spec = _spec(tmp_path, source, "k", args, shared=shared)
    with pytest.raises(PromotionRefused, match=re.escape(reason)):
        promote_launch(_resolved(spec), promote_source(source, "k"), "/tmp/p.cu")
