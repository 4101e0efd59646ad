"""GPU check (issue 10): profiling a KernelBench problem covers its forward() calls only.

The harness (``python -m perfagent.workloads.run_spec``) wraps each ``forward()`` in the NVTX range
``perfagent_forward`` and ncu is given ``--nvtx --nvtx-include perfagent_forward/``: torch's own kernels
that prepare inputs or build the model (``at::native::...``) must not be profiled, let alone ranked
(``pytest -m gpu``; the run is recorded in tests/gpu/RESULTS.md).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from perfagent.classifier import classify
from perfagent.optimize.reprofile import reprofile
from perfagent.workloads.detect import resolve
from perfagent.workloads.optimizable import OptimizeWorkload
from profilers.model import Profile

pytestmark = pytest.mark.gpu
KB = Path(__file__).resolve().parents[2] / "examples" / "kernelbench"


@pytest.fixture(autouse=True)
def _need_ncu() -> None:
    if shutil.which("ncu") is None or shutil.which("nvidia-smi") is None:
        pytest.skip("needs an NVIDIA GPU with ncu on PATH")


def _profile(wl: OptimizeWorkload, tmp_path: Path) -> Profile:
    result = reprofile(
        wl, wl.file, None, workdir=tmp_path, target_kernel=None, arch="sm_90", timeout_s=600, candidate=False
    )
    assert result.profile is not None, result.note
    for k in result.profile.kernels:
        print(f"{'harness ' if k.harness else ''}{k.name[:120]} x{k.invocations}")
    return result.profile


def _ranked(profile: Profile) -> list[str]:
    return [d.name for d in classify(profile) if d.findings]


def test_cuda_candidate_profile_ranks_only_its_kernel(tmp_path: Path) -> None:
    pytest.importorskip("torch.utils.cpp_extension")
    if shutil.which("nvcc") is None:
        pytest.skip("the CUDA candidate is built with nvcc (load_inline)")
    wl = resolve(KB / "01_vector_add_cuda.py", problem=KB / "01_vector_add.py")
    profile = _profile(wl, tmp_path)
    ranked = _ranked(profile)
    assert ranked and not any("at::native" in name for name in ranked)
    assert any("vector_add_kernel" in name for name in ranked)
    # --repeat 2: the two forward() calls, not the warm-up.
    assert sum(k.invocations for k in profile.kernels if not k.harness) == 2


def test_problem_profile_holds_only_forward_kernels(tmp_path: Path) -> None:
    """The problem's own Model: forward() is `a + b`, one elementwise add per call and nothing else."""
    wl = resolve(KB / "01_vector_add.py")
    profile = _profile(wl, tmp_path)
    assert not any(k.harness for k in profile.kernels)
    names = [k.name for k in profile.kernels]
    assert names and all("add" in name.lower() for name in names), names
    assert sum(k.invocations for k in profile.kernels) == 2
