"""GPU suite for the optimize loop (``python -m pytest -m gpu tests/gpu/test_optimize_gpu.py -s``).

On a real GPU: the harness under ncu, the recipes loop on a launch-spec kernel (bank-conflict transpose:
padding must be verified, timed, faster, and move the bank-conflict metric), an incorrect rewrite that must
never be accepted, a KernelBench Triton candidate timed with CUDA events, and a Triton script timed through
ncu kernel durations. Every test prints what it measured (``-s``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import perfagent
from perfagent.optimize.loop import one_machine_loop
from perfagent.optimize.loop_state import BaselineState
from perfagent.optimize.render import render_text
from perfagent.optimize.settings import OptimizeSettings
from perfagent.records import RunRecord
from perfagent.rewrite.base import Candidate, RewriteRequest, make_candidate
from perfagent.workloads.detect import resolve

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_torch_and_core")]

REPO = Path(__file__).resolve().parents[2]
CUDA = REPO / "examples" / "cuda"
KB = REPO / "examples" / "kernelbench"
TRITON = REPO / "examples" / "triton"
FAST = {"seeds": 2, "runs": 30, "warmup": 5, "timeout_s": 60.0, "profile_timeout_s": 300.0}


def _ncu_usable() -> bool:
    from profilers import get_profiler

    return get_profiler("ncu").availability() is None


def _show(record: RunRecord) -> None:
    assert record.optimize is not None
    print("\n" + render_text(record.optimize))


def test_harness_runs_under_ncu(tmp_path: Path) -> None:
    if not _ncu_usable():
        pytest.skip("ncu is not usable here")
    from perfagent.optimize.reprofile import reprofile

    wl = resolve(CUDA / "02_transpose_bank_conflicts" / "slow.cu")
    rp = reprofile(
        wl,
        wl.file,
        wl.spec_path,
        workdir=tmp_path,
        target_kernel=None,
        arch="sm_90",
        timeout_s=300,
        candidate=False,
    )
    assert rp.kernel is not None, rp.note
    assert rp.kernel.base_name == "transpose_smem_conflicts" and rp.kernel.invocations >= 1
    assert (
        rp.kernel.metrics.shared_bank_conflict_pct is not None
        and rp.kernel.metrics.shared_bank_conflict_pct > 50
    )
    print(
        f"\n[harness] {rp.kernel.name}: {rp.kernel.metrics.duration_s} s, conflicts {rp.kernel.metrics.shared_bank_conflict_pct} %"
    )


def test_a_candidate_reprofile_runs_ncu_and_the_harness_inside_bubblewrap(tmp_path: Path) -> None:
    """The re-profile of candidate code (here the fixed kernel as a candidate) runs ncu inside the
    confinement a GPU worker gets, and still profiles the kernel."""
    if not _ncu_usable():
        pytest.skip("ncu is not usable here")
    from perfagent.optimize.reprofile import reprofile
    from perfagent.sandbox import confinement
    from perfagent.sandbox.profiled import PROFILED_NOTE

    if not confinement.status().confined:
        pytest.skip(f"this machine cannot confine: {confinement.status().reason}")
    wl = resolve(CUDA / "02_transpose_bank_conflicts" / "slow.cu")
    rp = reprofile(
        wl,
        wl.file,
        wl.spec_path,
        workdir=tmp_path / "candidate",
        target_kernel=None,
        arch="sm_90",
        timeout_s=300,
        candidate=True,
    )
    assert rp.kernel is not None, rp.note
    assert rp.kernel.base_name == "transpose_smem_conflicts" and rp.kernel.metrics.duration_s
    assert rp.sandbox is not None and rp.sandbox.startswith("sandbox: confined by bubblewrap")
    assert rp.sandbox.endswith(PROFILED_NOTE) and rp.profile is not None and rp.profile.notes[0] == rp.sandbox
    print(f"\n[confined re-profile] {rp.kernel.name}: {rp.kernel.metrics.duration_s} s; {rp.sandbox}")


def test_padding_is_verified_timed_and_accepted(tmp_path: Path) -> None:
    folder = tmp_path / "02"
    shutil.copytree(CUDA / "02_transpose_bank_conflicts", folder)
    record = perfagent.optimize(
        folder / "slow.cu",
        backend="recipes",
        transform="smem-padding",
        iterations=1,
        device="cuda",
        out=tmp_path / "run",
        apply=True,
        profile_best=True,  # the last winner is re-profiled only when asked: the metric check reads it
        **FAST,  # type: ignore[arg-type]
    )
    _show(record)
    [cand] = record.candidates
    assert cand.verification.verdict == "pass" and cand.time_s is not None and cand.speedup is not None
    assert cand.speedup > 1.0
    if _ncu_usable():
        assert cand.metric_moved is True and cand.accepted and cand.route == "targeted", cand.reason
        assert record.best == cand.id and (folder / "slow.cu.orig").is_file()
        assert "TILE_DIM + 1" in (folder / "slow.cu").read_text()


class _WrongTranspose:
    """A rewriter whose only candidate writes the transpose un-transposed (wrong, and fast)."""

    name = "llm"

    def availability(self) -> str | None:
        return None

    def applies(self, request: RewriteRequest) -> str | None:
        return None

    def propose(self, request: RewriteRequest) -> list[Candidate]:
        wrong = request.source.replace(
            "tile[threadIdx.x][threadIdx.y + j]", "tile[threadIdx.y + j][threadIdx.x]"
        )
        assert wrong != request.source
        return [make_candidate(request, backend="llm", source=wrong, description="drops the transpose")]


def test_an_incorrect_rewrite_is_never_accepted(tmp_path: Path) -> None:
    wl = resolve(CUDA / "02_transpose_bank_conflicts" / "slow.cu")
    chosen = OptimizeSettings(iterations=1, seeds=2, runs=20, transforms=("smem-padding",))
    loop = one_machine_loop(
        wl,
        _WrongTranspose(),
        tmp_path / "run",
        gpu=True,  # type: ignore[arg-type]
        baseline=BaselineState(diagnosis=None, measured=False, can_profile=False, profile_note="not needed"),
        limits=chosen.loop_limits(),
        measuring=chosen.measure_limits(),
    )
    [cand] = loop.run().candidates
    print(f"\n[wrong] {cand.verdict}: {cand.reason}")
    assert cand.verdict == "incorrect" and not cand.accepted and cand.time_s is None


def test_kernelbench_triton_candidates_are_timed(tmp_path: Path) -> None:
    pytest.importorskip("triton")
    record = perfagent.optimize(
        KB / "01_vector_add_triton.py",
        problem=KB / "01_vector_add.py",
        backend="recipes",
        transform="launch-config",
        iterations=1,
        max_candidates=2,
        device="cuda",
        out=tmp_path / "run",
        **FAST,  # type: ignore[arg-type]
    )
    _show(record)
    assert record.optimize is not None and record.optimize.baseline.start_speedup is not None
    for cand in record.candidates:
        assert cand.verification.verdict == "pass"
        assert cand.time_s is not None and cand.speedup is not None and cand.timer == "cuda-events"
        assert cand.accepted == (cand.verdict == "accepted")


def test_triton_script_is_timed_through_ncu(tmp_path: Path) -> None:
    pytest.importorskip("triton")
    if not _ncu_usable():
        pytest.skip("ncu is not usable here: Triton scripts are timed through ncu kernel durations")
    record = perfagent.optimize(
        TRITON / "02_softmax_small_block.py",
        backend="recipes",
        transform="launch-config",
        iterations=1,
        max_candidates=4,
        device="cuda",
        out=tmp_path / "run",
        **FAST,  # type: ignore[arg-type]
    )
    _show(record)
    assert record.optimize is not None and record.optimize.baseline.timer == "ncu"
    timed = [c for c in record.candidates if c.time_s is not None]
    assert timed and all(c.timer == "ncu" for c in timed)
    assert all(c.verification.verdict == "pass" for c in record.candidates)
