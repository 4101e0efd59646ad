"""Staged profiling on a real GPU (issue 27, `pytest -m gpu`): stage 1's live CSV, the tiers each kernel
gets, and the classification of the kernels that matter against one targeted run over every launch."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import perfagent
from profilers.base import ProfileRequest
from profilers.build import build_program
from profilers.ncu.profiler import NcuProfiler

pytestmark = pytest.mark.gpu
SUITE = Path(__file__).resolve().parents[2] / "examples" / "cuda" / "suite" / "main.cu"


@pytest.fixture(autouse=True)
def _need_ncu() -> None:
    if shutil.which("ncu") is None or shutil.which("nvidia-smi") is None:
        pytest.skip("needs an NVIDIA GPU with ncu on PATH")


@pytest.fixture(scope="module")
def suite_binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("suite")
    return build_program(SUITE, work / "suite", "sm_90", timeout_s=300)


def test_stage1_times_every_launch_from_the_live_csv(suite_binary: Path, tmp_path: Path) -> None:
    times = NcuProfiler().time_launches(ProfileRequest(workdir=tmp_path, command=[str(suite_binary)]))
    print({k.base_name: (k.metrics.duration_s, k.launch.registers_per_thread) for k in times.kernels})
    assert len(times.kernels) == 20
    assert all(k.metrics.duration_s and k.metrics.duration_s > 0 for k in times.kernels)
    assert all(k.launch.grid and k.launch.block and k.launch.registers_per_thread for k in times.kernels)


def test_staged_diagnose_keeps_the_classification_of_the_kernels_that_matter(suite_binary: Path) -> None:
    staged = perfagent.diagnose(None, command=[str(suite_binary)], save=False)
    single = perfagent.diagnose(None, command=[str(suite_binary)], save=False, staged=False)
    print("\n".join(staged.notes))
    before = {(k.name, k.profile.launch.grid): [f.category for f in k.findings] for k in single.kernels}
    in_depth = [k for k in staged.kernels if "A" in k.profile.tiers]
    timed_only = [k for k in staged.kernels if k.profile.tiers == ["duration"]]
    for k in staged.kernels:
        print(f"{k.profile.base_name}: {k.profile.tiers} {k.profile.tier_reason}")
    assert len(staged.kernels) == 20 and in_depth and timed_only
    assert sum(k.share_of_total or 0.0 for k in in_depth) >= 0.9
    assert all(k.skipped[0].reason.startswith("not profiled in depth") for k in timed_only)
    for k in in_depth:
        assert [f.category for f in k.findings] == before[(k.name, k.profile.launch.grid)], k.name


def test_all_kernels_profiles_every_kernel_in_depth(suite_binary: Path) -> None:
    record = perfagent.diagnose(None, command=[str(suite_binary)], save=False, all_kernels=True)
    assert all("A" in k.profile.tiers for k in record.kernels)


TRANSFORMER = Path(__file__).resolve().parents[2] / "examples" / "torch" / "transformer_block.py"


def test_a_pytorch_script_gets_tier_b_in_tier_as_run(tmp_path: Path) -> None:
    """The transformer block (issue 27's (c)): stage 1 is mostly the script's start, so the plan folds tier
    B into tier A's run: two ncu runs (stage 1's table, one report), not three."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs torch with CUDA")
    record = perfagent.diagnose(None, command=["python3", str(TRANSFORMER)], run_dir=tmp_path / "run")
    print("\n".join(record.notes))
    assert any(n.startswith("stage plan: tier B collected in tier A's run") for n in record.notes)
    assert len(list((tmp_path / "run").glob("perfagent-ncu-*.log"))) == 1  # tier A+B's run only
    assert len(list((tmp_path / "run").glob("perfagent-ncu-times-*.csv"))) == 1
    in_depth = [k for k in record.kernels if "A" in k.profile.tiers]
    assert in_depth and all(k.profile.tiers == ["duration", "A", "B"] for k in in_depth)
