"""Verification results: pydantic, frozen, ``extra="forbid"`` (they cross process and disk boundaries).

A ``VerificationResult`` is what ``perfagent verify --format json`` prints and what the optimize
loop receives from ``perfagent.verify.verify``. Every failing ``Check`` says what was seen.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from perfagent.workloads.model import WorkloadKind
from profilers.model import Frozen

Severity = Literal["error", "warning", "inconclusive"]
Verdict = Literal["pass", "fail", "inconclusive"]
SCHEMA_VERSION = 1
ACCURACY_FACTOR = 4.0
"""The accuracy rule's factor: a candidate may stray from a float64 run of the original by the dtype
tolerance plus this many times the original's own worst error against that run. 4 leaves room for
another summation order (rounding errors of equally good orders differ by ~2-3x, as torch's dynamo
accuracy check with its 2-3x RMSE multipliers also finds) and still fails an error 100x the
original's, the size a numerically worse formula (single-pass variance) shows."""


ENVIRONMENT_CHECK = "environment"
"""The check a candidate fails when this machine lacks what its code needs (CUDA toolkit, GPU): the
verdict is 'inconclusive' and the optimize loop records the candidate as not verified here, never as
incorrect."""


class Check(Frozen):
    """One check and its outcome."""

    name: str
    """Stable id, e.g. 'correctness', 'inputs-unchanged', 'static:no-streams'."""
    passed: bool
    detail: str = ""
    """What was seen: errors with values and the first bad index on failure; a summary on success."""
    severity: Severity = "error"
    """error: a failure fails the verdict; warning: reported only; inconclusive: a failure means the
    reference cannot tell right from wrong (verdict 'inconclusive', never 'pass')."""


class Tolerance(Frozen):
    """Comparison tolerance: |got - expected| <= atol + rtol * |expected| elementwise.

    ``None`` means the per-dtype default of the reference output: fp32 1e-4, fp16/bf16 1e-2,
    fp64 1e-7, integers and bool exact.
    """

    atol: float | None = None
    """Absolute tolerance (same unit as the output)."""
    rtol: float | None = None
    """Relative tolerance (fraction of |expected|)."""

    def is_default(self) -> bool:
        """Whether the per-dtype default applies (then the accuracy rule may also pass an output)."""
        return self.atol is None and self.rtol is None

    def describe(self, accuracy_rule: bool = False) -> str:
        """The rule as one line; ``accuracy_rule``: the float64 accuracy rule applies too."""
        if not self.is_default():
            return f"atol={self.atol if self.atol is not None else 'dtype default'}, rtol={self.rtol if self.rtol is not None else 'dtype default'}"
        text = "per dtype (fp32 1e-4, fp16/bf16 1e-2, fp64 1e-7, integers exact)"
        if accuracy_rule:
            text += (
                "; a float output outside it still passes when no less accurate than the original "
                "against a float64 run of the original: |candidate - fp64| ≤ atol + rtol·|fp64| + "
                f"{ACCURACY_FACTOR:g} × max|original - fp64|"
            )
        return text


class ErrorSummary(Frozen):
    """Largest errors of the candidate against the reference over every compared output."""

    max_abs_error: float | None = None
    """max |got - expected| (output units)."""
    max_rel_error: float | None = None
    """max |got - expected| / |expected| over elements with |expected| >= 1e-6."""
    mean_abs_error: float | None = None
    """Mean |got - expected| of the worst input set (output units)."""
    max_abs_error_vs_fp64: float | None = None
    """Accuracy rule: max |candidate - float64 run of the original| in the comparison closest to
    failing it (None: the rule was never consulted, the dtype tolerance decided alone)."""
    original_max_abs_error_vs_fp64: float | None = None
    """Accuracy rule: max |original - float64 run of the original| in that same comparison."""
    accuracy_rule_passes: int = 0
    """Comparisons outside the dtype tolerance of the original that the accuracy rule passed."""


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
