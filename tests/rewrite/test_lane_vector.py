"""Vectorised lanes on the loops cooperative-row makes: 16 bytes per lane, the same results block by block.

Own kernels (row-per-thread RMS-style scaling in bf16, an asymmetric uint8 quantiser from fp16, a
float gather of rows through int64 ids, an in-place row L1 normalisation, a softmax with three passes),
each in several indexing styles; every vectorised candidate runs on the block-synchronous CPU emulator
against the original with rows whose length is a multiple of the group (the vector path) and not
(misaligned rows: the scalar path), and builds with nvcc.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from perfagent.rewrite.base import Candidate, LaunchContext, RewriteRequest
from perfagent.rewrite.recipes import cooperative_row
from perfagent.rewrite.recipes._lane_vector_emit import vectorize_lanes
from tests.rewrite import cuda_blocks
from tests.rewrite.cuda_blocks import Buf, Case
from tests.rewrite.helpers import assert_compiled, nvcc_compile

FORMS = {
    "bf16-scale-rows-size_t-offset": """
#include <cuda_bf16.h>
extern "C" __global__ void scale_rows(const __nv_bfloat16 *src, const __nv_bfloat16 *gain, __nv_bfloat16 *dst,
                                      float *inv_out, int R, int D)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= R) return;
    float ss = 0.0f;
    for (int d = 0; d < D; ++d) {
        float v = __bfloat162float(src[(size_t)r * D + d]);
        ss += v * v;
    }
    float inv = rsqrtf(ss / D + 1e-5f);
    for (int d = 0; d < D; ++d)
        dst[(size_t)r * D + d] = __float2bfloat16(__bfloat162float(src[(size_t)r * D + d]) * inv * __bfloat162float(gain[d]));
    inv_out[r] = inv;
}
""",
    "u8-asymmetric-quant-row-pointers": """
#include <cuda_fp16.h>
__global__ void quant_u8(const __half *in, unsigned char *q, float *scales, int n_rows, int n_cols)
{
    const int row = threadIdx.x + blockIdx.x * blockDim.x;
    if (row < n_rows) {
        const __half *x = in + (long long)row * n_cols;
        unsigned char *y = q + (long long)row * n_cols;
        float lo = 1e30f, hi = -1e30f;
        for (int c = 0; c < n_cols; c++) {
            lo = fminf(lo, __half2float(x[c]));
            hi = fmaxf(hi, __half2float(x[c]));
        }
        float s = (hi - lo) / 255.0f + 1e-8f;
        for (int c = 0; c < n_cols; c++)
            y[c] = (unsigned char)__float2int_rn((__half2float(x[c]) - lo) / s);
        scales[row] = s;
    }
}
""",
    "f32-gather-rows-by-id": """
extern "C" __global__ void gather_rows(const long long *idx, const float *table, float *out, int n, int width)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    const float *from = table + idx[t] * width;
    for (int k = 0; k < width; ++k)
        out[(long long)t * width + k] = from[k];
}
""",
    "f32-l1-normalise-in-place": """
__global__ void l1_rows(float *m, int rows, int cols)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows) {
        float s = 0.f;
        for (int j = 0; j < cols; j++) s += fabsf(m[i * cols + j]);
        for (int j = 0; j < cols; j++) m[i * cols + j] /= (s + 1e-6f);
    }
}
""",
    "f32-softmax-three-passes": """
extern "C" __global__ void softmax_rows(const float *x, float *y, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float *in = x + (size_t)r * cols;
        float *out = y + (size_t)r * cols;
        float m = -3.0e38f;
        for (int j = 0; j < cols; j++) m = fmaxf(m, in[j]);
        float s = 0.f;
        for (int j = 0; j < cols; j++) {
            float e = expf(in[j] - m);
            out[j] = e;
            s += e;
        }
        for (int j = 0; j < cols; j++) out[j] = out[j] / s;
    }
}
""",
}

Args = Callable[[int, int], tuple[Buf | str, ...]]
BF, H, F = "__nv_bfloat16", "__half", "float"
EMULATED: dict[str, tuple[str, Args, int]] = {
    "bf16-scale-rows-size_t-offset": (
        "scale_rows",
        lambda r, c: (Buf(BF, r * c), Buf(BF, c), Buf(BF, r * c), Buf(F, r), f"{r}", f"{c}"),
        8,
    ),
    "u8-asymmetric-quant-row-pointers": (
        "quant_u8",
        lambda r, c: (Buf(H, r * c), Buf("unsigned char", r * c), Buf(F, r), f"{r}", f"{c}"),
        16,
    ),
    "f32-gather-rows-by-id": (
        "gather_rows",
        lambda r, c: (Buf("long long", r), Buf(F, 997 * c), Buf(F, r * c), f"{r}", f"{c}"),
        4,
    ),
    "f32-l1-normalise-in-place": ("l1_rows", lambda r, c: (Buf(F, r * c), f"{r}", f"{c}"), 4),
    "f32-softmax-three-passes": (
        "softmax_rows",
        lambda r, c: (Buf(F, r * c), Buf(F, r * c), f"{r}", f"{c}"),
        4,
    ),
}

LAUNCH = LaunchContext(grid=["ceil_div(rows, 64)"], block=[64], params={"rows": 1000})


def _vectorised(source: str) -> list[Candidate]:
    req = RewriteRequest(source=source, language="cuda", transform="cooperative-row", launch=LAUNCH)
    return [
        c
        for c in cooperative_row.propose(req.model_copy(update={"max_candidates": 8}))
        if c.parameters.get("vector_lanes")
    ]


def test_every_form_is_emulated() -> None:
    assert sorted(EMULATED) == sorted(FORMS)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_warp_and_block_variants_come_vectorised_first(name: str) -> None:
    req = RewriteRequest(source=FORMS[name], language="cuda", transform="cooperative-row", launch=LAUNCH)
    cands = cooperative_row.propose(req.model_copy(update={"max_candidates": 8}))
    flags = [bool(c.parameters.get("vector_lanes")) for c in cands]
    half = len(cands) // 2  # warp, [16 lanes (map passes),] block: vectorised first, then scalar
    assert flags == [True] * half + [False] * half and half in (2, 3)
    width = EMULATED[name][2]
    for cand in cands[:half]:
        assert "reinterpret_cast<const " in cand.source and "& 15ull) == 0ull" in cand.source
        assert f"perfagent_groups * {width};" in cand.source, "the group is 16 bytes of the smallest element"
        assert "perfagent_done + coop_" in cand.source, "a scalar loop keeps the tail"


def _shapes(width: int) -> list[tuple[int, int]]:
    """Rows whose length is a multiple of the group (every row 16-byte aligned: the vector path, with
    and without a tail of groups), and rows that are not (misaligned rows take the scalar loop)."""
    return [(3, 8 * width), (5, 64 * width + width), (7, 333), (2, 3)]


@pytest.mark.parametrize("name", sorted(EMULATED))
def test_vectorised_rows_match_the_original_block_by_block(name: str, tmp_path: Path) -> None:
    kernel, args, width = EMULATED[name]
    sharers = {"block / 32": 32, "block / 16": 16, 1: 64}
    for cand in _vectorised(FORMS[name]):
        threads = sharers[cand.parameters["rows_per_block"]]  # type: ignore[index]
        cases = [
            Case(args(r, c), ((-(-r // 64), 1), (64, 1)), ((-(-r // 64) * threads, 1), (64, 1)), f"{r}x{c}")
            for r, c in _shapes(width)
        ]
        # a bf16 output rounds a sum taken in another order to a neighbouring bf16 (2^-8 apart)
        tol = 8e-3 if name.startswith("bf16") else 2e-5
        cuda_blocks.assert_same(tmp_path, FORMS[name], cand.source, kernel, cases, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_vectorised_candidates_compile(name: str, tmp_path: Path) -> None:
    results = nvcc_compile({f"{n}": c.source for n, c in enumerate(_vectorised(FORMS[name]))}, tmp_path)
    assert_compiled(results)


LOOP_HEAD = "for (int i = coop_lane; i < n; i += 32)"
REFUSED = {
    "strided-write": (f"{LOOP_HEAD} out[2 * i] = x[i];", "writes out off the counter"),
    "inner-loop": (f"{LOOP_HEAD} {{ for (int k = 0; k < 3; ++k) out[i] += x[i]; }}", "a loop inside"),
    "lane-in-body": (f"{LOOP_HEAD} out[i] = x[i] * coop_lane;", "coop_lane in its body"),
    "written-two-ways": (f"{LOOP_HEAD} out[i] = out[i + 1] + x[i];", "written and also read"),
    "bound-assigned": (f"{LOOP_HEAD} {{ out[i] = x[i]; n--; }}", "assigns n"),
    "other-step": ("for (int i = coop_lane; i < n; i += 64) out[i] = x[i];", "does not step by"),
    "local-pointer-and-a-store": (
        f"{LOOP_HEAD} {{ const float *p = nullptr; out[i] = x[i]; if (p) out[i] += p[i]; }}",
        "declares a pointer",
    ),
    "no-vector-form": ("for (int i = coop_lane; i < n; i += 32) bits[i] = 0;", "no 16-byte vector form"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_loops_say_why(name: str) -> None:
    body, reason = REFUSED[name]
    source = (
        "struct S { int a; };\n__global__ void k(const float *x, float *out, S *bits, int n) {\n"
        f"    const int coop_lane = threadIdx.x % 32;\n    {body}\n}}\n"
    )
    why = vectorize_lanes(source, None, "coop_lane", "32")
    assert isinstance(why, str) and reason in why, why


def test_a_pointer_the_body_declares_or_a_shadowed_name_is_not_streamed() -> None:
    """The streams' bases are taken before the loop: a pointer declared in the body is not in scope
    there, and a name declared twice could be another element type (4 or 2 bytes per element)."""
    head = "__global__ void k(const float *x, float *out, int n) {\n    const int coop_lane = threadIdx.x % 32;\n    float s = 0.f;\n"
    local = (
        head
        + "    for (int i = coop_lane; i < n; i += 32) { const float *p = nullptr; s += p ? p[i] : x[i]; }\n}\n"
    )
    done = vectorize_lanes(local, None, "coop_lane", "32")
    assert not isinstance(done, str) and "p_vb" not in done[0] and "x_vb" in done[0] and "p[i]" in done[0]
    shadowed = head + (
        "    { const __half *y = 0; (void)y; }\n    const float *y = x;\n"
        "    for (int i = coop_lane; i < n; i += 32) out[i] = y[i];\n}\n"
    )
    done = vectorize_lanes(shadowed, None, "coop_lane", "32")
    assert isinstance(done, str) or "y_vb" not in done[0]
