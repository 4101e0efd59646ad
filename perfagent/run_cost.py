"""Where an optimize run's wall time went (``OptimizeResult.cost``): stages, iterations, workers, profiles.

Part of the saved record (``perfagent.records`` re-exports these); every field has a default, so records
from before a field existed load unchanged.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from profilers.model import Frozen


class ProfileRun(Frozen):
    """One ncu profile of the run (``RunCost.profiles``): whose, through which harness, how long."""

    of: str
    """'original', or the candidate's folder name (``03_vectorize-access``)."""
    harness: Literal["torch-free", "torch"] | None = None
    """The harness ncu started (``perfagent.workloads.harness_choice``); None: the workload's own program."""
    harness_reason: str = ""
    """Why the torch harness ran (empty for the torch-free one)."""
    wall_s: float = 0.0
    """Wall seconds of the profile: ncu's runs (a second with tier B when needed), the harness's start."""
    ncu_runs: int = 0
    profiled: bool = True
    """False: no profile came back (the run's notes say why)."""


class IterationCost(Frozen):
    """Where one iteration's wall time went (``RunCost.iterations``)."""

    iteration: int
    transform: str
    wall_s: float = 0.0
    """Propose, then build, verify, time and re-profile its candidates."""
    propose_s: float = 0.0
    """The rewriter's propose call (recipe generation or the LLM request), its compile checks included."""
    compile_check_s: float = 0.0
    """Waiting for the recipes' compile checks (NVRTC / nvcc) during the propose call."""
    compiles: int = 0
    """Compiler runs of those checks (repeats of a source are answered from the first)."""
    candidates: int = 0


class RunCost(Frozen):
    """Where an optimize run's wall time went, each second counted once (the loop's main thread)."""

    stages: dict[str, float] = Field(default_factory=dict)
    """Seconds by stage: baseline-profile, baseline-time, plan, propose (its compile checks taken out),
    compile-check, build, verify (with the builds of a batch verified at once), time, profile (candidates'
    ncu re-profiles), other (the rest of ``wall_s``: staging, records, events)."""
    iterations: list[IterationCost] = Field(default_factory=list)
    reprofiles: int = 0
    """ncu re-profiles of candidates."""
    reprofiles_skipped: int = 0
    """Winners not re-profiled: replaced by a faster one of their batch, or the last iteration's."""
    fresh_workers: int = 0
    """Verification and timing workers started as new interpreters (confined GPU workers; forked ones
    are not counted): each imports torch before its job (0 in records from before)."""
    workers_ahead: int = 0
    """Of ``fresh_workers``, those started ahead, their imports overlapping other stages
    (``perfagent.sandbox.standby``)."""
    profiles: list[ProfileRun] = Field(default_factory=list)
    """Every ncu profile of the run in order: the original's and the re-profiles (empty in records from
    before)."""
