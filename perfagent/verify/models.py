"""Verification results: pydantic, frozen, ``extra="forbid"`` (they cross process and disk boundaries).

A ``VerificationResult`` is what ``perfagent verify --format json`` prints and what the optimize
loop receives from ``perfagent.verify.verify``. Every failing ``Check`` says what was seen. ``Check``,
``Tolerance`` and ``ErrorSummary`` cross the worker boundary too: they live in ``perfagent.sandbox.wire``
and are re-exported here, where callers of ``verify`` look for them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from perfagent.sandbox.wire import (
    ACCURACY_FACTOR,
    ENVIRONMENT_CHECK,
    Check,
    ErrorSummary,
    Severity,
    Tolerance,
)
from perfagent.workloads.model import WorkloadKind
from profilers.model import Frozen

Verdict = Literal["pass", "fail", "inconclusive"]
SCHEMA_VERSION = 1

__all__ = [
    "ACCURACY_FACTOR",
    "ENVIRONMENT_CHECK",
    "SCHEMA_VERSION",
    "Check",
    "ErrorSummary",
    "Severity",
    "Tolerance",
    "VerificationResult",
    "Verdict",
]


class VerificationResult(Frozen):
    """The verdict on a candidate, with every check that led to it."""

    schema_version: int = SCHEMA_VERSION
    verdict: Verdict
    """pass: every error-severity check passed and the reference is informative; fail: at least one
    failed; inconclusive: the reference is degenerate or nondeterministic (never counts as a pass)."""
    reason: str
    """One line: why this verdict."""
    checks: list[Check]
    reference: str
    """The reference (oracle) as 'file:Class' or 'file:kernel (spec ...)'."""
    candidate: str
    kind: WorkloadKind
    """Workload kind of the reference."""
    device: str
    """Where it ran: 'cpu' or 'cuda:0 (<GPU name>)'."""
    seeds: list[int] = Field(default_factory=list)
    """Seeds the input sets were drawn with (rerun with --seed to reproduce)."""
    distributions: list[str] = Field(default_factory=list)
    """Input distributions used ('get_inputs' = the problem's own, then normal, uniform, laplace, ...)."""
    input_sets: int = 0
    """How many distinct input sets were compared."""
    tolerance: str = ""
    """The tolerance rule applied."""
    errors: ErrorSummary = Field(default_factory=ErrorSummary)
    sanitizer: bool = False
    """Whether compute-sanitizer memcheck ran."""
    notes: list[str] = Field(default_factory=list)
    """Plain-language remarks (what was not checked, fallbacks, the check-command caveat)."""
    elapsed_s: float = 0.0
    """Wall time of the whole verification, s."""

    @property
    def failed_checks(self) -> list[Check]:
        return [c for c in self.checks if not c.passed and c.severity == "error"]
