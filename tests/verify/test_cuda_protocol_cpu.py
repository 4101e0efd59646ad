"""The launch-spec verification protocol, driven on the CPU with Python stand-ins for the kernels.

The real path compiles with NVRTC and launches through cuda.core (tests/gpu); here compile and
launch are replaced by functions that act on the argument tensors, so that the protocol itself —
poisoning, two candidate launches around the reference, unwritten-element detection, input
checks, several shapes and seeds — is tested without a GPU.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from perfagent.sandbox.harness import Harness
from perfagent.timing.jobs import BenchRequest
from perfagent.verify import cuda_protocol
from perfagent.verify.jobs import VerifyRequest
from perfagent.verify.models import Check
from perfagent.workloads import cuda_launch
from perfagent.workloads.cuda_launch import CompiledKernel
from perfagent.workloads.detect import detect_candidate, detect_reference

REPO = Path(__file__).resolve().parents[2]
TRANSPOSE = REPO / "examples" / "cuda" / "01_transpose_naive"


def _t(odata: Any, idata: Any, width: int, height: int) -> None:
    odata.copy_(idata.t())


def _half(odata: Any, idata: Any, width: int, height: int) -> None:
    odata[: width // 2].copy_(idata.t()[: width // 2])


def _writes_input(odata: Any, idata: Any, width: int, height: int) -> None:
    odata.copy_(idata.t())
    idata.zero_()


def _wrong(odata: Any, idata: Any, width: int, height: int) -> None:
    odata.copy_(idata.t() + 1e-3)


def _square_only(odata: Any, idata: Any, width: int, height: int) -> None:
    # right on the square default shape, wrong on the check_params shape
    if width == height:
        odata.copy_(idata.t())
    else:
        odata.zero_()


KERNELS: dict[str, Callable[..., None]] = {
    "transpose_naive": _t,
    "transpose_tiled_padded": _t,
    "transpose_half": _half,
    "transpose_writes_input": _writes_input,
    "transpose_wrong": _wrong,
    "transpose_square_only": _square_only,
}


@pytest.fixture
def fake_gpu(fake_nvrtc: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        cuda_launch,
        "kernel_args",
        lambda resolved, buffers: [a.value if a.is_scalar else buffers[a.name] for a in resolved.args],
    )
    monkeypatch.setattr(
        cuda_launch, "launch", lambda compiled, resolved, args, stream: KERNELS[compiled.name](*args)
    )


def _spec(tmp_path: Path) -> Path:
    text = (TRANSPOSE / "transpose.launch.toml").read_text()
    text = text.replace('source = "slow.cu"', f'source = "{TRANSPOSE / "slow.cu"}"')
    text = text.replace("width = 8192\nheight = 8192", "width = 64\nheight = 64").replace(
        "width = 1000\nheight = 777", "width = 40\nheight = 24"
    )
    path = tmp_path / "t.launch.toml"
    path.write_text(text)
    return path


def _paths(tmp_path: Path) -> dict[str, str]:
    return {"result_path": str(tmp_path / "r.json"), "progress_path": str(tmp_path / "p.log")}


def _run(tmp_path: Path, candidate: Path, seeds: int = 3) -> dict[str, Check]:
    ref = detect_reference(_spec(tmp_path))
    cand = detect_candidate(candidate, ref)
    request = VerifyRequest(
        job="verify-cuda-kernel",
        reference=ref,
        candidate=cand,
        device="cpu",
        seeds=seeds,
        base_seed=5,
        timeout_s=600,
    )
    h = Harness(request=request, nonce="n", device="cpu", **_paths(tmp_path))
    h.start()
    v = cuda_protocol.KernelVerifier(h)
    try:
        v.run()
    finally:
        assert h.watchdog is not None
        h.watchdog.disarm()
    result = v.result()
    assert result.input_sets == seeds + min(2, seeds)  # `seeds` on the main shape, up to 2 on the check shape
    return {c.name: c for c in result.checks}


def _candidate(tmp_path: Path, kernel: str) -> Path:
    path = tmp_path / f"{kernel}.cu"
    path.write_text(
        f'extern "C" __global__ void {kernel}(float *odata, const float *idata, int width, int height) {{}}\n'
    )
    return path


def test_fixed_rewrite_passes(tmp_path: Path, fake_gpu: None) -> None:
    checks = _run(tmp_path, TRANSPOSE / "fixed.cu")
    assert all(c.passed for c in checks.values()), [c for c in checks.values() if not c.passed]
    assert {
        "correctness",
        "all-outputs-written",
        "inputs-unchanged",
        "reference-writes-outputs",
        "reference-informative",
    } <= set(checks)


@pytest.mark.parametrize(
    ("kernel", "check", "needle"),
    [
        ("transpose_half", "all-outputs-written", "never written by the candidate"),
        ("transpose_writes_input", "inputs-unchanged", "idata:"),
        ("transpose_wrong", "correctness", "atol=0 rtol=0"),
        ("transpose_square_only", "correctness", "width=40, height=24"),
    ],
)
def test_broken_rewrites_fail(tmp_path: Path, fake_gpu: None, kernel: str, check: str, needle: str) -> None:
    checks = _run(tmp_path, _candidate(tmp_path, kernel))
    assert not checks[check].passed and needle in checks[check].detail, checks[check]


def test_unwritten_reference_is_inconclusive(
    tmp_path: Path, fake_gpu: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(KERNELS, "transpose_naive", _half)
    checks = _run(tmp_path, TRANSPOSE / "fixed.cu")
    assert (
        not checks["reference-writes-outputs"].passed
        and checks["reference-writes-outputs"].severity == "inconclusive"
    )


def _first_two_sets_agree() -> Callable[..., None]:
    """A kernel whose output depends on its inputs, yet is the same for the first two input sets it sees
    (as two maxima of many integer draws sometimes are): 0 for those, then the set's number."""
    seen: list[torch.Tensor] = []

    def kernel(odata: Any, idata: Any, width: int, height: int) -> None:
        index = next(
            (i for i, s in enumerate(seen) if s.shape == idata.shape and torch.equal(s, idata)), None
        )
        if index is None:
            seen.append(idata.clone())
            index = len(seen) - 1
        odata.fill_(0.0 if index < 2 else float(index))

    return kernel


def test_two_sets_that_agree_by_chance_are_confirmed_with_more(
    tmp_path: Path, fake_gpu: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    kernel = _first_two_sets_agree()
    monkeypatch.setitem(KERNELS, "transpose_naive", kernel)
    monkeypatch.setitem(KERNELS, "transpose_tiled_padded", kernel)
    checks = _run(tmp_path, TRANSPOSE / "fixed.cu", seeds=2)
    informative = checks["reference-informative"]
    assert informative.passed and "over 3 input sets" in informative.detail, informative


def test_reference_identical_on_every_set_is_inconclusive_after_four(
    tmp_path: Path, fake_gpu: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    def constant(odata: Any, idata: Any, width: int, height: int) -> None:
        odata.fill_(5.0)

    monkeypatch.setitem(KERNELS, "transpose_naive", constant)
    monkeypatch.setitem(KERNELS, "transpose_tiled_padded", constant)
    checks = _run(tmp_path, TRANSPOSE / "fixed.cu", seeds=2)
    informative = checks["reference-informative"]
    assert not informative.passed and informative.severity == "inconclusive"
    assert "identical for 4 different input sets" in informative.detail, informative


def test_poisons_differ_between_launches() -> None:
    from perfagent.workloads.cuda_launch import is_poison, poison_

    t = poison_(torch.empty(4, dtype=torch.float16), 2)
    assert bool(is_poison(t, 2).all()) and bool(torch.isfinite(t).all())


def test_bench_runner_for_launch_spec_kernels(
    tmp_path: Path, fake_nvrtc: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The timing runner of a launch-spec kernel: fresh input contents per call, spec flops/bytes."""
    from perfagent.timing import runners

    launches: list[str] = []

    def fake_launch(compiled: CompiledKernel, resolved: Any, args: Any, stream: Any) -> None:
        launches.append(compiled.name)

    monkeypatch.setattr(cuda_launch, "launch", fake_launch)
    ref = detect_reference(_spec(tmp_path))
    request = BenchRequest(reference=ref, device="cpu")
    h = Harness(request=request, nonce="n", device="cpu", **_paths(tmp_path))
    h.start()
    try:
        runner = runners.cuda_kernel_runner(h, ref, who="reference")
        runner.call(runner.prepare())
    finally:
        assert h.watchdog is not None
        h.watchdog.disarm()
    assert launches == ["transpose_naive", "transpose_naive"]  # first (untimed) launch + one timed
    assert runner.nbytes == 2 * 64 * 64 * 4 and runner.flops == 0.0
