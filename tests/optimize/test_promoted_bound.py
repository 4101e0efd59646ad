"""A float kernel "at its bound" on the fp64 pipe is a promotion, not a bound: the planner plans its fixes.

The profile is the recorded FP32 FMA-chain kernel (examples/reports, H100) with its work moved onto the
fp64 pipe (82 % busy, fp64 FLOPs counted) and re-classified by the real rules, so the finding is the
classifier's own "At 82% of fp64 pipe compute peak: little headroom" (the words of the H100 run) (severity info). The sources are ours.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable

import perfagent
from perfagent.classifier.bound_rules import at_roofline_bound
from perfagent.classifier.context import RuleContext
from perfagent.optimize.fits import contradiction
from perfagent.optimize.plan import make_plan, runnable
from perfagent.optimize.promoted_bound import needless_bound
from perfagent.rewrite import get_rewriter
from perfagent.rewrite.base import RewriteRequest
from perfagent.roofline import roofline
from profilers.model import Finding, KernelDiagnosis
from tests.optimize.helpers import REPORTS

SOFTPLUS_HALF_PROMOTED = textwrap.dedent(
    """
    #include <cuda_fp16.h>
    __global__ void softplus_half(const __half *x, __half *y, int n)
    {
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
            float v = __half2float(x[i]);
            y[i] = __float2half(v > 20.0 ? v : log(1.0 + exp(v)));
        }
    }
    """
)
SOFTPLUS_DOUBLE = textwrap.dedent(
    """
    __global__ void softplus_double(const double *x, double *y, int n)
    {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = x[i] > 20.0 ? x[i] : log(1.0 + exp(x[i]));
    }
    """
)


def _fp64_bound() -> KernelDiagnosis:
    real = perfagent.diagnose(REPORTS / "07_compute_bound_fma.ncu-rep").kernels[0]
    m = real.profile.metrics
    fp32 = m.flops["fp32"]
    metrics = m.model_copy(
        update={
            "pipe_utilization_pct": {**m.pipe_utilization_pct, "fma": 5.0, "fp64": 82.0},
            "sm_throughput_pct": 82.0,
            "flops": {"fp32": 0.0, "fp64": fp32 / 40.0, "fp16": 0.0},
        }
    )
    profile = real.profile.model_copy(update={"metrics": metrics})
    ctx = RuleContext(kernel=profile, roofline=roofline(profile), static=False)
    found = at_roofline_bound(ctx)
    assert isinstance(found, Finding) and found.severity == "info", found
    return real.model_copy(update={"profile": profile, "findings": [found], "roofline": ctx.roofline})


def _requests(source: str) -> Callable[[str, Finding | None], RewriteRequest]:
    def build(transform: str, finding: Finding | None) -> RewriteRequest:
        return RewriteRequest(source=source, language="cuda", transform=transform, finding=finding)

    return build


def _plan(source: str) -> list:  # type: ignore[type-arg]
    recipes = get_rewriter("recipes")
    return make_plan(
        _fp64_bound(), rewriter=recipes, request_for=_requests(source), measured=True, recipe_check=recipes
    )


def test_the_finding_is_the_classifiers_at_bound_on_fp64() -> None:
    kernel = _fp64_bound()
    [finding] = kernel.findings
    assert "fp64 pipe" in finding.title and "little headroom" in finding.title
    assert set(finding.transforms) >= {"fast-math"}


def test_a_half_kernel_bound_on_fp64_gets_fast_math_planned() -> None:
    steps = _plan(SOFTPLUS_HALF_PROMOTED)
    fast = next(s for s in steps if s.transform.id == "fast-math")
    assert fast.skipped is None, fast.skipped
    assert fast in runnable(steps) and fast.origin == "diagnosis"
    assert fast.finding is not None and fast.finding.severity == "high"
    assert "not double" in fast.finding.title and "promotion" in fast.finding.title
    assert all("at its bound" not in (s.skipped or "") for s in steps)


def test_a_double_kernel_at_the_fp64_bound_stays_at_its_bound() -> None:
    steps = _plan(SOFTPLUS_DOUBLE)
    assert steps and not runnable(steps)
    assert all("at its bound" in (s.skipped or "") for s in steps)
    kernel = _fp64_bound()
    why = needless_bound(kernel.findings[0], kernel, _requests(SOFTPLUS_DOUBLE)("fast-math", None))
    assert why is None


def test_fast_math_fits_a_busy_fp64_pipe_with_an_idle_xu() -> None:
    profile = _fp64_bound().profile
    assert (profile.metrics.pipe_utilization_pct.get("xu") or 0.0) < 10.0
    assert contradiction("fast-math", SOFTPLUS_HALF_PROMOTED, "cuda", profile) is None
    # a kernel promoted by a literal alone (no transcendental) fits too, on the fp64 evidence
    literal_only = "__global__ void k(float *y) { y[threadIdx.x] = 0.5 * y[threadIdx.x]; }"
    assert contradiction("fast-math", literal_only, "cuda", profile) is None
