"""What every part of one optimize loop reads and updates: the workload, its limits, the state, the clock.

The loop (``loop``) is given its parts: a rewriter (the proposal source), an evaluate step (``evaluate``
measures; ``phase_steps`` writes proposals or replays stored ones) and, optionally, the run writer.
They share one ``RunContext``: the workload (a write-kernel step changes it), the baseline, the two narrow
limits taken from the settings at composition (``perfagent.optimize.limits``: how a candidate is measured,
how far the loop goes), the ``Services`` that reach the machine, the ``LoopState`` and the ``LoopTally``
(the iteration count, the stage clock, the iterations' costs, the ``--time-budget``). The context knows
none of its parts, and none of the run's other options (the LLM endpoint, the output folder, ``--apply``).
The run writer is handed the state and the tally alone.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from perfagent.optimize.cost import StageClock
from perfagent.optimize.events import LoopEvent, ProgressCallback
from perfagent.optimize.limits import LoopLimits, MeasureLimits
from perfagent.optimize.loop_state import BaselineState, LoopState, candidate_key
from perfagent.optimize.services import Services, current
from perfagent.optimize.time_budget import TimeBudget
from perfagent.records import IterationCost
from perfagent.workloads.optimizable import OptimizeWorkload

__all__ = ["LoopTally", "RunContext", "new_context"]


@dataclass
class LoopTally:
    """What the loop has spent so far: the iteration it is in, its stages' wall seconds, each finished
    iteration's cost and the ``--time-budget``. The run writer records it (``RunWriter.attach``)."""

    step: int = 0
    """The current iteration (1-based; 0 before the first)."""
    clock: StageClock = field(default_factory=StageClock)
    """Wall seconds of the loop's stages (``OptimizeResult.cost``)."""
    iteration_costs: list[IterationCost] = field(default_factory=list)
    budget: TimeBudget = field(default_factory=lambda: TimeBudget(0.0))
    """``--time-budget``: when to stop planning, and winners no later iteration can plan from."""

    def iteration_walls(self) -> list[float]:
        """Wall seconds of each finished iteration (``--time-budget``'s estimate of the next)."""
        return [c.wall_s for c in self.iteration_costs]


@dataclass
class RunContext:
    """One loop's shared state (see the module's docstring)."""

    wl: OptimizeWorkload
    run_dir: Path
    gpu: bool
    baseline: BaselineState
    limits: LoopLimits
    """What the loop plans and how far it goes."""
    measuring: MeasureLimits
    """How each candidate is built, verified, timed and re-profiled."""
    services: Services
    state: LoopState
    tally: LoopTally
    progress: ProgressCallback | None = None

    def emit(self, event: LoopEvent) -> None:
        if self.progress is not None:
            self.progress(event)

    def tell(self, cls: type[LoopEvent], message: str, **extra: object) -> None:
        """Emit an event of ``cls`` carrying the current iteration and the budget."""
        self.emit(cls(message=message, step=self.tally.step or None, total=self.limits.iterations, **extra))  # type: ignore[arg-type]

    def display_path(self) -> str:
        """The workload's file as the user would write it (relative where it can be)."""
        try:
            return os.path.relpath(self.wl.file)
        except ValueError:
            return str(self.wl.file)


def new_context(
    wl: OptimizeWorkload,
    run_dir: Path,
    *,
    gpu: bool,
    baseline: BaselineState,
    limits: LoopLimits,
    measuring: MeasureLimits,
    services: Services | None = None,
    progress: ProgressCallback | None = None,
) -> RunContext:
    """The context of a loop that starts from ``wl``'s file as it is now (the original)."""
    original = wl.file.read_text(encoding="utf-8")
    state = LoopState(
        source=original,
        source_file=wl.file,
        defines={},
        before=baseline.diagnosis.profile if baseline.diagnosis else None,
        diagnosis=baseline.diagnosis,
    )
    state.seen[candidate_key(original, {}, language=wl.language)] = "the original"
    if baseline.start_speedup is not None:
        state.best_speedup = 1.0  # speed-ups are normalised to the starting ModelNew
    return RunContext(
        wl=wl,
        run_dir=run_dir,
        gpu=gpu,
        baseline=baseline,
        limits=limits,
        measuring=measuring,
        services=current(services),
        state=state,
        tally=LoopTally(budget=TimeBudget(limits.time_budget_s, baseline.spent_s)),
        progress=progress,
    )
