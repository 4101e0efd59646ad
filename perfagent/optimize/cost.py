"""Where an optimize run's wall time goes: ``StageClock`` times the loop's stages, ``RunCost`` keeps them.

The clock counts the wall time of the thread that made it (the loop's): the builds and verifications of
a batch run in a pool meanwhile, so their time is the loop's wait for them (``verify``). A stage opened
inside another is taken out of the outer one, so every second is counted once; what no stage claims is
``other`` (staging files, writing the record, events).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from perfagent.optimize import reprofile
from perfagent.records import IterationCost, ProfileRun, RunCost
from perfagent.rewrite.recipes import _compile_check
from perfagent.sandbox import standby

__all__ = [
    "BASELINE_STAGES",
    "STAGE_ORDER",
    "CompileMeter",
    "ProfileLog",
    "StageClock",
    "WorkerCount",
    "run_cost",
]

STAGE_ORDER = (
    "baseline-profile",
    "baseline-time",
    "plan",
    "propose",
    "compile-check",
    "build",
    "verify",
    "time",
    "profile",
    "other",
)
"""The stages in the order a run meets them (how the summary lists them)."""
BASELINE_STAGES = {"profile": "baseline-profile", "time": "baseline-time"}
"""``OptimizeBaseline.stage_s`` keys -> their ``RunCost`` stage."""


class StageClock:
    """Wall seconds per stage of the owner thread (calls from other threads are not counted)."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = {}
        self.counts: dict[str, int] = {}
        self._owner = threading.get_ident()
        self._inner: list[float] = []
        """Per open stage, the seconds of the stages opened inside it."""

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Count the block's wall time as ``name`` (less what stages inside it counted)."""
        if threading.get_ident() != self._owner:
            yield
            return
        start = time.monotonic()
        self._inner.append(0.0)
        try:
            yield
        finally:
            elapsed = time.monotonic() - start
            inner = self._inner.pop()
            self.add(name, elapsed - inner)
            if self._inner:
                self._inner[-1] += elapsed

    def add(self, name: str, seconds: float) -> None:
        self.totals[name] = self.totals.get(name, 0.0) + seconds

    def move(self, seconds: float, source: str, target: str) -> None:
        """``seconds`` counted as ``source`` belong to ``target`` (the compile checks inside a propose call)."""
        self.add(source, -seconds)
        self.add(target, seconds)

    def count(self, name: str, n: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + n


class CompileMeter:
    """The recipes' compile checks during a stretch of work (``_compile_check.spent`` before and after)."""

    def __init__(self) -> None:
        self._start = _compile_check.spent()
        self.wait_s = 0.0
        self.compiles = 0

    def stop(self) -> CompileMeter:
        now = _compile_check.spent()
        self.wait_s = max(0.0, now.wait_s - self._start.wait_s)
        self.compiles = now.compiles - self._start.compiles
        return self


def run_cost(
    clock: StageClock,
    iterations: list[IterationCost],
    baseline_s: dict[str, float],
    wall_s: float,
    workers: standby.Counts | None = None,
    profiles: list[ProfileRun] | None = None,
) -> RunCost:
    """The record's ``RunCost``: the original's stages, the loop's, and ``other`` for the rest of ``wall_s``;
    ``workers``: the run's fresh worker starts (``WorkerCount.since``); ``profiles``: its ncu profiles
    (``ProfileLog.since``)."""
    stages = {BASELINE_STAGES.get(k, f"baseline-{k}"): v for k, v in baseline_s.items()}
    for name, seconds in clock.totals.items():
        stages[name] = stages.get(name, 0.0) + seconds
    stages["other"] = max(0.0, wall_s - sum(stages.values()))
    order = {name: i for i, name in enumerate(STAGE_ORDER)}
    ordered = sorted(stages.items(), key=lambda kv: order.get(kv[0], len(order)))
    return RunCost(
        stages={k: round(v, 3) for k, v in ordered},
        iterations=iterations,
        reprofiles=clock.counts.get("reprofiles", 0),
        reprofiles_skipped=clock.counts.get("reprofiles-skipped", 0),
        fresh_workers=workers.taken + workers.missed if workers else 0,
        workers_ahead=workers.taken if workers else 0,
        profiles=list(profiles or []),
    )


class ProfileLog:
    """The ncu profiles of one run: those ``reprofile`` made in this process since this was made."""

    def __init__(self) -> None:
        self._start = len(reprofile.profile_runs())

    def since(self) -> list[ProfileRun]:
        return reprofile.profile_runs()[self._start :]


class WorkerCount:
    """The fresh worker starts of one run: this process's counts since it was made."""

    def __init__(self) -> None:
        self._start = standby.counts()

    def since(self) -> standby.Counts:
        now, s = standby.counts(), self._start
        return standby.Counts(
            now.started - s.started, now.taken - s.taken, now.missed - s.missed, now.discarded - s.discarded
        )
