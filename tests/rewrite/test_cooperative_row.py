"""cooperative-row: positive and refused forms on real parse trees, nvcc builds of every candidate, and a
lane-level emulation showing the warp's strided partials + butterfly give the row's result."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from perfagent.rewrite.base import Candidate, LaunchContext, RewriteRequest
from perfagent.rewrite.embed.device import device_code
from perfagent.rewrite.embed.literals import find_inline_sources
from perfagent.rewrite.recipes import RECIPES, cooperative_row
from perfagent.rewrite.recipes_backend import RecipesRewriter
from tests.rewrite.cuda_lanes import Buf, Case, assert_same
from tests.rewrite.helpers import ROOT, assert_compiled, nvcc_compile, nvcc_or_skip

GEMV = """
extern "C" __global__ void gemv(const float* A, const float* x, float* y, int rows, int cols)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    float s = 0.f;
    for (int c = 0; c < cols; ++c) s += A[row * cols + c] * x[c];
    y[row] = s;
}
"""

FORMS = {
    "gemv-early-return": GEMV,
    "row-sum-size_t-guard-block": """
__global__ void rowsum(const double* __restrict__ m, double* __restrict__ out, size_t n, size_t d)
{
    size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x;
    if (i < n) {
        double acc = 0.0;
        for (size_t j = 0; j < d; j++) acc = acc + m[i * d + j];
        out[i] = acc;
    }
}
""",
    "row-max-fmaxf": """
extern "C" __global__ void rowmax(const float* v, float* out, int R, int C)
{
    int r = blockDim.x * blockIdx.x + threadIdx.x;
    if (r >= R) return;
    float best = -1e30f;
    for (int c = 0; c < C; c++) best = fmaxf(best, v[(long long)r * C + c]);
    out[r] = best;
}
""",
    "row-range-if-updates": """
extern "C" __global__ void rowrange(const double* v, double* out, int R, int C)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= R) return;
    double hi = -1e300;
    double lo = 1e300;
    for (int c = 0; c < C; ++c) {
        double e = v[r * C + c];
        if (e > hi) hi = e;
        if (lo > e) { lo = e; }
    }
    out[r] = hi - lo;
}
""",
    "softmax-three-pass-pointer-offset": """
extern "C" __global__ void softmax(const float* x, float* y, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float* in = x + (size_t)r * cols;
        float* out = y + (size_t)r * cols;
        float m = -3.0e38f;
        for (int j = 0; j < cols; j++) m = fmaxf(m, in[j]);
        float s = 0.f;
        for (int j = 0; j < cols; j++) s += expf(in[j] - m);
        for (int j = 0; j < cols; j++) out[j] = expf(in[j] - m) / s;
    }
}
""",
    "l2norm-scalar-between-passes": """
extern "C" __global__ void l2n(const float* x, float* y, int b_n, int dim)
{
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= b_n) return;
    float ss = 0.0f;
    for (int d = 0; d < dim; ++d) ss += x[(size_t)b * dim + d] * x[(size_t)b * dim + d];
    float inv = rsqrtf(ss + 1e-12f);
    for (int d = 0; d < dim; ++d) y[(size_t)b * dim + d] = x[(size_t)b * dim + d] * inv;
}
""",
    "layernorm-two-sums": """
extern "C" __global__ void ln(const float* x, float* y, int n, int h)
{
    long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n) return;
    const float* p = x + row * h;
    float sum = 0.f;
    for (int k = 0; k < h; k++) sum += p[k];
    float mean = sum / h;
    float var = 0.f;
    for (int k = 0; k < h; k++) var += (p[k] - mean) * (p[k] - mean);
    float rstd = rsqrtf(var / h + 1e-5f);
    for (int k = 0; k < h; k++) y[row * h + k] = (p[k] - mean) * rstd;
}
""",
    "row-min-int": """
extern "C" __global__ void rowmin(const int* v, int* out, int R, int C)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < R) {
        int lo = 2147483647;
        for (int c = 0; c < C; c++) lo = min(lo, v[r * C + c]);
        out[r] = lo;
    }
}
""",
    # forms of the public-style KernelBench solutions (examples/unseen/kernelbench), spelled anew here
    "softmax-fused-pass-max-from-element-0-rmw": """
extern "C" __global__ void smax(const float* __restrict__ x, float* __restrict__ y, int R, int C)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < R) {
        const float* __restrict__ src = x + (size_t)r * C;
        float* dst = &y[(size_t)r * C];
        float hi = src[0];
        for (int k = 1; k < C; k++) {
            hi = max(hi, src[k]);
        }
        float total = 0.0f;
        for (int k = 0; k < C; k++) {
            float e = __expf(src[k] - hi);
            dst[k] = e;
            total += e;
        }
        for (int k = 0; k < C; k++) {
            dst[k] /= total;
        }
    }
}
""",
    "l2norm-per-iteration-local": """
extern "C" __global__ void l2(const float* in, float* out, int rows, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= rows) return;
    float acc = 0.0f;
    for (int j = 0; j < n; j++) {
        float v = in[t * n + j];
        acc = acc + v * v;
    }
    float scale = 1.0f / (sqrtf(acc) + 1e-6f);
    for (int j = 0; j < n; j++) {
        int at = t * n + j;
        out[at] = in[at] * scale;
    }
}
""",
    "layernorm-one-pass-two-sums-scalar-stores": """
extern "C" __global__ void lnorm(const float* x, const float* w, const float* b, float* y, float* mu,
                                 float* rs, int rows, int h)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        const float* xr = x + row * h;
        float s = 0.f, s2 = 0.f;
        for (int k = 0; k < h; ++k) {
            float v = xr[k];
            s += v;
            s2 += v * v;
        }
        float mean = s / h;
        float rstd = rsqrtf(s2 / h - mean * mean + 1e-5f);
        for (int k = 0; k < h; ++k) y[row * h + k] = (xr[k] - mean) * rstd * w[k] + b[k];
        mu[row] = mean;
        rs[row] = rstd;
    }
}
""",
    "sum-from-element-0": """
extern "C" __global__ void rsum(const float* v, float* out, int R, int C)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= R) return;
    float s = v[r * C];
    for (int c = 1; c < C; c++) s += v[r * C + c];
    out[r] = s;
}
""",
    "conditional-updates-if-else-swapped-operands": """
extern "C" __global__ void stats(const float* x, const int* keep, float* pos, int* count, float* lo,
                                 int R, int C)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= R) return;
    float p = 0.0f;
    int n = 0;
    float m = 1e30f;
    for (int c = 0; c < C; ++c) {
        float v = x[r * C + c];
        if (v > 0.0f && keep[r * C + c] != 0) {
            p = v + p;
            n++;
        } else {
            m = fminf(v, m);
        }
    }
    pos[r] = p;
    count[r] = n;
    lo[r] = m;
}
""",
    "written-row-read-by-later-passes": """
extern "C" __global__ void center(const float* x, float* out, int R, int C)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < R) {
        float* o = out + r * C;
        float s = 0.f;
        for (int c = 0; c < C; c++) s += x[r * C + c];
        for (int c = 0; c < C; c++) o[c] = x[r * C + c] - s / C;
        float ss = 0.f;
        for (int c = 0; c < C; c++) ss += o[c] * o[c];
        for (int c = 0; c < C; c++) o[c] *= rsqrtf(ss + 1.0f);
    }
}
""",
    "accumulator-reused-unbraced-loops-if-else-store": """
extern "C" __global__ void two(const float* a, const float* b, float* out, float bias, int useb, int R, int C)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= R) return;
    float s = bias;
    for (int c = 0; c < C; c++) s += a[r * C + c];
    if (useb)
        for (int c = 0; c < C; c++) s += b[r * C + c];
    if (s > 0.f)
        out[r] = s;
    else
        out[r] = -s;
    out[r] += 1.0f;
}
""",
    "dot-per-row-macro-block": """
#define THREADS 128
extern "C" __global__ void rowdot(const float* a, const float* b, float* out, int rows, int cols)
{
    int t = blockIdx.x * THREADS + threadIdx.x;
    if (t >= rows) return;
    float acc = 0.0f;
    for (int k = 0; k < cols; k += 1) acc += a[t * cols + k] * b[t * cols + k];
    out[t] = acc;
}
""",
}

REFUSED = {
    "prefix sum (non-associative use)": (
        GEMV.replace(
            "s += A[row * cols + c] * x[c];", "{ s += A[row * cols + c]; A2[row * cols + c] = s; }"
        ).replace("const float* A,", "const float* A, float* A2,"),
        "not an associative reduction",
    ),
    "shared memory": (
        GEMV.replace("{\n    int row", "{\n    __shared__ float t[32];\n    int row"),
        "__shared__",
    ),
    "builtin elsewhere": (GEMV.replace("y[row] = s;", "y[row] = s + blockIdx.x;"), "outside the row index"),
    "triangular nest storing by the inner counter": (
        GEMV.replace("const float* A", "float* A").replace(
            "for (int c = 0; c < cols; ++c) s += A[row * cols + c] * x[c];",
            "for (int c = 0; c < cols; ++c) for (int k = 0; k < c; ++k) { A[row * cols + k] += x[c]; s += x[k]; }",
        ),
        "lanes could store the same element",
    ),
    "2-D index": (
        GEMV.replace(
            "int row = blockIdx.x * blockDim.x + threadIdx.x;",
            "int row = blockIdx.x * blockDim.x + threadIdx.x + threadIdx.y;",
        ),
        "mixes x and y",
    ),
    "accumulator used in its own term": (
        GEMV.replace("s += A[row * cols + c] * x[c];", "s += s * A[row * cols + c];"),
        "not an associative reduction",
    ),
    "step of two": (GEMV.replace("++c", "c += 2"), "does not step by one"),
    "no reduction": (
        'extern "C" __global__ void cp(const float* a, float* b, int n, int m) { int r = blockIdx.x * blockDim.x + threadIdx.x; if (r < n) { for (int j = 0; j < m; ++j) { float v = a[r * m + j]; } b[r] = 0.f; } }',
        "no loop reduces over the row or stores along it",
    ),
}

REFUSED.update(
    {
        "masked running sum (a scan)": (
            """
extern "C" __global__ void scan(const float* x, const unsigned char* keep, float* y, int R, int C)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= R) return;
    float run = 0.f;
    for (int c = 0; c < C; ++c) {
        if (keep[r * C + c]) run += x[r * C + c];
        y[r * C + c] = run;
    }
}
""",
            "loop-carried dependency",
        ),
        "store not indexed by the counter (last writer wins)": (
            GEMV.replace(
                "s += A[row * cols + c] * x[c];",
                "{ s += A[row * cols + c] * x[c]; A2[row] = A[row * cols + c]; }",
            ).replace("const float* A,", "const float* A, float* A2,"),
            "is not offset + c",
        ),
        "column-strided element pass": (
            GEMV.replace("y[row] = s;", "for (int c = 0; c < cols; ++c) A2[c * rows + row] = s;").replace(
                "const float* A,", "const float* A, float* A2,"
            ),
            "is not offset + c",
        ),
        "neighbour read of a written row": (
            GEMV.replace(
                "y[row] = s;",
                "for (int c = 1; c < cols; ++c) A2[row * cols + c] = A2[row * cols + c - 1] + s;",
            ).replace("const float* A,", "const float* A, float* A2,"),
            "lanes would share its elements",
        ),
        "passes with different starts": (
            GEMV.replace(
                "y[row] = s;",
                "for (int c = 1; c < cols; ++c) A2[row * cols + c] = s;\n"
                "    for (int c = 0; c < cols; ++c) A2[row * cols + c] *= 2.f;",
            ).replace("const float* A,", "const float* A, float* A2,"),
            "start at 1 and 0",
        ),
        "scalar store read back": (
            GEMV.replace("y[row] = s;", "y[row] = s;\n    float t = y[row] * 2.f;\n    A2[row] = t;").replace(
                "const float* A,", "const float* A, float* A2,"
            ),
            "lane 0 alone stores it",
        ),
        "counter compared with !=": (GEMV.replace("c < cols", "c != cols"), "runs while c != cols"),
        "break in the loop": (
            GEMV.replace("s += A[row * cols + c] * x[c];", "{ if (x[c] < 0.f) break; s += x[c]; }"),
            "holds a break statement",
        ),
        "row pointer moved": (
            GEMV.replace("float s = 0.f;", "A += row * cols;\n    float s = 0.f;"),
            "the pointer A is moved",
        ),
        "call in the loop": (
            GEMV.replace("s += A[row * cols + c] * x[c];", '{ s += x[c]; printf("%f", s); }'),
            "neither an assignment nor an update",
        ),
        "local array": (
            GEMV.replace(
                "float s = 0.f;", "float s = 0.f;\n    float tmp[4] = {0.f, 0.f, 0.f, 0.f};"
            ).replace("s += A[row * cols + c] * x[c];", "{ tmp[c & 3] = x[c]; s += x[c]; }"),
            "neither a pointer parameter nor a row pointer",
        ),
        "pointer dereference": (GEMV.replace("y[row] = s;", "*y = s;"), "dereferences a pointer"),
        "unknown pointer": (
            GEMV.replace("float s = 0.f;", "const float* p = row % 2 ? A : x;\n    float s = 0.f;"),
            "its buffer is unknown",
        ),
        "mixed combines": (
            GEMV.replace("s += A[row * cols + c] * x[c];", "{ s += x[c]; s = fmaxf(s, x[c]); }"),
            "combines s with both",
        ),
        "update hidden in a store": (
            GEMV.replace("s += A[row * cols + c] * x[c];", "A2[row * cols + c] = (s += x[c]);").replace(
                "const float* A,", "const float* A, float* A2,"
            ),
            "inside another expression",
        ),
        "address of an accumulator": (
            "__device__ void add(float* p, float v) { *p += v; }\n"
            + GEMV.replace("s += A[row * cols + c] * x[c];", "{ float v = fmaxf(0.f, x[c]); add(&s, v); }"),
            "neither an assignment nor an update",
        ),
        "address of a scalar in an expression": (
            "__device__ float add(float* p, float v) { *p += v; return v; }\n"
            + GEMV.replace("float s = 0.f;", "float s = 0.f;\n    float t = 0.f;").replace(
                "s += A[row * cols + c] * x[c];", "{ float v = add(&t, x[c]); s += v; }"
            ),
            "takes an address",
        ),
        "offset moved between passes": (
            GEMV.replace(
                "y[row] = s;",
                "int off = row * cols;\n    for (int c = 0; c < cols; ++c) A2[off + c] = s;\n    off += 1;\n"
                "    for (int c = 0; c < cols; ++c) A2[off + c] *= 2.f;",
            ).replace("const float* A,", "const float* A, float* A2,"),
            "uses off, which is assigned or declared more than once",
        ),
        "row pointer declared twice": (
            GEMV.replace(
                "y[row] = s;",
                "{ float* o = A2 + row * cols; for (int c = 0; c < cols; ++c) o[c] = s; }\n"
                "    { float* o = A2 + row * cols + 1; for (int c = 0; c < cols; ++c) o[c] *= 2.f; }",
            ).replace("const float* A,", "const float* A, float* A2,"),
            "uses o, which is assigned or declared more than once",
        ),
        "store through a reassigned per-iteration index": (
            'extern "C" __global__ void rev(const float* a, float* b, int n, int m) { int r = blockIdx.x * blockDim.x + threadIdx.x; if (r < n) for (int j = 0; j < m; ++j) { int k = j; k = m - 1 - k; b[r * m + k] = a[r * m + j]; } }',
            "uses k, which is assigned or declared more than once",
        ),
    }
)

LAUNCH = LaunchContext(grid=["ceil_div(rows, 256)"], block=[256], params={"rows": 1000})


def _request(source: str, launch: LaunchContext = LAUNCH) -> RewriteRequest:
    return RewriteRequest(source=source, language="cuda", transform="cooperative-row", launch=launch)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_positive_forms(name: str) -> None:
    req = _request(FORMS[name])
    assert cooperative_row.applies(req) is None, cooperative_row.applies(req)
    cand = cooperative_row.propose(req)[0]
    src = cand.source
    assert "/ 32" in src and "coop_lane = threadIdx.x % 32" in src
    assert "+= 32" in src and "__shfl_xor_sync" in src
    assert cand.launch is not None and cand.launch.grid == ["32 * (ceil_div(rows, 256))"]
    reductions = int(cand.parameters["reductions"])  # type: ignore[arg-type]
    assert src.count("__shfl_xor_sync") == reductions >= 1


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_forms(name: str) -> None:
    source, reason = REFUSED[name]
    why = cooperative_row.applies(_request(source))
    assert why is not None and reason in why, why
    assert cooperative_row.propose(_request(source)) == []


def test_block_must_be_a_multiple_of_32_and_launch_1d() -> None:
    odd = LaunchContext(grid=["ceil_div(rows, 48)"], block=["B"], params={"rows": 100, "B": 48})
    assert "multiple of 32" in (cooperative_row.applies(_request(GEMV, odd)) or "")
    two_d = LaunchContext(grid=[1, 1], block=[32, 8])
    assert "more than one dimension" in (cooperative_row.applies(_request(GEMV, two_d)) or "")


def test_registered_and_in_the_catalog() -> None:
    from knowledge.transforms import transform

    assert RECIPES["cooperative-row"].transforms == ("cooperative-row",)
    assert transform("cooperative-row").recipes == ["cooperative-row", "cooperative-scan"]


@pytest.mark.parametrize("cols", [1, 31, 32, 33, 1000])
def test_lane_strided_partials_and_butterfly_give_the_row_sum_and_max(cols: int) -> None:
    """Emulate the rewritten loop and shuffle over 32 lanes: every lane ends with the row's value."""
    rng = np.random.default_rng(cols)
    row = rng.normal(size=cols).astype(np.float32)
    for combine, init, reference in (
        (np.add, 0.0, row.sum(dtype=np.float64)),
        (np.maximum, -np.inf, row.max()),
    ):
        lanes = np.full(32, init, dtype=np.float32)
        for lane in range(32):
            for j in range(lane, cols, 32):
                lanes[lane] = combine(lanes[lane], row[j])
        offset = 16
        while offset > 0:
            lanes = combine(lanes, lanes[np.arange(32) ^ offset])
            offset >>= 1
        assert np.allclose(lanes, reference, rtol=1e-5, atol=1e-5)
        assert np.all(lanes == lanes[0]), "the butterfly leaves the same value in every lane"


@pytest.mark.parametrize("name", sorted(FORMS))
def test_candidates_compile(name: str, tmp_path: Path) -> None:
    cand = cooperative_row.propose(_request(FORMS[name]))[0]
    assert_compiled(nvcc_compile({name: cand.source}, tmp_path))


# ------------------------------------------------------------------------------------- CPU lane emulation

F, INT = "float", "int"
Args = Callable[[int, int], tuple[Buf | str, ...]]
EMULATED: dict[str, tuple[str, Args, int]] = {
    # form: (kernel, arguments for rows x cols, block)
    "gemv-early-return": ("gemv", lambda r, c: (Buf(F, r * c), Buf(F, c), Buf(F, r), f"{r}", f"{c}"), 64),
    "row-sum-size_t-guard-block": (
        "rowsum",
        lambda r, c: (Buf("double", r * c), Buf("double", r), f"(size_t){r}", f"(size_t){c}"),
        64,
    ),
    "row-max-fmaxf": ("rowmax", lambda r, c: (Buf(F, r * c), Buf(F, r), f"{r}", f"{c}"), 64),
    "row-range-if-updates": (
        "rowrange",
        lambda r, c: (Buf("double", r * c), Buf("double", r), f"{r}", f"{c}"),
        64,
    ),
    "softmax-three-pass-pointer-offset": (
        "softmax",
        lambda r, c: (Buf(F, r * c), Buf(F, r * c), f"{r}", f"{c}"),
        64,
    ),
    "l2norm-scalar-between-passes": ("l2n", lambda r, c: (Buf(F, r * c), Buf(F, r * c), f"{r}", f"{c}"), 64),
    "layernorm-two-sums": ("ln", lambda r, c: (Buf(F, r * c), Buf(F, r * c), f"{r}", f"{c}"), 64),
    "row-min-int": ("rowmin", lambda r, c: (Buf(INT, r * c), Buf(INT, r), f"{r}", f"{c}"), 64),
    "dot-per-row-macro-block": (
        "rowdot",
        lambda r, c: (Buf(F, r * c), Buf(F, r * c), Buf(F, r), f"{r}", f"{c}"),
        128,  # the row index is written with THREADS = 128
    ),
    "softmax-fused-pass-max-from-element-0-rmw": (
        "smax",
        lambda r, c: (Buf(F, r * c), Buf(F, r * c), f"{r}", f"{c}"),
        64,
    ),
    "l2norm-per-iteration-local": ("l2", lambda r, c: (Buf(F, r * c), Buf(F, r * c), f"{r}", f"{c}"), 64),
    "layernorm-one-pass-two-sums-scalar-stores": (
        "lnorm",
        lambda r, c: (
            Buf(F, r * c),
            Buf(F, c),
            Buf(F, c),
            Buf(F, r * c),
            Buf(F, r),
            Buf(F, r),
            f"{r}",
            f"{c}",
        ),  # fmt: skip
        64,
    ),
    "sum-from-element-0": ("rsum", lambda r, c: (Buf(F, r * c), Buf(F, r), f"{r}", f"{c}"), 64),
    "conditional-updates-if-else-swapped-operands": (
        "stats",
        lambda r, c: (
            Buf(F, r * c),
            Buf(INT, r * c, "mask"),
            Buf(F, r),
            Buf(INT, r),
            Buf(F, r),
            f"{r}",
            f"{c}",
        ),
        64,
    ),
    "written-row-read-by-later-passes": (
        "center",
        lambda r, c: (Buf(F, r * c), Buf(F, r * c), f"{r}", f"{c}"),
        64,
    ),
    "accumulator-reused-unbraced-loops-if-else-store": (
        "two",
        lambda r, c: (Buf(F, r * c), Buf(F, r * c), Buf(F, r), "0.75f", f"{c % 2}", f"{r}", f"{c}"),
        64,
    ),
}
SHAPES = [(3, 1), (3, 100), (70, 33), (70, 64)]
"""rows x cols: a row shorter than a warp (lanes 1-31 idle), rows of several warps' width and not a
multiple of 32, and 70 rows over two original blocks of 64 (a partial block whose warps return whole)."""


def _cases(args: Args, block: int) -> list[Case]:
    out = []
    for rows, cols in SHAPES:
        grid = -(-rows // block)
        out.append(Case(args(rows, cols), (grid, block), (32 * grid, block), f"rows={rows} cols={cols}"))
    return out


def test_every_positive_form_is_emulated() -> None:
    assert sorted(EMULATED) == sorted(FORMS)


@pytest.mark.parametrize("name", sorted(EMULATED))
def test_rewrite_matches_the_original_lane_by_lane(name: str, tmp_path: Path) -> None:
    """32 real lanes per warp, shuffles through a barrier: the warp-per-row kernel stores what the
    row-per-thread kernel stores (sums within rounding), and never shuffles with a lane that left."""
    kernel, args, block = EMULATED[name]
    cand = cooperative_row.propose(_request(FORMS[name]))[0]
    assert_same(tmp_path, FORMS[name], cand.source, kernel, _cases(args, block), rtol=2e-5, atol=2e-5)


BLOCK_LAUNCH = LaunchContext(grid=["ceil_div(rows, 64)"], block=[64], params={"rows": 1000})


def _block_variant(source: str) -> Candidate:
    cands = cooperative_row.propose(_request(source, BLOCK_LAUNCH))
    [blocked] = [
        c for c in cands if c.parameters.get("rows_per_block") == 1 and not c.parameters.get("vector_lanes")
    ]
    return blocked


@pytest.mark.parametrize("name", sorted(EMULATED))
def test_block_per_row_matches_the_original_block_by_block(name: str, tmp_path: Path) -> None:
    """The block-per-row variant on the block-synchronous emulator (real barriers around the shared
    trees): it stores what the row-per-thread kernel stores, and never splits a block at a barrier."""
    from tests.rewrite import cuda_blocks

    kernel, args, block = EMULATED[name]
    cand = _block_variant(FORMS[name])
    assert cand.launch is not None and cand.launch.grid == ["(ceil_div(rows, 64)) * (64)"]
    # warp butterflies, then one shared step: two barriers per reduction, not a log2(block) tree
    assert "__syncthreads();" in cand.source and "__shfl_xor_sync" in cand.source
    assert "s_ >>= 1" not in cand.source

    def blocks_args(rows: int, cols: int) -> tuple[cuda_blocks.Buf | str, ...]:
        return tuple(cuda_blocks.Buf(a.ctype, a.size) if isinstance(a, Buf) else a for a in args(rows, cols))

    cases = [
        cuda_blocks.Case(
            blocks_args(r, c),
            ((-(-r // block), 1), (block, 1)),
            ((-(-r // block) * block, 1), (block, 1)),
            f"{r}x{c}",
        )
        for r, c in SHAPES
    ]
    cuda_blocks.assert_same(tmp_path, FORMS[name], cand.source, kernel, cases, rtol=2e-5, atol=2e-5)


def test_block_per_row_takes_any_whole_number_of_warps() -> None:
    """The warp butterflies + one shared step need whole warps, not a power of two (a tree did)."""
    cands = cooperative_row.propose(
        _request(
            FORMS["gemv-early-return"],
            LaunchContext(grid=["ceil_div(rows, 96)"], block=[96], params={"rows": 1000}),
        )
    )
    assert [c.parameters.get("rows_per_block") for c in cands][:2] == ["block / 32", 1]


def test_the_emulation_catches_a_sum_counted_32_times(tmp_path: Path) -> None:
    """Without the lane-0 reset, a sum that starts from an element counts it in every lane."""
    kernel, args, block = EMULATED["sum-from-element-0"]
    cand = cooperative_row.propose(_request(FORMS["sum-from-element-0"]))[0]
    wrong = cand.source.replace("if (coop_lane != 0) s = 0;", "")
    assert wrong != cand.source
    from tests.rewrite.cuda_lanes import run

    ok, out = run(tmp_path, FORMS["sum-from-element-0"], wrong, kernel, _cases(args, block))
    assert not ok and "differs" in out


# ------------------------------------------------------------------------------------- KernelBench solutions

KERNELBENCH = ROOT / "examples" / "unseen" / "kernelbench"
SOLUTIONS: dict[str, tuple[str, Args] | None] = {
    # solution: (kernel, arguments for rows x cols) when cooperative-row applies, None when it refuses
    "01_layernorm": None,
    "02_softmax": ("softmax_kernel", lambda r, c: (Buf(F, r * c), Buf(F, r * c), f"{r}", f"{c}")),
    "03_matvec": ("matvec_kernel", lambda r, c: (Buf(F, r * c), Buf(F, c), Buf(F, r), f"{r}", f"{c}")),
    "04_l2norm": ("l2norm_kernel", lambda r, c: (Buf(F, r * c), Buf(F, r * c), f"{r}", f"{c}")),
    "05_masked_cumsum": None,
    "06_square_matmul": None,
}
SCANNED = {"05_masked_cumsum"}
"""Refused by cooperative-row (a loop-carried running sum) and taken by cooperative-scan instead."""
REASONS = {
    "01_layernorm": [
        "kernel layernorm_stats_kernel: cooperative-row, cooperative-scan: the kernel uses __shared__",
        "kernel layernorm_apply_kernel: cooperative-row, cooperative-scan: the kernel has no loop over the row",
    ],
    "06_square_matmul": ["more than one dimension"],
}


def _solution(name: str) -> RewriteRequest:
    path = KERNELBENCH / f"{name}_solution.py"
    return RewriteRequest(
        source=path.read_text(encoding="utf-8"),
        language="python",
        transform="cooperative-row",
        path=str(path.relative_to(ROOT)),
    )


def _cuda_of(python: str) -> str:
    [found] = find_inline_sources(python)
    return found.cuda_text


def test_kernelbench_solutions_apply_or_say_why() -> None:
    assert sorted(SOLUTIONS) == sorted(
        p.name.removesuffix("_solution.py") for p in KERNELBENCH.glob("*_solution.py")
    )
    rewriter = RecipesRewriter()
    for name, applies in SOLUTIONS.items():
        why = rewriter.applies(_solution(name))
        if name in SCANNED:  # a running sum: the transform's other recipe (test_cooperative_scan.py)
            recipes = {c.recipe for c in rewriter.propose(_solution(name))}
            assert why is None and recipes == {"cooperative-scan"}, (why, recipes)
            continue
        if applies is not None:
            assert why is None, f"{name}: {why}"
            cand = rewriter.propose(_solution(name))[0]
            assert cand.recipe == "cooperative-row" and "__shfl_xor_sync" in cand.source
            assert "32 * (" in cand.source  # the wrapper's grid, written back
        else:
            assert why is not None and all(part in why for part in REASONS[name]), f"{name}: {why}"
            assert rewriter.propose(_solution(name)) == []


@pytest.mark.parametrize("name", sorted(n for n, a in SOLUTIONS.items() if a is not None))
def test_kernelbench_rewrites_match_the_original_lane_by_lane(name: str, tmp_path: Path) -> None:
    entry = SOLUTIONS[name]
    assert entry is not None
    kernel, args = entry
    cand = RecipesRewriter().propose(_solution(name))[0]
    original = device_code(_cuda_of(_solution(name).source))
    rewritten = device_code(_cuda_of(cand.source))
    assert "coop_lane" in rewritten and "torch" not in rewritten
    cases = _cases(args, 64) + [Case(args(9, 300), (1, 256), (32, 256), "the wrapper's block of 256")]
    assert_same(tmp_path, original, rewritten, kernel, cases, rtol=2e-5, atol=2e-5)


def test_kernelbench_rewrites_compile_with_the_torch_stub(tmp_path: Path) -> None:
    """The whole rewritten load_inline unit, wrapper launch included, against the declaration-only stub."""
    nvcc = nvcc_or_skip()
    stub = ROOT / "tests" / "data" / "kernelbench_inline" / "stub"
    names = sorted(n for n, a in SOLUTIONS.items() if a is not None)

    def one(name: str) -> tuple[str, subprocess.CompletedProcess[str]]:
        cand = RecipesRewriter().propose(_solution(name))[0]
        path = tmp_path / f"{name}.cu"
        path.write_text(_cuda_of(cand.source), encoding="utf-8")
        argv = [nvcc, "-arch=sm_90", "-std=c++17", "-c", "-o", "/dev/null", f"-I{stub}", str(path)]
        return name, subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = dict(pool.map(one, names))
    for name, done in results.items():
        assert done.returncode == 0, f"{name}: {done.stderr[-1500:]}"


@pytest.mark.parametrize("name", sorted(n for n, a in SOLUTIONS.items() if a is not None))
def test_kernelbench_block_per_row_matches_the_original_block_by_block(name: str, tmp_path: Path) -> None:
    """The block-per-row candidate of each solution (the one a few long rows want), its launch written
    back into the C++ wrapper: same stores on the block emulator, and the whole unit compiles."""
    from tests.rewrite import cuda_blocks

    entry = SOLUTIONS[name]
    assert entry is not None
    kernel, args = entry
    blocked = [
        c for c in RecipesRewriter().propose(_solution(name)) if c.parameters.get("rows_per_block") == 1
    ]
    # the vectorised-lanes block variant, then the scalar one
    assert [bool(c.parameters.get("vector_lanes")) for c in blocked] == [True, False]
    original = device_code(_cuda_of(_solution(name).source))

    def blocks_args(rows: int, cols: int) -> tuple[cuda_blocks.Buf | str, ...]:
        return tuple(cuda_blocks.Buf(a.ctype, a.size) if isinstance(a, Buf) else a for a in args(rows, cols))

    cases = [cuda_blocks.Case(blocks_args(9, 300), ((1, 1), (256, 1)), ((256, 1), (256, 1)), "9x300")]
    nvcc = nvcc_or_skip()
    stub = ROOT / "tests" / "data" / "kernelbench_inline" / "stub"
    for k, cand in enumerate(blocked):
        unit = _cuda_of(cand.source)
        assert "/ 256 * 256" in unit  # the wrapper's grid: one block of 256 per former thread slot
        cuda_blocks.assert_same(tmp_path, original, device_code(unit), kernel, cases, rtol=2e-5, atol=2e-5)
        path = tmp_path / f"{name}_{k}.cu"
        path.write_text(unit, encoding="utf-8")
        argv = [nvcc, "-arch=sm_90", "-std=c++17", "-c", "-o", "/dev/null", f"-I{stub}", str(path)]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr[-1500:]
