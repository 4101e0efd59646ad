"""GPU check of tensor-core FLOP counting (issue 10): a real ncu run through perfagent's targeted metrics.

``scripts/tensor_mma_probe.py`` multiplies 2048 x 2048 matrices with a Triton kernel: fp16 through mma.sync
(HMMA), then fp16, bf16 and tf32 through wgmma (HGMMA on Hopper). Every launch does 2 x 2048³ FLOP, which
the report's tensor counters must give (``pytest -m gpu``; the run is recorded in tests/gpu/RESULTS.md).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

import perfagent

pytestmark = pytest.mark.gpu
PROBE = Path(__file__).resolve().parents[2] / "scripts" / "tensor_mma_probe.py"
MATMUL_FLOP = 2 * 2048**3


@pytest.fixture(autouse=True)
def _need_ncu() -> None:
    if shutil.which("ncu") is None or shutil.which("nvidia-smi") is None:
        pytest.skip("needs an NVIDIA GPU with ncu on PATH")
    pytest.importorskip("triton")


def test_triton_matmul_tensor_flops(tmp_path: Path) -> None:
    record = perfagent.diagnose(
        None, command=[sys.executable, str(PROBE)], kernel="^mma_kernel$", run_dir=tmp_path / "run"
    )
    assert record.kernels, "no mma_kernel profiled"
    for kernel in record.kernels:
        flops = kernel.profile.metrics.flops
        print(kernel.profile.launch.block, flops, kernel.profile.device.peaks.flops_per_s.get("tensor"))
        assert flops.get("tensor") == pytest.approx(MATMUL_FLOP, rel=1e-6)
        assert kernel.roofline is not None and kernel.roofline.floors_s.get("tensor", 0) > 0
    assert not record.notes or not any("tensor pipe was busy" in n for n in record.notes)
