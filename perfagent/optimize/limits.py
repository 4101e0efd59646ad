"""The narrow values the optimize loop's parts read, taken from ``OptimizeSettings`` once, at composition.

``OptimizeSettings`` holds every option of a run (the LLM endpoint, the output folder, ``--apply`` ...).
The loop's parts read two small subsets of it: how one kernel (the original or a candidate) is built,
verified, timed and re-profiled (``MeasureLimits``), and how far the loop goes (``LoopLimits``). Only the
composition (``optimize.api``, the two-machine rounds in ``optimize.phases``) reads the settings; the
parts are handed these frozen values, so a part cannot depend on an option it was not given.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["LoopLimits", "MeasureLimits"]


@dataclass(frozen=True)
class MeasureLimits:
    """How one kernel is built, verified, timed and re-profiled (``--arch``, ``--seeds``, ``--runs`` ...)."""

    arch: str
    """Architecture of nvcc builds and static analysis (``sm_90``)."""
    seeds: int
    """Verification seeds per candidate."""
    verify_seed: int | None
    """First verification seed (None: a fresh random one per verification)."""
    runs: int
    """Interleaved timing rounds, at most."""
    warmup: int
    """Untimed calls before timing."""
    timeout_s: float
    """Limit per call while verifying and timing, s."""
    compile_timeout_s: float
    """Limit for builds and first calls, s."""
    profile_timeout_s: float
    """Limit of one ncu run, s."""
    verify_jobs: int
    """Candidates built and verified at once (0: from the CPU count)."""

    def jobs_for(self, candidates: int) -> int:
        """How many of ``candidates`` are built and verified at once (``verify_jobs``; 0: from the CPU count)."""
        jobs = self.verify_jobs or min(4, (os.cpu_count() or 1) // 4)
        return max(1, min(jobs, candidates))


@dataclass(frozen=True)
class LoopLimits:
    """What the loop plans and how far it goes (``--iterations``, ``--transform``, ``--time-budget`` ...)."""

    iterations: int
    """Rewrite requests at most."""
    max_candidates: int
    """Candidates evaluated per request, at most."""
    repairs: int
    """Repair requests per failing llm candidate, at most."""
    transforms: tuple[str, ...] = ()
    """Transform ids to try instead of the diagnosis' plan (empty: the plan)."""
    finding: str | None = None
    """Only plan for findings of this category (None: every finding)."""
    profile_best: bool = False
    """Also re-profile the last iteration's winner."""
    time_budget_s: float = 0.0
    """Stop planning when another iteration would not fit this many wall seconds (0: no limit)."""
