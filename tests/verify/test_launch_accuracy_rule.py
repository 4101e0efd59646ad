"""The accuracy rule for launch-spec kernels: a float output outside the spec's tolerance still passes when
it is no less accurate than the original against a float64 run of the original (its source promoted to
double), and a real bug does not.

``judge_output`` (the decision) is tested on tensors; the protocol end to end runs on the CPU with Python
stand-ins for our own row-cumsum kernels (as ``test_cuda_protocol_cpu`` does): the stand-ins compute in
the dtype of the buffers they get, so the promoted original's launch really sums in float64.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from perfagent.sandbox.harness import Harness
from perfagent.sandbox.wire import Tolerance, WorkerResult
from perfagent.verify import checks as C
from perfagent.verify import cuda_protocol
from perfagent.verify.jobs import VerifyRequest
from perfagent.workloads import cuda_launch
from perfagent.workloads.detect import detect_candidate, detect_reference

ROWS, LEN = 8, 1024


def _serial(
    x: Any, out: Any, rows: int, n: int, skip: tuple[int, int] | None = None, last_off: bool = False
) -> None:
    """One running sum per row, in the buffers' dtype (the original's order)."""
    cum = torch.zeros(rows, dtype=x.dtype)
    for i in range(n):
        step = x[:, i - 1 if last_off and i == n - 1 else i].clone()
        if skip is not None and i == skip[1]:
            step[skip[0]] = 0
        cum = cum + step
        out[:, i] = cum


def _blocked(x: Any, out: Any, rows: int, n: int) -> None:
    """A warp-style scan: 32-wide chunks summed on their own, the chunks' totals carried (reassociated)."""
    carry = torch.zeros(rows, dtype=x.dtype)
    for c0 in range(0, n, 32):
        cum = torch.zeros(rows, dtype=x.dtype)
        for i in range(c0, min(c0 + 32, n)):
            cum = cum + x[:, i]
            out[:, i] = carry + cum
        carry = carry + cum


KERNELS: dict[str, Callable[..., None]] = {
    "prefix_rows_loop": _serial,
    "prefix_rows_same": _serial,
    "prefix_rows_blocked": _blocked,
    "prefix_rows_dropped": lambda x, out, rows, n: _serial(x, out, rows, n, skip=(0, n // 2)),
    "prefix_rows_off_by_one": lambda x, out, rows, n: _serial(x, out, rows, n, last_off=True),
}

ORIGINAL = """extern "C" __global__ void prefix_rows_loop(const float *x, float *out, int rows, int n)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float cum = 0.0f;
    for (int i = 0; i < n; ++i) {
        cum += x[(size_t)r * n + i];%s
        out[(size_t)r * n + i] = cum;
    }
}
"""

SPEC = f"""source = "scan.cu"
kernel = "prefix_rows_loop"
grid = ["ceil_div(rows, 64)"]
block = [64]
[params]
rows = {ROWS}
len = {LEN}
[[check_params]]
rows = 3
len = 77
[tolerance]   # tight on purpose: any other summation order falls outside it
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
name = "rows"
dtype = "int32"
value = "rows"
[[args]]
name = "n"
dtype = "int32"
value = "len"
"""


@pytest.fixture
def float64_launches(fake_nvrtc: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """The stand-ins launched by name; returns the names of the float64 launches as they happen."""
    seen: list[str] = []
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the promoted sources land in the test's folder
    monkeypatch.setattr(
        cuda_launch,
        "kernel_args",
        lambda resolved, buffers: [a.value if a.is_scalar else buffers[a.name] for a in resolved.args],
    )

    def launch(compiled: Any, resolved: Any, args: Any, stream: Any) -> None:
        if args[0].dtype == torch.float64:
            seen.append(compiled.name)
        KERNELS[compiled.name](*args)

    monkeypatch.setattr(cuda_launch, "launch", launch)
    return seen


def _verify(
    tmp_path: Path, kernel: str, *, original_extra: str = "", tolerance: Tolerance | None = None
) -> WorkerResult:
    (tmp_path / "scan.cu").write_text(ORIGINAL % original_extra)
    (tmp_path / "scan.launch.toml").write_text(SPEC)
    cand = tmp_path / f"{kernel}.cu"
    cand.write_text(
        f'extern "C" __global__ void {kernel}(const float *x, float *out, int rows, int n) {{}}\n'
    )
    ref = detect_reference(tmp_path / "scan.launch.toml")
    request = VerifyRequest(
        job="verify-cuda-kernel",
        reference=ref,
        candidate=detect_candidate(cand, ref),
        device="cpu",
        seeds=3,
        base_seed=11,
        timeout_s=600,
        tolerance=tolerance or Tolerance(),
    )
    h = Harness(
        request=request,
        nonce="n",
        device="cpu",
        result_path=str(tmp_path / "r.json"),
        progress_path=str(tmp_path / "p.log"),
    )
    h.start()
    v = cuda_protocol.KernelVerifier(h)
    try:
        v.run()
    finally:
        assert h.watchdog is not None
        h.watchdog.disarm()
    return v.result()


def _check(result: WorkerResult, name: str) -> Any:
    return next(c for c in result.checks if c.name == name)


def test_reassociated_scan_passes_by_the_rule(tmp_path: Path, float64_launches: list[str]) -> None:
    result = _verify(tmp_path, "prefix_rows_blocked")
    correctness = _check(result, "correctness")
    assert correctness.passed, correctness.detail
    assert (
        "passed the accuracy rule" in correctness.detail
        and "float64 run of the original" in correctness.detail
    )
    assert result.errors.accuracy_rule_passes and result.errors.max_abs_error_vs_fp64 is not None
    assert (
        result.errors.max_abs_error is not None and result.errors.max_abs_error > 1e-4
    )  # outside the spec's bound
    # one float64 launch per seed and parameter set at most, and only of the promoted original
    assert set(float64_launches) == {"prefix_rows_loop"} and len(float64_launches) <= 3 + 2
    promoted = list((tmp_path / "perfagent-f64").glob("scan_*.cu"))
    assert len(promoted) == 1 and "double cum = 0.0;" in promoted[0].read_text()


@pytest.mark.parametrize("kernel", ["prefix_rows_dropped", "prefix_rows_off_by_one"])
def test_real_bugs_are_still_rejected(tmp_path: Path, float64_launches: list[str], kernel: str) -> None:
    result = _verify(tmp_path, kernel)
    correctness = _check(result, "correctness")
    assert not correctness.passed
    assert "less accurate than the original" in correctness.detail, correctness.detail
    assert float64_launches  # the rule was consulted and said no


def test_a_matching_candidate_costs_no_float64_run(tmp_path: Path, float64_launches: list[str]) -> None:
    result = _verify(tmp_path, "prefix_rows_same")
    assert _check(result, "correctness").passed and float64_launches == []
    assert not result.errors.accuracy_rule_passes and result.errors.max_abs_error_vs_fp64 is None


def test_unpromotable_original_leaves_the_tolerance_alone_with_a_note(
    tmp_path: Path, float64_launches: list[str]
) -> None:
    bits = "\n        if (__float_as_int(cum) == 0x7f800000) cum = 0.0f;"
    result = _verify(tmp_path, "prefix_rows_blocked", original_extra=bits)
    assert not _check(result, "correctness").passed and float64_launches == []
    note = next(n for n in result.notes if "no float64 run of the original kernel" in n)
    assert "a bit cast of a float" in note and "line 8" in note


def test_an_explicit_tolerance_alone_decides(tmp_path: Path, float64_launches: list[str]) -> None:
    result = _verify(tmp_path, "prefix_rows_blocked", tolerance=Tolerance(atol=1e-6, rtol=1e-7))
    assert not _check(result, "correctness").passed and float64_launches == []


def _cmp(got: torch.Tensor, expected: torch.Tensor, atol: float, rtol: float) -> C.Comparison:
    return C.compare_tensors(got, expected, atol, rtol)


def test_judge_output_on_tensors() -> None:
    """The decision alone: a reassociated fp32 cumsum passes against float64, a dropped term and an
    off-by-one read fail, and without a float64 run the tolerance decides."""
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(4, 4096, generator=gen) + 1.0
    exact = torch.cumsum(x.double(), dim=1)
    serial = torch.empty_like(x)
    _serial(x, serial, 4, 4096)
    blocked = torch.empty_like(x)
    _blocked(x, blocked, 4, 4096)
    dropped = blocked.clone()
    dropped[1, 2000:] -= x[1, 2000]
    shifted = blocked.clone()
    shifted[2, -1] = blocked[2, -2]
    atol, rtol = 1e-6, 1e-7
    assert not _cmp(blocked, serial, atol, rtol).ok
    good = cuda_protocol.judge_output(blocked, serial, exact, _cmp(blocked, serial, atol, rtol))
    assert good.ok and good.accuracy is not None and good.accuracy.candidate_err <= good.accuracy.original_err
    for bug in (dropped, shifted):
        verdict = cuda_protocol.judge_output(bug, serial, exact, _cmp(bug, serial, atol, rtol))
        assert not verdict.ok and verdict.accuracy is not None and verdict.accuracy.bad > 0
        assert "less accurate than the original" in verdict.detail("out", "seed 1")
    assert not cuda_protocol.judge_output(blocked, serial, None, _cmp(blocked, serial, atol, rtol)).ok
