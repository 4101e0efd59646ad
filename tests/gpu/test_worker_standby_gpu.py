"""GPU: the cost cuts of issue 23 (r23-cost) on a real device.

``python -m pytest -m gpu tests/gpu/test_worker_standby_gpu.py -s``. A confined GPU worker is a fresh
interpreter; one started ahead (``perfagent.sandbox.standby``) is taken by the next verification and judges
as a fresh one; a kernel file is built once per process (``cuda_launch.compile_kernel``).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from perfagent.sandbox import runner, standby
from perfagent.verify import verify
from tests.gpu.test_iteration_worker_gpu import EXAMPLE, SCALAR  # the same example and scalar candidate

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_torch_and_core")]


def _verify(candidate: Path) -> tuple[str, float]:
    started = time.monotonic()
    result = verify(EXAMPLE / "slow.cu", candidate, device="cuda", seeds=2, timeout_s=60)
    return result.verdict, time.monotonic() - started


def test_a_gpu_worker_started_ahead_is_taken_and_judges_as_a_fresh_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(standby.STANDBY_ENV, raising=False)
    candidate = tmp_path / "scalar.cu"
    candidate.write_text(SCALAR)
    fresh_verdict, fresh_s = _verify(candidate)
    before = standby.counts()
    with runner.workers_ahead("cuda", ("perfagent.verify.jobs", "perfagent.verify.cuda_protocol")):
        if not runner.starts_fresh("cuda"):
            pytest.skip("GPU workers fork from the warm server here (unconfined): nothing is started ahead")
        # the first takes a worker still importing; the second spare imports meanwhile, as it would while
        # ncu profiles the original
        first_verdict, first_s = _verify(candidate)
        ahead_verdict, ahead_s = _verify(candidate)
        taken = standby.counts().taken - before.taken
    print(f"fresh worker: {fresh_s:.1f} s; started ahead: {first_s:.1f} s (at once), {ahead_s:.1f} s (ready)")
    assert (fresh_verdict, first_verdict, ahead_verdict, taken) == ("pass", "pass", "pass", 2)
    assert ahead_s < fresh_s


def test_a_kernel_file_is_built_once_per_process(tmp_path: Path) -> None:
    from perfagent.workloads import cuda_launch

    source = tmp_path / "k.cu"
    source.write_text(SCALAR)
    started = time.monotonic()
    first = cuda_launch.compile_kernel(str(source), "scale_copy_float4", {})
    built_s = time.monotonic() - started
    started = time.monotonic()
    again = cuda_launch.compile_kernel(str(source), "scale_copy_float4", {})
    print(f"NVRTC build {built_s:.3f} s, again {time.monotonic() - started:.4f} s")
    assert again is first
    assert cuda_launch.compile_kernel(str(source), "scale_copy_float4", {"X": "1"}) is not first
    source.write_text(SCALAR + "// edited\n")
    assert cuda_launch.compile_kernel(str(source), "scale_copy_float4", {}) is not first
