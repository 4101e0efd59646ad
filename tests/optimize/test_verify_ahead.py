"""A batch's candidates are built and verified at once (``--verify-jobs``); timing stays one at a time.

The GPU is simulated (``simulated_gpu``): verifications wait for each other so that overlap is certain, timing records
whether anything else was running. The outcome of a run must not depend on the number of jobs.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from perfagent.optimize import measure, together
from perfagent.optimize.events import LoopEvent, Verified
from perfagent.optimize.loop import one_machine_loop
from perfagent.optimize.loop_state import BaselineState
from perfagent.optimize.services import Services
from perfagent.optimize.settings import OptimizeSettings
from perfagent.workloads.detect import resolve
from tests.optimize.conftest import PADDED
from tests.optimize.helpers import TRANSPOSE, ScriptedRewriter, copy_example


@pytest.fixture(autouse=True)
def separate_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are of the separate path (a worker per verification, one for the batch's timing): the
    fallback when a candidate fails in the iteration's one worker (``test_iteration_worker.py``)."""
    monkeypatch.setenv(together.ITERATION_WORKER_ENV, "separate")


MEET_BACKSTOP_S = 60.0
"""How long a verification waits for another to overlap it (reached only when the loop is serial)."""


class _Meter:
    """How many verifications and timings run at once, and whether a timing ever overlapped anything."""

    def __init__(self) -> None:
        self.lock = threading.Condition()
        self.verifying = 0
        self.most_verifying = 0
        self.timed_while_busy = False
        self.meet = 1
        """Verifications that wait for each other before going on: 2 shows overlap by an event, where a
        sleep only made it likely (issue 26: under load a thread can start after another's sleep ended)."""


def _instrument(knobs: dict[str, Any]) -> tuple[_Meter, Services]:
    """The simulated GPU's services, verifications meeting so that overlap shows, and what the meter saw."""
    meter = _Meter()
    simulated: Services = knobs["services"]
    verify, bench = simulated.verify, simulated.time

    def build(*_: Any, **__: Any) -> measure.BuildOutcome:
        return measure.BuildOutcome(ok=None, detail="not built (simulated)")

    def slow_verify(*args: Any, **kwargs: Any) -> Any:
        with meter.lock:
            meter.verifying += 1
            meter.most_verifying = max(meter.most_verifying, meter.verifying)
            meter.lock.notify_all()
            # run on once ``meet`` verifications are running at once (or have been); a serial loop never
            # gets there and goes on at the backstop, with most_verifying 1
            meter.lock.wait_for(lambda: meter.most_verifying >= meter.meet, timeout=MEET_BACKSTOP_S)
        try:
            return verify(*args, **kwargs)
        finally:
            with meter.lock:
                meter.verifying -= 1

    def quiet_bench(*args: Any, **kwargs: Any) -> Any:
        with meter.lock:
            meter.timed_while_busy |= meter.verifying > 0
        return bench(*args, **kwargs)

    return meter, replace(simulated, build_check=build, verify=slow_verify, time=quiet_bench)


def _run(
    tmp_path: Path, name: str, jobs: int, services: Services
) -> tuple[list[tuple[Any, ...]], list[LoopEvent]]:
    folder = copy_example(TRANSPOSE, tmp_path / name)
    wl = resolve(folder / "slow.cu")
    original = wl.file.read_text()
    slower = original.replace("__syncthreads();", "__syncthreads(); __syncthreads();", 1)
    padded = original.replace("[TILE_DIM][TILE_DIM]", f"[TILE_DIM][{PADDED}]", 1)
    assert padded != original and slower != original
    # four proposals in one batch: a slower rewrite, the padded fix, a repeat of it, an untouched copy
    rewriter = ScriptedRewriter([slower, padded, padded, original], transform="smem-padding", per_call=4)
    events: list[LoopEvent] = []
    chosen = OptimizeSettings(iterations=1, transforms=("smem-padding",), max_candidates=4, verify_jobs=jobs)
    loop = one_machine_loop(
        wl,
        rewriter,
        tmp_path / name / "run",
        gpu=True,
        baseline=BaselineState(diagnosis=None, measured=False, can_profile=False, profile_note="simulated"),
        limits=chosen.loop_limits(),
        measuring=chosen.measure_limits(),
        services=services,
        progress=events.append,
    )
    result = loop.run()
    summary = [
        (c.id, c.verdict, c.accepted, c.speedup, Path(c.source_path or "-").parent.name)
        for c in result.candidates
    ]
    return summary, events


def test_outcomes_do_not_depend_on_the_number_of_jobs(tmp_path: Path, simulated_gpu: dict[str, Any]) -> None:
    meter, services = _instrument(simulated_gpu)
    one, _ = _run(tmp_path, "serial", 1, services)
    assert meter.most_verifying == 1
    meter.meet = 2
    three, events = _run(tmp_path, "ahead", 3, services)
    assert meter.most_verifying >= 2  # verifications overlapped
    assert not meter.timed_while_busy  # no timing ran while anything was being verified
    assert three == one
    verdicts = [c[1] for c in three]
    assert verdicts == ["not-faster", "accepted", "duplicate", "duplicate"]
    # the held-back events are told in the candidates' order, after the notice that says what runs at once
    said = [e.message for e in events]
    notice = next(i for i, m in enumerate(said) if "at once (3 jobs)" in m)
    verified = [e.message.split(":")[0] for e in events if isinstance(e, Verified)]
    assert verified == ["c1", "c2"] and said.index(next(m for m in said if m.startswith("c1: pass"))) > notice


def test_one_new_candidate_is_not_verified_ahead(tmp_path: Path, simulated_gpu: dict[str, Any]) -> None:
    _, services = _instrument(simulated_gpu)
    folder = copy_example(TRANSPOSE, tmp_path)
    wl = resolve(folder / "slow.cu")
    padded = wl.file.read_text().replace("[TILE_DIM][TILE_DIM]", f"[TILE_DIM][{PADDED}]", 1)
    events: list[LoopEvent] = []
    chosen = OptimizeSettings(iterations=1, transforms=("smem-padding",), verify_jobs=4)
    loop = one_machine_loop(
        wl,
        ScriptedRewriter([padded, padded], transform="smem-padding", per_call=2),
        tmp_path / "run",
        gpu=True,
        baseline=BaselineState(diagnosis=None, measured=False, can_profile=False, profile_note="simulated"),
        limits=chosen.loop_limits(),
        measuring=chosen.measure_limits(),
        services=services,
        progress=events.append,
    )
    result = loop.run()
    assert [c.verdict for c in result.candidates] == ["accepted", "duplicate"]
    assert not any("at once" in e.message for e in events)


def test_auto_jobs_follow_the_cpu_count(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    assert OptimizeSettings().measure_limits().jobs_for(3) == 3
    assert OptimizeSettings().measure_limits().jobs_for(8) == 4
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert OptimizeSettings().measure_limits().jobs_for(4) == 1  # a small machine verifies one at a time
    assert OptimizeSettings(verify_jobs=2).measure_limits().jobs_for(4) == 2
