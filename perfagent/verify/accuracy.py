"""The accuracy rule: is a candidate no less accurate than the original, against a float64 run?

The dtype tolerance compares the candidate with the original *in the original's precision*. Two
correct fp32 reductions that only sum in different orders differ by their rounding errors, and on
a long sum (K = 131072) with an output that cancels to a small value that difference exceeds
rtol 1e-4. Both are estimates of the exact result, so both are measured against a float64 run of
the original (the same model and inputs cast to float64), and an output that fails the dtype
tolerance still passes when, at every element,

    |candidate - fp64| ≤ atol + rtol·|fp64| + ACCURACY_FACTOR × max|original - fp64|

Normwise on purpose (the original's *largest* error, not its error at the same element): rounding
errors of a sum scale with the summed terms, not with the result, so elementwise ratios on
cancelling outputs are ratios of two noise samples (one in six exceeds 4x for equally good
orders), while the maximum over a tensor is a stable statistic. The dtype tolerance term is the
floor: an exact original (ops that round once) does not shrink the bound to zero.

Imports torch at module import: only the worker process (and tests) import this module.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from perfagent.verify.models import ACCURACY_FACTOR


@dataclass
class Accuracy:
    """One output compared with a float64 run of the original, next to the original's own error."""

    ok: bool
    numel: int
    bad: int
    """Elements outside both the dtype tolerance of the original and the accuracy bound."""
    candidate_err: float
    """max |candidate - fp64| over the elements where both are finite."""
    original_err: float
    """max |original - fp64| over the elements where both are finite."""
    usage: float
    """max |candidate - fp64| / allowed: at most 1 passes; ranks comparisons by how close they came
    (inf with NaN/Inf in the candidate where the float64 run is finite)."""
    factor: float = ACCURACY_FACTOR
    nonfinite: int = 0
    """Elements NaN/Inf in the candidate where the float64 run is finite."""


def applies(expected: Any, precise: Any) -> bool:
    """Whether the rule can judge this output: a real floating-point output below float64 precision
    and a float64 result of the same shape for it."""
    return (
        isinstance(expected, torch.Tensor)
        and isinstance(precise, torch.Tensor)
        and expected.is_floating_point()
        and expected.dtype != torch.float64
        and precise.dtype == torch.float64
        and tuple(precise.shape) == tuple(expected.shape)
    )


def compare_accuracy(
    got: torch.Tensor,
    expected: torch.Tensor,
    precise: torch.Tensor,
    atol: float,
    rtol: float,
    factor: float = ACCURACY_FACTOR,
) -> Accuracy:
    """Judge ``got`` against ``precise`` (float64 run) with the original ``expected``'s own error as the yardstick.

    An element passes when it is within the dtype tolerance of the original (as without the rule:
    this keeps NaN-for-NaN and Inf-for-Inf matches) or within the accuracy bound of the float64 run.
    """
    with torch.no_grad():
        dev = expected.device
        g, e, h = (
            t.detach().reshape(-1).to(device=dev, dtype=torch.float64) for t in (got, expected, precise)
        )
        numel = h.numel()
        if numel == 0:
            return Accuracy(
                ok=True, numel=0, bad=0, candidate_err=0.0, original_err=0.0, usage=0.0, factor=factor
            )
        zero = torch.zeros_like(h)
        both = torch.isfinite(e) & torch.isfinite(h)
        original_err = float(torch.where(both, (e - h).abs(), zero).max().item())
        allowed = atol + rtol * h.abs() + factor * original_err
        diff = (g - h).abs()
        near_precise = torch.isfinite(h) & (diff <= allowed)  # NaN compares False
        near_original = (
            (g == e) | (torch.isnan(g) & torch.isnan(e)) | ((g - e).abs() <= atol + rtol * e.abs())
        )
        bad = int((~(near_precise | near_original)).sum().item())
        judged = torch.isfinite(h) & torch.isfinite(g)
        nonfinite = int((torch.isfinite(h) & ~torch.isfinite(g)).sum().item())
        candidate_err = float(torch.where(judged, diff, zero).max().item())
        ratio = torch.where(judged & (diff > 0), diff / allowed.clamp_min(1e-300), zero)
        usage = math.inf if nonfinite else float(ratio.max().item())
    return Accuracy(
        ok=bad == 0,
        numel=numel,
        bad=bad,
        candidate_err=candidate_err,
        original_err=original_err,
        usage=usage,
        factor=factor,
        nonfinite=nonfinite,
    )


def describe_accuracy(acc: Accuracy) -> str:
    """Both errors against the float64 run, the bound, and the outcome, in one clause."""
    outcome = (
        "no less accurate than the original"
        if acc.ok
        else f"less accurate than the original ({acc.bad}/{acc.numel} elements beyond that)"
    )
    nan = f" and {acc.nonfinite} NaN/Inf" if acc.nonfinite else ""
    return (
        f"against a float64 run of the original: candidate max abs err {acc.candidate_err:.3g}{nan}, "
        f"original max abs err {acc.original_err:.3g} (allowed: atol + rtol·|fp64| + {acc.factor:g} × "
        f"{acc.original_err:.3g}): {outcome}"
    )


@dataclass
class AccuracyTracker:
    """The comparisons the accuracy rule judged: how many it passed, and the one closest to failing."""

    passes: int = 0
    worst: Accuracy | None = None

    def add(self, acc: Accuracy) -> None:
        self.passes += int(acc.ok)
        if self.worst is None or acc.usage > self.worst.usage:
            self.worst = acc

    def merge(self, other: AccuracyTracker) -> None:
        self.passes += other.passes
        if other.worst is not None and (self.worst is None or other.worst.usage > self.worst.usage):
            self.worst = other.worst

    def summary_fields(self) -> dict[str, Any]:
        """``ErrorSummary`` fields (none when the rule was never consulted)."""
        if self.worst is None:
            return {}
        return {
            "max_abs_error_vs_fp64": self.worst.candidate_err,
            "original_max_abs_error_vs_fp64": self.worst.original_err,
            "accuracy_rule_passes": self.passes,
        }

    def pass_detail(self) -> str:
        """The ``correctness`` detail when the rule passed some comparison (empty otherwise)."""
        if not self.passes or self.worst is None:
            return ""
        return (
            f"{self.passes} comparison(s) outside the dtype tolerance of the original passed the "
            f"accuracy rule; closest to the bound, {describe_accuracy(self.worst)}"
        )
