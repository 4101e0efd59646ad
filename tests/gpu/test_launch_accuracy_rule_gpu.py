"""The accuracy rule for launch-spec kernels on a GPU: the original (our own row cumsum, one thread per row;
our own column sum through dynamic shared memory and float atomics) is promoted to double, compiled with
NVRTC and launched; a rewrite that sums in another order falls outside the spec's tight tolerance and
passes through the rule, a rewrite that drops one term fails. Prints what it measured (run with ``-s``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.verify import VerificationResult, verify

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_torch_and_core")]

ORIGINAL = r"""
extern "C" __global__ void rows_cumsum_loop(const float *x, float *out, float scale, int rows, int n)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float cum = 0.0f;
    for (int i = 0; i < n; ++i) {
        cum += x[(size_t)r * n + i];
        out[(size_t)r * n + i] = scale * cum;
    }
}
"""

WARP_SCAN = r"""
extern "C" __global__ void rows_cumsum_warp(const float *x, float *out, float scale, int rows, int n)
{
    int r = blockIdx.x * blockDim.y + threadIdx.y;
    int lane = threadIdx.x;
    if (r >= rows) return;
    float carry = 0.0f;
    for (int c = 0; c < n; c += 32) {
        int i = c + lane;
        float v = i < n ? x[(size_t)r * n + i] : 0.0f;
        DROP
        for (int o = 1; o < 32; o <<= 1) {
            float up = __shfl_up_sync(0xffffffffu, v, o);
            if (lane >= o) v += up;
        }
        if (i < n) out[(size_t)r * n + i] = scale * (carry + v);
        carry += __shfl_sync(0xffffffffu, v, 31);
    }
}
"""

SPEC = """source = "orig.cu"
kernel = "rows_cumsum_loop"
grid = ["ceil_div(rows, 128)"]
block = [128]
[params]
rows = 512
len = 4096
[[check_params]]
rows = 37
len = 101
[tolerance]   # tight on purpose: another summation order falls outside it
atol = 1e-6
rtol = 1e-7
[[args]]
name = "x"
shape = ["rows", "len"]
init = "normal"
mean = 1.0
[[args]]
name = "out"
shape = ["rows", "len"]
role = "output"
[[args]]
name = "scale"
value = 0.5
[[args]]
name = "rows"
dtype = "int32"
value = "rows"
[[args]]
name = "n"
dtype = "int32"
value = "len"
[variants."warp.cu"]
kernel = "rows_cumsum_warp"
grid = ["ceil_div(rows, 8)"]
block = [32, 8]
[variants."dropped.cu"]
kernel = "rows_cumsum_warp"
grid = ["ceil_div(rows, 8)"]
block = [32, 8]
"""


def _show(label: str, result: VerificationResult) -> None:
    e = result.errors
    print(
        f"\n[{label}] verdict={result.verdict} max_abs={e.max_abs_error} vs_fp64={e.max_abs_error_vs_fp64} "
        f"original_vs_fp64={e.original_max_abs_error_vs_fp64} rule_passes={e.accuracy_rule_passes} "
        f"notes={result.notes}"
    )
    for c in result.checks:
        if c.name == "correctness" or not c.passed:
            print(f"    {c.name}: passed={c.passed} {c.detail}")


def _files(tmp_path: Path) -> Path:
    (tmp_path / "orig.cu").write_text(ORIGINAL)
    (tmp_path / "warp.cu").write_text(WARP_SCAN.replace("DROP", ""))
    # one term of every row lost: element 1000's value never enters the sums
    (tmp_path / "dropped.cu").write_text(WARP_SCAN.replace("DROP", "if (i == 1000) v = 0.0f;"))
    spec = tmp_path / "scan.launch.toml"
    spec.write_text(SPEC)
    return spec


def test_reassociated_scan_passes_through_the_rule(tmp_path: Path) -> None:
    spec = _files(tmp_path)
    result = verify(spec, tmp_path / "warp.cu", device="cuda", seeds=3, timeout_s=180)
    _show("warp scan", result)
    assert result.verdict == "pass", result.reason
    assert result.errors.accuracy_rule_passes, "the dtype tolerance alone passed it: the test proves nothing"
    assert result.errors.max_abs_error_vs_fp64 is not None and result.errors.original_max_abs_error_vs_fp64
    assert not any("no float64 run" in n for n in result.notes)


def test_dropped_term_fails_the_rule(tmp_path: Path) -> None:
    spec = _files(tmp_path)
    result = verify(spec, tmp_path / "dropped.cu", device="cuda", seeds=2, timeout_s=180)
    _show("dropped term", result)
    assert result.verdict == "fail"
    correctness = next(c for c in result.checks if c.name == "correctness")
    assert not correctness.passed and "less accurate than the original" in correctness.detail


COLSUM = r"""
extern "C" __global__ void colsum_blocks(const float *x, float *out, int rows, int cols)
{
    extern __shared__ float part[];  // one partial sum per column: cols floats (the spec's shared_mem)
    int r0 = blockIdx.x * 64;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float acc = 0.0f;
        for (int r = r0; r < r0 + 64 && r < rows; ++r) acc += x[(size_t)r * cols + c];
        part[c] = acc;
    }
    __syncthreads();
    for (int c = threadIdx.x; c < cols; c += blockDim.x) atomicAdd(out + c, part[c]);
}
"""

COLSUM_REVERSED = r"""
extern "C" __global__ void colsum_reversed(const float *x, float *out, int rows, int cols)
{
    int r0 = blockIdx.x * 64;
    int r1 = min(r0 + 64, rows);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float acc = 0.0f;
        for (int r = r1 - 1; r >= r0 + SKIP; --r) acc += x[(size_t)r * cols + c];
        atomicAdd(out + c, acc);
    }
}
"""

COLSUM_SPEC = """source = "colsum.cu"
kernel = "colsum_blocks"
grid = ["ceil_div(rows, 64)"]
block = [256]
shared_mem = "cols * 4"
[params]
rows = 16384
cols = 1000
[tolerance]   # tight on purpose: another summation order falls outside it
atol = 1e-6
rtol = 1e-7
[[args]]
name = "x"
shape = ["rows", "cols"]
init = "normal"
mean = 1.0
[[args]]
name = "out"
shape = ["cols"]
role = "inout"
init = "zeros"
[[args]]
name = "rows"
dtype = "int32"
value = "rows"
[[args]]
name = "cols"
dtype = "int32"
value = "cols"
"""


def test_atomic_column_sum_through_doubled_shared_memory(tmp_path: Path) -> None:
    """The promoted original needs twice the dynamic shared memory and double atomicAdd: a reordered
    column sum passes by the rule, one that skips the first row of every block fails."""
    (tmp_path / "colsum.cu").write_text(COLSUM)
    (tmp_path / "reversed.cu").write_text(COLSUM_REVERSED.replace("SKIP", "0"))
    (tmp_path / "skips.cu").write_text(COLSUM_REVERSED.replace("SKIP", "1"))
    spec = tmp_path / "colsum.launch.toml"
    spec.write_text(COLSUM_SPEC)
    good = verify(spec, tmp_path / "reversed.cu", device="cuda", seeds=3, timeout_s=180)
    _show("reversed column sum", good)
    assert good.verdict == "pass", good.reason
    assert not any("no float64 run" in n for n in good.notes), good.notes
    bad = verify(spec, tmp_path / "skips.cu", device="cuda", seeds=2, timeout_s=180)
    _show("column sum skipping a row", bad)
    correctness = next(c for c in bad.checks if c.name == "correctness")
    assert bad.verdict == "fail" and "less accurate than the original" in correctness.detail
