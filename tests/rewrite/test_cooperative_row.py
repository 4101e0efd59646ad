"""cooperative-row: positive and refused forms on real parse trees, nvcc builds of every candidate, and a
lane-level emulation showing the warp's strided partials + butterfly give the row's result."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from perfagent.rewrite.base import LaunchContext, RewriteRequest
from perfagent.rewrite.recipes import RECIPES, cooperative_row

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
    "nested loops": (
        GEMV.replace(
            "for (int c = 0; c < cols; ++c) s += A[row * cols + c] * x[c];",
            "for (int c = 0; c < cols; ++c) for (int k = 0; k < 2; ++k) s += A[row * cols + c] * x[c];",
        ),
        "nested",
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
        'extern "C" __global__ void cp(const float* a, float* b, int n, int m) { int r = blockIdx.x * blockDim.x + threadIdx.x; if (r < n) for (int j = 0; j < m; ++j) b[r * m + j] = a[r * m + j]; }',
        "no loop reduces",
    ),
}

LAUNCH = LaunchContext(grid=["ceil_div(rows, 256)"], block=[256], params={"rows": 1000})


def _request(source: str, launch: LaunchContext = LAUNCH) -> RewriteRequest:
    return RewriteRequest(source=source, language="cuda", transform="cooperative-row", launch=launch)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_positive_forms(name: str) -> None:
    req = _request(FORMS[name])
    assert cooperative_row.applies(req) is None, cooperative_row.applies(req)
    [cand] = cooperative_row.propose(req)
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
    assert transform("cooperative-row").recipes == ["cooperative-row"]


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


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.parametrize("name", sorted(FORMS))
def test_candidates_compile(name: str, tmp_path: Path) -> None:
    [cand] = cooperative_row.propose(_request(FORMS[name]))
    path = tmp_path / "c.cu"
    path.write_text(cand.source)
    done = subprocess.run(
        ["nvcc", "-arch=sm_90", "-c", "-o", str(tmp_path / "c.o"), str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-600:]
