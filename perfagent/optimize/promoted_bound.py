"""A kernel "at its bound" on a pipe its data does not need is not at a useful bound.

The classifier sees counters, not types: a bf16 GELU typed with ``0.5``, ``tanh()`` and ``pow(v, 3.0)``
runs every element through the fp64 pipe, reaches 82 % of that pipe's peak on an H100, and is reported
"at its bound: little headroom" (severity info), which the planner answers with no busywork. But the
fp64 work is a promotion (CUDA C++ Best Practices Guide, "Promotions to Doubles"): demoting it to fp32
made the kernel 3.7x faster. The planner has the source, so it asks: is the bound the fp64 pipe, and is
the kernel's data something other than double (``_precision.promotions``, the analysis the
``demote-double`` recipe edits with)? Then the finding is actionable (severity high, its transforms
planned), and the plan says why.
"""

from __future__ import annotations

from collections.abc import Callable

from perfagent.rewrite.base import RewriteRequest
from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._precision import promotions
from profilers.model import Finding, KernelDiagnosis

__all__ = ["bound_pipe", "needless_bound", "unblock"]

_PRECISION_PIPES = ("fp64",)
"""Pipes a kernel can be bound on by accident of its source: fp64 (promotions of float data)."""


def bound_pipe(kernel: KernelDiagnosis) -> str | None:
    """The compute resource the kernel is at: the roofline's bounding precision, else its busiest pipe."""
    if kernel.roofline is not None and kernel.roofline.bound == "compute":
        return kernel.roofline.bounding_resource
    pipes = kernel.profile.metrics.pipe_utilization_pct
    if not pipes:
        return None
    name, value = max(pipes.items(), key=lambda kv: kv[1])
    return name if value > 0 else None


def needless_bound(finding: Finding, kernel: KernelDiagnosis | None, request: RewriteRequest) -> str | None:
    """Why ``finding`` ("at its bound") is a bound the data does not need, or None when it is a real one."""
    if kernel is None or finding.severity != "info" or finding.category != "compute-bound":
        return None
    pipe = bound_pipe(kernel)
    if pipe not in _PRECISION_PIPES or request.language != "cuda":
        return None
    try:
        tree = _cuda.require_clean(request.source)
    except _cuda.ParseError:
        return None
    target = _cuda.select_kernel(tree, request.kernel)
    if isinstance(target, str):
        return None
    sites = promotions(tree, target)
    if isinstance(sites, str):
        return None  # double data (or no promotion): the fp64 work is the kernel's own
    return (
        f"bound on the {pipe} pipe, but the kernel's data is not double: {sites.count()} promotion(s) "
        f"(literals like 0.5, double math calls, double locals or casts) put it there, and fp32 is the "
        f"bound worth reaching"
    )


def unblock(
    findings: list[Finding],
    kernel: KernelDiagnosis | None,
    request_for: Callable[[str, Finding | None], RewriteRequest],
) -> list[Finding]:
    """``findings`` with every needless "at its bound" made actionable (severity high, the reason in its title)."""
    out = []
    for f in findings:
        request = request_for(f.transforms[0] if f.transforms else "fast-math", f)
        why = needless_bound(f, kernel, request)
        out.append(
            f if why is None else f.model_copy(update={"severity": "high", "title": f"{f.title}: {why}"})
        )
    return out
