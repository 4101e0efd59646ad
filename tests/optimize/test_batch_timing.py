"""A batch's verified candidates are timed before any is judged (launch-spec ones in one worker, Python
ones each in its own), and only the batch's final winner is re-profiled; a batch that fails to time
together is timed one candidate at a time.

The GPU is simulated (``simulated_gpu``): timings come from the candidate's text, profiles from a
recorded report. The real worker side of ``bench_batch`` is tested in ``tests/timing``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from perfagent.optimize import together
from perfagent.optimize.events import LoopEvent
from perfagent.optimize.loop import OptimizeLoop, one_machine_loop
from perfagent.optimize.loop_state import BaselineState
from perfagent.optimize.measure import Timing
from perfagent.optimize.services import Services
from perfagent.optimize.settings import OptimizeSettings
from perfagent.workloads.detect import resolve
from perfagent.workloads.optimizable import KernelBenchTarget, LaunchSpecTarget, OptimizeWorkload
from tests.optimize.conftest import PADDED
from tests.optimize.helpers import TRANSPOSE, ScriptedRewriter, copy_example


@pytest.fixture(autouse=True)
def separate_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are of the separate path (a worker per verification, one for the batch's timing): the
    fallback when a candidate fails in the iteration's one worker (``test_iteration_worker.py``)."""
    monkeypatch.setenv(together.ITERATION_WORKER_ENV, "separate")


FASTER = "#define FASTER_STILL 1"
"""A marker the timing stand-in reads: the padded kernel with it is timed 2.5x, without it 1.6x (a macro,
not a comment: a candidate that differs only in a comment is the same candidate)."""
FOLDER = {n: f"{n:02d}_smem-padding" for n in (1, 2, 3)}
"""Candidate n's folder."""


def _timing(text: str, flags: list[str] | None = None) -> Timing:
    s = (2.5 if FASTER in text else 1.6) if PADDED in text else 1.0
    return Timing(
        time_s=1e-3 / s,
        time_s_before=1e-3,
        speedup=s,
        noise_threshold=0.02,
        significant=s > 1.02,
        verdict="faster" if s > 1.02 else "no-change",
        timer="cuda-events",
        flags=list(flags or []),
    )


def _run(
    tmp_path: Path, sources: list[str], services: Services, *, name: str = "run", **settings: Any
) -> tuple[list[tuple[str, str, bool]], list[LoopEvent], OptimizeLoop]:
    """One iteration of ``sources`` as one batch; ``settings`` over the defaults (the final winner is
    re-profiled, as a winner a later iteration plans from is: ``profile_best``)."""
    wl = resolve(tmp_path / TRANSPOSE.name / "slow.cu")
    events: list[LoopEvent] = []
    chosen = OptimizeSettings(
        iterations=1,
        transforms=("smem-padding",),
        max_candidates=len(sources),
        verify_jobs=2,
        profile_best=True,
    ).with_changes(**settings)
    loop = one_machine_loop(
        wl,
        ScriptedRewriter(sources, transform="smem-padding", per_call=len(sources)),
        tmp_path / name,
        gpu=True,
        baseline=BaselineState(diagnosis=None, measured=True, can_profile=True),
        limits=chosen.loop_limits(),
        measuring=chosen.measure_limits(),
        services=services,
        progress=events.append,
    )
    result = loop.run()
    return [(c.id, c.verdict, c.accepted) for c in result.candidates], events, loop


@pytest.fixture
def sources(tmp_path: Path) -> list[str]:
    folder = copy_example(TRANSPOSE, tmp_path)
    original = (folder / "slow.cu").read_text()
    padded = original.replace("[TILE_DIM][TILE_DIM]", f"[TILE_DIM][{PADDED}]", 1)
    assert padded != original
    slower = original.replace("__syncthreads();", "__syncthreads(); __syncthreads();", 1)
    return [slower, padded, FASTER + "\n" + padded]


def _stub_timing(knobs: dict[str, Any], *, batch_fails: bool = False) -> Services:
    """The simulated GPU's services with these timings (alone and batched)."""

    def one(wl: Any, candidate: Path | None, spec: Any, **_: Any) -> Timing:
        knobs["calls"].append(("bench", candidate.parent.name if candidate else None))
        return _timing(candidate.read_text() if candidate else "")

    def many(wl: Any, candidates: list[tuple[Path, Any]], **_: Any) -> list[Timing] | str:
        knobs["calls"].append(("bench-batch", [c.parent.name for c, _ in candidates]))
        if batch_fails:
            return "timing failed: candidate-runs: illegal memory access"
        return [_timing(c.read_text()) for c, _ in candidates]

    return replace(knobs["services"], time=one, time_batch=many)


def test_a_batch_is_timed_once_and_only_its_winner_is_reprofiled(
    tmp_path: Path, sources: list[str], monkeypatch: pytest.MonkeyPatch, simulated_gpu: dict[str, Any]
) -> None:
    services = _stub_timing(simulated_gpu)
    outcomes, events, loop = _run(tmp_path, sources, services)
    calls = simulated_gpu["calls"]
    timed = [c for c in calls if c[0].startswith("bench")]
    assert timed == [
        ("bench-batch", [FOLDER[1], FOLDER[2], FOLDER[3]])
    ]  # one worker for the three, none alone
    # c2 (1.6x) wins first, then c3 (2.5x) replaces it: c2 is accepted in turn but not re-profiled
    assert outcomes == [("c1", "not-faster", False), ("c2", "accepted", True), ("c3", "accepted", True)]
    profiled = [c[1] for c in calls if c[0] == "profile"]
    assert profiled == ["source.cu"] and len([c for c in calls if c[0] == "profile"]) == 1
    c2 = loop.state.outcomes[1]
    assert "not re-profiled: c3 of the same batch is faster" in c2.reason
    assert loop.state.best_id == "c3" and loop.state.before is simulated_gpu["padded_profile"]
    assert any("in one worker" in e.message for e in events)
    # the batch's share of the worker's time is each candidate's timing stage
    assert all("time" in c.stage_s for c in loop.state.outcomes)


def test_the_outcomes_match_timing_one_at_a_time(
    tmp_path: Path, sources: list[str], monkeypatch: pytest.MonkeyPatch, simulated_gpu: dict[str, Any]
) -> None:
    services = _stub_timing(simulated_gpu)
    batched, _, _ = _run(tmp_path, sources, services, name="batched")
    monkeypatch.setattr(LaunchSpecTarget, "shares_timing_worker", False)
    simulated_gpu["calls"].clear()
    alone, _, _ = _run(tmp_path, sources, services, name="alone")
    assert [c for c in simulated_gpu["calls"] if c[0].startswith("bench")] == [
        ("bench", FOLDER[1]),
        ("bench", FOLDER[2]),
        ("bench", FOLDER[3]),
    ]
    assert alone == batched
    # timed one by one, but all before any is judged: still only the batch's final winner is re-profiled
    assert [c for c in simulated_gpu["calls"] if c[0] == "profile"] == [("profile", "source.cu")]


def test_a_failed_batch_is_timed_one_at_a_time(
    tmp_path: Path, sources: list[str], monkeypatch: pytest.MonkeyPatch, simulated_gpu: dict[str, Any]
) -> None:
    services = _stub_timing(simulated_gpu, batch_fails=True)
    outcomes, events, loop = _run(tmp_path, sources, services)
    timed = [c for c in simulated_gpu["calls"] if c[0].startswith("bench")]
    assert timed[0][0] == "bench-batch" and timed[1:] == [("bench", FOLDER[i]) for i in (1, 2, 3)]
    assert [o[2] for o in outcomes] == [False, True, True]
    assert any("together failed" in e.message and "illegal memory access" in e.message for e in events)
    # timed one by one, but all before any is judged: c2 (replaced by c3) is not re-profiled either
    assert [c for c in simulated_gpu["calls"] if c[0] == "profile"] == [("profile", "source.cu")]
    assert "not re-profiled: c3 of the same batch is faster" in loop.state.outcomes[1].reason


def test_an_excessive_speedup_is_reprofiled_and_its_profile_planned_from(
    tmp_path: Path, sources: list[str], monkeypatch: pytest.MonkeyPatch, simulated_gpu: dict[str, Any]
) -> None:
    """A >10x candidate is accepted (flagged for review): it must be re-profiled like any winner, or the
    next iteration plans from the original's profile."""

    def one(wl: Any, candidate: Path | None, spec: Any, **_: Any) -> Timing:
        t = _timing(candidate.read_text() if candidate else "")
        if t.speedup and t.speedup > 1.02:
            t.speedup, t.flags = 21.0, ["excessive-speedup"]
        return t

    monkeypatch.setattr(LaunchSpecTarget, "shares_timing_worker", False)
    outcomes, _, loop = _run(tmp_path, sources[1:2], replace(simulated_gpu["services"], time=one))
    assert outcomes == [("c1", "accepted", True)]
    assert [c for c in simulated_gpu["calls"] if c[0] == "profile"]
    assert loop.state.before is simulated_gpu["padded_profile"]
    assert "FLAGGED FOR REVIEW" in loop.state.outcomes[0].reason


def test_only_device_code_candidates_share_a_timing_worker() -> None:
    """Python candidates run their module at import: each is timed in a fresh process."""
    assert LaunchSpecTarget.shares_timing_worker is True
    assert KernelBenchTarget.shares_timing_worker is False
    assert OptimizeWorkload.shares_timing_worker is False
