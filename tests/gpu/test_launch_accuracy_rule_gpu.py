"""The accuracy rule for launch-spec kernels on a GPU: the original (our own row cumsum, one thread per row)
is promoted to double, compiled with NVRTC and launched; a warp-scan rewrite that sums in another order
falls outside the spec's tight tolerance and passes through the rule, a rewrite that drops one term fails.
Prints what it measured (run with ``-s``)."""

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
