"""``--time-budget``: an optimize run stops planning when another iteration would not fit its wall time.

The loop asks ``TimeBudget.why_stop`` before each iteration and ``why_not_reprofile`` before re-profiling
a winner. The next iteration is estimated as long as the longest finished one (on the H200 unseen2 runs an
iteration took 11-35 s, the one with a re-profile the longest), so a run that would overrun stops before
it starts the iteration, not in the middle of one: every candidate it measured is measured in full (built,
verified, timed against the baseline). The first iteration always runs: with nothing finished there is no
estimate, and a run that measured the original and tried nothing would prove nothing. A winner's re-profile
exists for the next plan only; when the budget leaves no next iteration, it is skipped and the record says
why (``--profile-best`` still asks for it).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class TimeBudget:
    """The run's wall-time budget (``budget_s`` 0: none) and what was spent before the loop started."""

    budget_s: float
    spent_before_s: float = 0.0
    """Wall seconds the original's profile and timing took (the loop starts after them)."""
    started: float = field(default_factory=time.monotonic)
    """When the loop started (``time.monotonic``)."""
    iteration_started: float | None = None
    """When the running iteration started (None: between iterations)."""

    def elapsed_s(self) -> float:
        """Wall seconds of the run so far (the original's measurement included)."""
        return self.spent_before_s + time.monotonic() - self.started

    def start_iteration(self) -> None:
        self.iteration_started = time.monotonic()

    def why_stop(self, iteration_walls: list[float]) -> str | None:
        """Why no further iteration starts (None: it fits, or no budget was given)."""
        if self.budget_s <= 0 or not iteration_walls:  # the first iteration always runs
            return None
        used = self.elapsed_s()
        longest = max(iteration_walls)
        if used + longest <= self.budget_s:
            return None
        return (
            f"time budget spent: {used:.1f} s of --time-budget {self.budget_s:g} s used, and the next "
            f"iteration would take ~{longest:.1f} s (the longest so far)"
        )

    def why_not_reprofile(self, iteration_walls: list[float]) -> str | None:
        """Why a winner of the running iteration is not re-profiled: no later iteration fits the budget to
        plan from its profile, even counting this iteration's time so far as the next one's (None: it may)."""
        if self.budget_s <= 0:
            return None
        running = time.monotonic() - self.iteration_started if self.iteration_started is not None else 0.0
        used = self.elapsed_s()
        longest = max([*iteration_walls, running])
        if used + longest <= self.budget_s:
            return None
        return (
            f"not re-profiled: the time budget leaves no later iteration to plan from its profile "
            f"({used:.1f} s of --time-budget {self.budget_s:g} s used, an iteration takes ~{longest:.1f} s; "
            "--profile-best re-profiles it)"
        )
