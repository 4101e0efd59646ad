"""GPU check (issue 23): a ``load_inline`` solution is built once, by the confined build step, for the GPU's
own architecture, and verification and timing load that build read-only (``pytest -m gpu``).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from perfagent.sandbox.extension_build import device_arch_list, prebuild
from perfagent.timing import bench
from perfagent.verify import verify
from perfagent.workloads import extension_builds as eb

pytestmark = pytest.mark.gpu
KB = Path(__file__).resolve().parents[2] / "benchmarks" / "unseen2" / "kernelbench"


@pytest.fixture(autouse=True)
def _need_gpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if shutil.which("nvidia-smi") is None or shutil.which("nvcc") is None:
        pytest.skip("needs an NVIDIA GPU and nvcc")
    monkeypatch.setenv(eb.BUILDS_ENV, str(tmp_path / "builds"))
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path / "worker-ext"))
    monkeypatch.delenv("TORCH_CUDA_ARCH_LIST", raising=False)


def test_one_build_shared_by_verify_and_bench(tmp_path: Path) -> None:
    problem, solution = KB / "07_cumprod_problem.py", KB / "07_cumprod_solution.py"
    started = time.monotonic()
    step = prebuild([solution], timeout_s=600)[0]
    print(f"\n[build step] {step.state} in {step.seconds:.1f} s (wall {time.monotonic() - started:.1f} s)")
    assert step.state == "built", step.detail
    assert os.environ["TORCH_CUDA_ARCH_LIST"] == device_arch_list()  # the GPU's own architecture only

    started = time.monotonic()
    result = verify(problem, solution, device="cuda", seeds=2, timeout_s=120)
    print(f"[verify] {result.verdict} in {time.monotonic() - started:.1f} s")
    assert result.verdict == "pass", result.reason
    timed = bench(problem, solution, device="cuda", runs=10, warmup=2)
    assert timed.comparison is not None
    assert not list((tmp_path / "worker-ext").rglob("*.so"))  # no worker built anything of its own
    assert prebuild([solution], timeout_s=600)[0].state == "cached"
