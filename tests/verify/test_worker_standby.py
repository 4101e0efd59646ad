"""A fresh worker started ahead (``perfagent.sandbox.standby``): taken by the next fresh worker start, it
judges as a fresh start does; a spare that is not what a fresh start would be now is discarded.

Real workers on the CPU: ``PERFAGENT_WORKER_START=fresh`` makes every CPU worker a new interpreter, as a
confined GPU worker is (``runner.gpu_confined_by_bubblewrap_alone``), so the standby path runs here.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from perfagent.sandbox import runner, standby, worker
from perfagent.verify import verify
from profilers.errors import ToolTimeout
from profilers.process import start_standby

CANDIDATES = Path(__file__).parent / "candidates"
PROBLEM = CANDIDATES / "problem_add.py"


def _delta(before: standby.Counts) -> tuple[int, int, int, int]:
    now = standby.counts()
    return (
        now.started - before.started,
        now.taken - before.taken,
        now.missed - before.missed,
        now.discarded - before.discarded,
    )


def _judged(candidate: str) -> tuple[str, list[str]]:
    result = verify(PROBLEM, CANDIDATES / candidate, device="cpu", seeds=1, timeout_s=60)
    return result.verdict, sorted(c.name for c in result.checks if not c.passed)


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(runner.WORKER_START_ENV, "fresh")
    monkeypatch.delenv(standby.STANDBY_ENV, raising=False)


@pytest.mark.usefixtures("fresh")
def test_workers_started_ahead_are_taken_and_judge_as_fresh_ones() -> None:
    alone = [_judged(c) for c in ("honest_add_block256.py", "cheat_exit.py")]
    assert alone[0][0] == "pass" and alone[1][0] == "fail"
    before = standby.counts()
    with runner.workers_ahead("cpu"):
        ahead = [_judged(c) for c in ("honest_add_block256.py", "cheat_exit.py")]
        # two started on entry, one after each take; each worker start took one waiting
        assert _delta(before) == (2 + 2, 2, 0, 0)
    assert ahead == alone
    assert _delta(before) == (4, 2, 0, 2)  # the spares left at the end are not kept


@pytest.mark.usefixtures("fresh")
def test_a_spare_that_a_fresh_start_would_not_be_is_discarded(monkeypatch: pytest.MonkeyPatch) -> None:
    before = standby.counts()
    with runner.workers_ahead("cpu", spares=1):
        monkeypatch.setenv("PERFAGENT_TEST_CHANGED", "1")  # a fresh worker now gets another environment
        assert _judged("honest_add_block256.py")[0] == "pass"
        started, taken, missed, discarded = _delta(before)
    assert (taken, missed, discarded) == (0, 1, 1) and started == 2


def test_no_worker_is_started_ahead_where_workers_are_forked_or_when_turned_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(runner.WORKER_START_ENV, raising=False)
    before = standby.counts()
    with runner.workers_ahead("cpu"):  # CPU workers fork from the warm server: nothing to start ahead
        assert _delta(before) == (0, 0, 0, 0)
    monkeypatch.setenv(runner.WORKER_START_ENV, "fresh")
    monkeypatch.setenv(standby.STANDBY_ENV, "0")
    with runner.workers_ahead("cpu"):
        assert _judged("honest_add_block256.py")[0] == "pass"
    assert _delta(before) == (0, 0, 1, 0)


def test_a_standby_worker_imports_only_this_package_torch_and_cuda_core_ahead() -> None:
    with pytest.raises(ValueError, match="only perfagent modules"):
        worker.preload("perfagent.sandbox.jobs,os")
    worker.preload("perfagent.sandbox.jobs,cuda.core")  # cuda.core may be missing: its job says so later
    with pytest.raises(ImportError):
        worker.preload("perfagent.no_such_module")


def test_a_standby_command_gets_its_input_later_and_its_time_limit_from_then() -> None:
    echo = start_standby([sys.executable, "-c", "import sys; print(sys.stdin.readline().strip()[::-1])"])
    done = echo.finish("abc\n", timeout_s=60)
    assert done.ok and done.stdout.strip() == "cba"
    with pytest.raises(RuntimeError, match="once"):
        echo.finish("again\n", timeout_s=60)
    hang = start_standby(
        [sys.executable, "-c", "import sys, threading; sys.stdin.readline(); threading.Event().wait(120)"]
    )
    with pytest.raises(ToolTimeout, match="0.5 s limit"):
        hang.finish("go\n", timeout_s=0.5)
    assert not hang.alive  # its process group was killed
    waiting = start_standby([sys.executable, "-c", "import sys; sys.stdin.readline()"])
    waiting.cancel()
    waiting.cancel()  # idempotent
    assert not waiting.alive
