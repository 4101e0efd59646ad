"""An iteration's launch-spec candidates are verified and timed in one worker (``optimize.together``):
the outcomes are those of the separate workers, a batch where one candidate fails is timed in a fresh
worker with only those that passed, and the record counts the timing as the time stage.

The GPU is simulated (``simulated_gpu``: the one worker's verdicts and timings stubbed, profiles from a
recorded report); the worker side is real in ``tests/verify/test_verify_many.py`` (CPU).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from perfagent.optimize import together
from perfagent.optimize.measure import Timing
from perfagent.optimize.services import Services
from perfagent.verify.models import Check, VerificationResult
from tests.optimize.test_batch_timing import FOLDER, _run, _stub_timing, _timing
from tests.optimize.test_batch_timing import sources as sources  # noqa: F401 - the fixture, shared


def _one_worker(
    services: Services, knobs: dict[str, Any], *, fail: str | None = None, time_s: float = 0.0
) -> Services:
    """``services`` with the iteration's worker: verdicts from the simulated GPU (``fail``: the folder that
    fails), the timings of ``test_batch_timing`` when every candidate passed."""

    def one_worker(wl: Any, pairs: list[tuple[Path, Any]], **_: Any) -> together.Together:
        knobs["calls"].append(("verify-and-time", [c.parent.name for c, _ in pairs]))
        verdicts = [_verdict(c, fail) for c, _ in pairs]
        passed = all(v.verdict == "pass" for v in verdicts)
        timed: list[Timing] | None = [_timing(c.read_text()) for c, _ in pairs] if passed else None
        return together.Together(verdicts, timed, [0.5] * len(pairs), time_s, 1)

    return replace(services, verify_and_time=one_worker)


def _verdict(candidate: Path, fail: str | None) -> VerificationResult:
    bad = candidate.parent.name == fail
    return VerificationResult(
        verdict="fail" if bad else "pass",
        reason="correctness: out of tolerance" if bad else "every check passed",
        checks=[Check(name="correctness", passed=not bad, detail="simulated")],
        reference="slow.cu",
        candidate=candidate.name,
        kind="cuda-kernel",
        device="cuda:0 (simulated)",
    )


def test_one_worker_verifies_and_times_the_batch_with_the_separate_workers_outcomes(
    tmp_path: Path, sources: list[str], monkeypatch: pytest.MonkeyPatch, simulated_gpu: dict[str, Any]
) -> None:
    services = _stub_timing(simulated_gpu)
    monkeypatch.setenv(together.ITERATION_WORKER_ENV, "separate")
    separate, _, _ = _run(tmp_path, sources, services, name="separate")
    simulated_gpu["calls"].clear()
    monkeypatch.delenv(together.ITERATION_WORKER_ENV)
    services = _one_worker(services, simulated_gpu, time_s=0.3)
    outcomes, events, loop = _run(tmp_path, sources, services, name="one")
    calls = [c for c in simulated_gpu["calls"] if c[0] != "profile"]
    assert calls == [("verify-and-time", [FOLDER[1], FOLDER[2], FOLDER[3]])]  # no other worker
    assert (
        outcomes
        == separate
        == [("c1", "not-faster", False), ("c2", "accepted", True), ("c3", "accepted", True)]
    )
    # still only the batch's final winner is re-profiled
    assert [c for c in simulated_gpu["calls"] if c[0] == "profile"] == [("profile", "source.cu")]
    assert any("in one worker, then timing them there" in e.message for e in events)
    assert all(o.stage_s.get("verify") == 0.5 and o.stage_s.get("time") == 0.1 for o in loop.state.outcomes)
    assert (
        loop.ctx.tally.clock.totals["time"] >= 0.3
    )  # the worker's timing step is the time stage, not verify


def test_a_batch_with_a_failed_candidate_is_timed_in_a_fresh_worker_without_it(
    tmp_path: Path, sources: list[str], simulated_gpu: dict[str, Any]
) -> None:
    services = _one_worker(_stub_timing(simulated_gpu), simulated_gpu, fail=FOLDER[1])
    outcomes, _, _ = _run(tmp_path, sources, services)
    calls = [c for c in simulated_gpu["calls"] if c[0] != "profile"]
    assert calls == [
        ("verify-and-time", [FOLDER[1], FOLDER[2], FOLDER[3]]),
        ("bench-batch", [FOLDER[2], FOLDER[3]]),
    ]
    assert outcomes == [("c1", "incorrect", False), ("c2", "accepted", True), ("c3", "accepted", True)]


def test_the_separate_workers_stay_for_python_candidates_and_on_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Workload:
        shares_timing_worker = False
        timed_by = "cuda-events"

    assert not together.wanted(Workload(), gpu=True)  # type: ignore[arg-type]
    Workload.shares_timing_worker = True
    assert together.wanted(Workload(), gpu=True)  # type: ignore[arg-type]
    assert not together.wanted(Workload(), gpu=False)  # type: ignore[arg-type]
    monkeypatch.setenv(together.ITERATION_WORKER_ENV, "separate")
    assert not together.wanted(Workload(), gpu=True)  # type: ignore[arg-type]


def test_a_lone_candidate_is_verified_and_timed_in_one_worker_too(
    tmp_path: Path, sources: list[str], simulated_gpu: dict[str, Any]
) -> None:
    services = _one_worker(_stub_timing(simulated_gpu), simulated_gpu, time_s=0.2)
    outcomes, _, loop = _run(tmp_path, sources[1:2], services)
    calls = [c for c in simulated_gpu["calls"] if c[0] != "profile"]
    assert calls == [("verify-and-time", [FOLDER[1]])]  # no second worker to time it
    assert outcomes == [("c1", "accepted", True)]
    assert loop.state.outcomes[0].stage_s["time"] == 0.2 and loop.ctx.tally.clock.totals["time"] >= 0.2
