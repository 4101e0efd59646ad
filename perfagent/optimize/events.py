"""Progress events of the optimize loop: small frozen models handed to the ``progress`` callback.

Every event has ``kind``, a human-readable ``message`` (what the CLI prints on stderr), and
``step``/``total`` (iteration and budget) so that a UI can drive a progress bar. A callback may raise
to cancel the run: the loop lets the exception propagate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import Field

from profilers.model import Frozen

__all__ = [
    "Accepted",
    "Built",
    "Info",
    "LoopEvent",
    "Planned",
    "Profiled",
    "ProgressCallback",
    "Proposed",
    "Rejected",
    "Timed",
    "Verified",
    "ignore_progress",
]


class LoopEvent(Frozen):
    """Base of every event."""

    kind: str
    message: str
    """One line for a terminal."""
    step: int | None = None
    """Current iteration (1-based), when inside one."""
    total: int | None = None
    """Iteration budget."""
    candidate: str | None = None
    """Candidate id ('c3') the event is about."""
    transform: str | None = None


class Info(LoopEvent):
    """Baseline measured, a plan step skipped, an LLM error, the loop stopping."""

    kind: Literal["info"] = "info"


class Planned(LoopEvent):
    """The planner ranked (finding, transform) pairs."""

    kind: Literal["planned"] = "planned"
    steps: list[str] = Field(default_factory=list)
    """Transform ids in the order they will be tried."""


class Proposed(LoopEvent):
    """The rewriter returned candidates for one transform."""

    kind: Literal["proposed"] = "proposed"
    count: int = 0


class Built(LoopEvent):
    """A candidate compiled (or failed to)."""

    kind: Literal["built"] = "built"
    ok: bool | None = None
    """None: no build check was possible here."""


class Verified(LoopEvent):
    """The verifier's verdict on a candidate."""

    kind: Literal["verified"] = "verified"
    verdict: str = ""


class Timed(LoopEvent):
    """A candidate was timed against the baseline."""

    kind: Literal["timed"] = "timed"
    speedup: float | None = None


class Profiled(LoopEvent):
    """A candidate was re-profiled; the targeted metric before and after."""

    kind: Literal["profiled"] = "profiled"
    metric: str | None = None
    before: float | None = None
    after: float | None = None


class Accepted(LoopEvent):
    """A candidate was kept (correct, faster beyond noise, targeted metric moved)."""

    kind: Literal["accepted"] = "accepted"
    speedup: float | None = None


class Rejected(LoopEvent):
    """A candidate was rejected; ``reason`` says why."""

    kind: Literal["rejected"] = "rejected"
    reason: str = ""


ProgressCallback = Callable[[LoopEvent], None]


def ignore_progress(_event: LoopEvent) -> None:
    """The progress callback of a run nobody watches."""
