"""vectorize-access for every element type: __half, __nv_bfloat16, int8/uint8, int, int64, double, mixed sizes.

Positive and refused forms on the parse tree, the unseen fp16 and uint8 kernels with their launch specs,
a CPU emulation of each rewrite against its original (sizes that are not multiples of the width,
misaligned and aliased pointers), and nvcc -arch=sm_90 PTX of each rewrite with 128-bit global accesses.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from perfagent.rewrite.base import LaunchContext, RewriteRequest, launch_context
from perfagent.rewrite.recipes import vectorize_access
from perfagent.workloads.launch_spec import load_launch_spec
from profilers.process import run_command
from tests.rewrite.cuda_cpu import Arg, Buf, emulate
from tests.rewrite.helpers import EXAMPLES, assert_clean_cuda, nvcc_or_skip, request

T = "vectorize-access"
UNSEEN = EXAMPLES / "unseen"
HALF_SCALE = UNSEEN / "04_half_scale"
U8_ADD = UNSEEN / "11_uint8_add_saturate"
AXPBY = UNSEEN / "05_axpby_gridstride_few_blocks"

BF16 = """\
#include <cuda_bf16.h>
extern "C" __global__ void bias_leaky_bf16(const __nv_bfloat16 *__restrict__ x, const __nv_bfloat16 *__restrict__ bias,
                                           __nv_bfloat16 *__restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = __bfloat162float(x[i]) + __bfloat162float(bias[i]);
        y[i] = __float2bfloat16(v > 0.0f ? v : 0.125f * v);
    }
}
"""
INT8 = """\
#include <cstdint>
extern "C" __global__ void leaky_i8(const int8_t *x, int8_t *y, unsigned int n)
{
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = x[i] > 0 ? x[i] : (int8_t)(x[i] / 4);
}
"""
INT = """\
extern "C" __global__ void mix_int(const int *a, const int *b, int *c, long n)
{
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] * b[i] + (a[i] >> 3);
}
"""
INT64 = """\
#include <cstdint>
extern "C" __global__ void affine_i64(const int64_t *x, int64_t *y, long long n)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = x[i] * 3 - (x[i] >> 2);
}
"""
ULL = """\
extern "C" __global__ void xor_u64(unsigned long long *y, const unsigned long long *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] ^= x[i] * 0x9E3779B97F4A7C15ull;
}
"""
SIZE_T = """\
extern "C" __global__ void offsets(const size_t *count, size_t *offset, size_t base, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) offset[i] = base + 4 * count[i];
}
"""
HALF_TO_FLOAT = """\
#include <cuda_fp16.h>
extern "C" __global__ void widen(const __half *in, float *out, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __half2float(in[i]) * s;
}
"""
U8_TO_FLOAT = """\
extern "C" __global__ void normalise_u8(const unsigned char *pix, float *out, float scale, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = pix[i] * scale - 0.5f;
}
"""
HALF2 = """\
#include <cuda_fp16.h>
extern "C" __global__ void swap_half2(const __half2 *in, __half2 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { __half2 v = in[i]; out[i].x = v.y; out[i].y = v.x; }
}
"""
ORDERED_U8 = """\
extern "C" __global__ void mark_then_count(unsigned char *flag, unsigned char *count, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { flag[i] = 1; count[i] = count[i] + flag[i]; }
}
"""

# name -> (source, kernel, width, lines the rewrite must contain, emulation arguments, aliased pair)
FORMS: dict[str, tuple[str, str, int, list[str], list[Arg], tuple[int, int] | None]] = {
    "half-unseen-04": (
        (HALF_SCALE / "slow.cu").read_text(),
        "scale_half",
        8,
        [
            "const uint4 in_v = reinterpret_cast<const uint4 *>(in)[perfagent_q];",
            "const __half *in_e = reinterpret_cast<const __half *>(&in_v);",
            "uint4 out_v;\n",
            "__half *out_e = reinterpret_cast<__half *>(&out_v);",
            "{ out_e[7] = __float2half(__half2float(in_e[7]) * s); }",
            "reinterpret_cast<uint4 *>(out)[perfagent_q] = out_v;",
        ],
        [Buf("__half"), Buf("__half"), "0.75f", "(unsigned)n"],
        None,
    ),
    "bf16": (
        BF16,
        "bias_leaky_bf16",
        8,
        [
            "const __nv_bfloat16 *bias_e = reinterpret_cast<const __nv_bfloat16 *>(&bias_v);",
            "float v = __bfloat162float(x_e[5]) + __bfloat162float(bias_e[5]);",
        ],
        [Buf("__nv_bfloat16"), Buf("__nv_bfloat16"), Buf("__nv_bfloat16"), "n"],
        None,
    ),
    "uint8-unseen-11": (
        (U8_ADD / "slow.cu").read_text(),
        "add_sat_u8",
        16,
        [
            "const unsigned char *a_e = reinterpret_cast<const unsigned char *>(&a_v);",
            "int s = a_e[15] + b_e[15];",
            "out_e[15] = s > 255 ? 255 : (unsigned char)s;",
        ],
        [Buf("unsigned char"), Buf("unsigned char"), Buf("unsigned char"), "(int)n"],
        None,
    ),
    "int8": (
        INT8,
        "leaky_i8",
        16,
        ["{ y_e[9] = x_e[9] > 0 ? x_e[9] : (int8_t)(x_e[9] / 4); }"],
        [Buf("int8_t"), Buf("int8_t"), "(unsigned)n"],
        None,
    ),
    "int": (
        INT,
        "mix_int",
        4,
        [
            "const int4 a_v = reinterpret_cast<const int4 *>(a)[perfagent_q];",
            "{ c_v.w = a_v.w * b_v.w + (a_v.w >> 3); }",
        ],
        [Buf("int"), Buf("int"), Buf("int"), "n"],
        None,
    ),
    "int64": (
        INT64,
        "affine_i64",
        2,
        [
            "const int64_t *x_e = reinterpret_cast<const int64_t *>(&x_v);",
            "{ y_e[1] = x_e[1] * 3 - (x_e[1] >> 2); }",
        ],
        [Buf("int64_t"), Buf("int64_t"), "(long long)n"],
        None,
    ),
    "ulonglong": (
        ULL,
        "xor_u64",
        2,
        ["ulonglong2 y_v = reinterpret_cast<const ulonglong2 *>(y)[perfagent_q];", "{ y_v.y ^= x_v.y * "],
        [Buf("unsigned long long"), Buf("unsigned long long"), "(int)n"],
        (1, 0),
    ),
    "size_t": (
        SIZE_T,
        "offsets",
        2,
        ['static_assert(sizeof(size_t) == 8, "vectorize-access: 2 size_t per 16 bytes");'],
        [Buf("size_t"), Buf("size_t"), "(size_t)5", "(int)n"],
        None,
    ),
    "double-unseen-05": (
        (AXPBY / "slow.cu").read_text(),
        "axpby",
        2,
        [
            "const double2 x_v = reinterpret_cast<const double2 *>(x)[perfagent_q];",
            "{ y_v.y = a * x_v.y + b * y_v.y; }",
            "reinterpret_cast<double2 *>(y)[perfagent_q] = y_v;",
        ],
        [
            "(size_t)n",
            "1.25",
            Buf("double"),
            "-0.5",
            Buf("double"),
        ],
        (0, 1),
    ),
    "float-and-double": (
        (EXAMPLES / "cuda" / "04_small_grid" / "slow.cu").read_text().replace("float *z,", "double *z,"),
        "saxpy_gridstride_small_grid",
        4,
        [
            "double2 z_v[2];",
            "{ z_v[1].y = a * x_v.w + y_v.w; }",
            "reinterpret_cast<double2 *>(z)[perfagent_q * 2 + 0] = z_v[0];",
        ],
        [Buf("float"), Buf("float"), Buf("double"), "(int)n", "2.5f"],
        None,
    ),
    "half-to-float": (
        HALF_TO_FLOAT,
        "widen",
        8,
        [
            "float4 out_v[2];",
            "{ out_v[1].w = __half2float(in_e[7]) * s; }",
            "reinterpret_cast<float4 *>(out)[perfagent_q * 2 + 1] = out_v[1];",
        ],
        [Buf("__half"), Buf("float"), "1.5f", "(int)n"],
        None,
    ),
    "uint8-to-float": (
        U8_TO_FLOAT,
        "normalise_u8",
        16,
        ["float4 out_v[4];", "{ out_v[3].w = pix_e[15] * scale - 0.5f; }"],
        [Buf("unsigned char"), Buf("float"), "0.25f", "(int)n"],
        None,
    ),
    "half2-field-writes": (
        HALF2,
        "swap_half2",
        4,
        [
            "uint4 out_v = reinterpret_cast<const uint4 *>(out)[perfagent_q];",  # one field set per line: loaded
            "{ __half2 v = in_e[3]; out_e[3].x = v.y; out_e[3].y = v.x; }",
        ],
        [Buf("__half2"), Buf("__half2"), "(int)n"],
        (0, 1),
    ),
    "uint8-in-place-order": (
        ORDERED_U8,
        "mark_then_count",
        16,
        ["& 15ull) == 0ull && (const void *)flag != (const void *)count) {"],
        [Buf("unsigned char"), Buf("unsigned char"), "(int)n"],
        (0, 1),
    ),
}


def inline(source: str, **fields: object) -> RewriteRequest:
    return RewriteRequest(source=source, language="cuda", transform=T, **fields)  # type: ignore[arg-type]


def spec_context(path: Path) -> LaunchContext:
    return launch_context(load_launch_spec(path).model_dump(mode="json"))


def propose_one(source: str) -> str:
    [cand] = vectorize_access.propose(inline(source))
    return cand.source


# ------------------------------------------------------------------ parse tree: positive forms


@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_element_type_is_vectorised_with_16_byte_vectors(form: str) -> None:
    source, _, width, expected, _, _ = FORMS[form]
    assert vectorize_access.applies(inline(source)) is None
    [cand] = vectorize_access.propose(inline(source))
    assert cand.parameters == {"width": width}
    assert f"const size_t perfagent_groups = perfagent_n / {width};" in cand.source
    assert f"perfagent_done = perfagent_groups * {width};" in cand.source
    assert "& 15ull) == 0ull" in cand.source  # the alignment test
    for line in expected:
        assert line in cand.source, line
    assert_clean_cuda(cand.source)


def test_the_unseen_fp16_scale_gets_eight_halves_per_thread_from_its_spec() -> None:
    req = request(HALF_SCALE / "slow.cu", T, launch=spec_context(HALF_SCALE / "scale_half.launch.toml"))
    first, second = vectorize_access.propose(req)
    assert first.launch is not None and first.launch.grid == ["ceil_div(count, 8 * (256))"]
    assert any("one group of 8 elements per thread" in n for n in first.notes)
    assert second.launch is None and second.source == first.source
    assert "in (uint4 as 8 __half)" in first.description and "count % 8 tail" in first.description
    # The tail (and the misaligned path) is the original statement on the original index name.
    assert (
        "for (size_t i = perfagent_done + perfagent_tid; i < perfagent_n; i += perfagent_stride)\n"
        "        out[i] = __float2half(__half2float(in[i]) * s);\n}" in first.source
    )
    assert "#include <cuda_fp16.h>" in first.source


def test_the_unseen_uint8_add_gets_sixteen_bytes_per_thread_from_its_spec() -> None:
    req = request(U8_ADD / "slow.cu", T, launch=spec_context(U8_ADD / "add_sat.launch.toml"))
    first, _ = vectorize_access.propose(req)
    assert first.launch is not None and first.launch.grid == ["ceil_div(n, 16 * (256))"]
    assert first.source.count("int s = a_e[") == 16 and first.source.count("int s = a[idx]") == 1
    assert "(const void *)" not in first.source  # out is written once from a and b: no in-place hazard


def test_a_parenthesised_or_field_write_stores_the_array() -> None:
    src = propose_one(INT.replace("c[i] = a[i] * b[i]", "(c[i]) = a[i] * b[i]"))
    assert "reinterpret_cast<int4 *>(c)[perfagent_q] = c_v;" in src
    assert "{ (c_v.z) = a_v.z * b_v.z + (a_v.z >> 3); }" in src
    # A const __half2 pointer may only be read: writing one of its fields is refused.
    why = vectorize_access.applies(inline(HALF2.replace("__half2 *out", "const __half2 *out")))
    assert why is not None and "writes out, a pointer to const" in why, why


# ------------------------------------------------------------------ parse tree: refused forms


@pytest.mark.parametrize(
    ("source", "edit", "reason"),
    [
        pytest.param(
            HALF_TO_FLOAT,
            ("__half2float(in[i])", "__half2float(in[2 * i])"),
            "'in[2 * i]' at line 5 is not in[i]",
            id="non-contiguous-index",
        ),
        pytest.param(
            U8_TO_FLOAT,
            ("const unsigned char *pix,", "const unsigned char *pix, const int *idx,"),
            None,  # an unused pointer is fine; the data-dependent form below is not
            id="unused-pointer-ok",
        ),
        pytest.param(
            U8_TO_FLOAT.replace("const unsigned char *pix,", "const unsigned char *pix, const int *idx,"),
            ("pix[i] * scale", "pix[idx[i]] * scale"),
            None,  # a read-only gather stays a scalar load; idx and the output are vectorised
            id="data-dependent-index",
        ),
        pytest.param(
            INT,
            ("const int *b,", "const struct Pixel *b,"),
            "parameter 2 of mix_int ('const struct Pixel *b', line 1) points to struct Pixel, which has no "
            "16-byte vector form",
            id="unknown-element-type",
        ),
        pytest.param(
            U8_TO_FLOAT,
            ("float *out", "double *out"),
            "mixed element types: a group of 16 unsigned char elements takes more than 4 16-byte vectors "
            "of out (double, 8)",
            id="mixed-sizes-too-far-apart",
        ),
        pytest.param(
            "#include <cstdint>\ntypedef int8_t i8;\n" + INT8.split("\n", 1)[1].replace("int8_t", "i8"),
            ("i8 *y", "i8 *y"),
            "points to i8, which has no 16-byte vector form",
            id="typedef-not-resolved",
        ),
        pytest.param(
            INT, ("int *c,", "volatile int *c,"), "('volatile int *c', line 1) is volatile", id="volatile"
        ),
        pytest.param(
            BF16,
            (
                "y[i] = __float2bfloat16",
                "reinterpret_cast<__nv_bfloat162 *>(y)[0].x = x[i]; y[i] = __float2bfloat16",
            ),
            "bias_leaky_bf16 is already vectorised (reinterpret_cast at line 8)",
            id="already-vectorised",
        ),
        pytest.param(
            HALF2,
            ("out[i].x = v.y;", "g(&out[i].x);"),
            "takes the address of out[i].x at line 5",
            id="address-of-a-field",
        ),
    ],
)
def test_forms_the_recipe_cannot_prove_are_refused_with_the_reason(
    source: str, edit: tuple[str, str], reason: str | None
) -> None:
    assert edit[0] in source
    why = vectorize_access.applies(inline(source.replace(edit[0], edit[1], 1)))
    if reason is None:
        assert why is None, why
    else:
        assert why is not None and reason in why, why
        assert vectorize_access.propose(inline(source.replace(edit[0], edit[1], 1))) == []


# ------------------------------------------------------------------ CPU emulation against the original


@pytest.mark.parametrize("form", sorted(FORMS))
def test_cpu_emulation_of_each_element_type_matches_the_original(tmp_path: Path, form: str) -> None:
    source, kernel, width, _, args, alias = FORMS[form]
    out = emulate(tmp_path, source, propose_one(source), kernel, args, width=width, alias=alias)
    assert int(out.split(" cases")[0].split()[-1]) > 0


# ------------------------------------------------------------------ nvcc: 128-bit global accesses in PTX

WIDE_LOAD = re.compile(r"ld\.global(?:\.nc)?(?:\.L1::\w+)?\.(?:v4\.[bfsu]32|v2\.[bfsu]64)\b")
WIDE_STORE = re.compile(r"st\.global\.(?:v4\.[bfsu]32|v2\.[bfsu]64)\b")


def _ptx(tmp: Path, name: str, source: str) -> tuple[str, str]:
    nvcc = nvcc_or_skip()
    cu = tmp / f"{name}.cu"
    cu.write_text(source)
    out = tmp / f"{name}.ptx"
    done = run_command([nvcc, "-arch=sm_90", "-ptx", str(cu), "-o", str(out)], timeout_s=180)
    assert done.ok, (name, done.tail())
    return name, out.read_text()


def test_nvcc_emits_128_bit_global_loads_and_stores_for_every_element_type(tmp_path: Path) -> None:
    sources = {form: propose_one(FORMS[form][0]) for form in FORMS}
    with ThreadPoolExecutor(max_workers=2) as pool:
        ptx = dict(pool.map(lambda kv: _ptx(tmp_path, *kv), sorted(sources.items())))
    for form, text in ptx.items():
        assert WIDE_LOAD.search(text), f"{form}: no 128-bit global load in its PTX"
        assert WIDE_STORE.search(text), f"{form}: no 128-bit global store in its PTX"
        # The typed views stay in registers: no local-memory copy of a vector.
        assert "st.local" not in text and "ld.local" not in text, form
