"""Timing's worker job and its typed request, registered with the sandbox's job registry.

Importing this module registers the job; it does not import torch (``bench_job`` loads in the worker).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from perfagent.sandbox.jobs import Job, register
from perfagent.sandbox.wire import WorkerRequest
from perfagent.workloads.model import AnyRunnable
from profilers.settings import TIMING


class BenchRequest(WorkerRequest):
    """Time a baseline (and candidates) in interleaved rounds."""

    job: Literal["bench"] = "bench"
    batch: list[AnyRunnable] = Field(default_factory=list)
    """Further candidates timed in the same interleaved rounds as ``candidate`` (one worker start for
    several candidates; each is loaded into this one process, so the caller decides whose code may
    share it)."""
    runs: int = 100
    """Timed calls per series, at most: ``budget_s`` may stop the rounds sooner."""
    budget_s: float = TIMING.budget_s
    """Wall time the timed rounds may fill, s, judged on the first ``min_runs`` rounds; 0: all ``runs``."""
    min_runs: int = TIMING.min_runs
    """Rounds taken whatever the budget (unless ``runs`` is fewer)."""
    warmup: int = 10
    """Untimed calls per workload first."""
    flush_l2: bool = True

    def candidates(self) -> list[AnyRunnable]:
        return [*super().candidates(), *self.batch]


BENCH = register(
    Job(
        name="bench",
        mode="bench",
        request_type=BenchRequest,
        registered_by=__name__,
        entry=f"{__package__}.bench_job:run_bench",
    )
)
