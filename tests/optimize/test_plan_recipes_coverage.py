"""The planner plans the transforms that gained recipes (issue 23) from the findings that name them, and no
longer says "no deterministic recipe" for them; only transforms whose catalog entry says why stay without."""

from __future__ import annotations

import perfagent
from knowledge.transforms import catalog
from perfagent.optimize.plan import make_plan, runnable
from perfagent.rewrite import get_rewriter
from perfagent.rewrite.base import LaunchArg, LaunchContext, RewriteRequest
from profilers.model import Finding, KernelDiagnosis
from tests.optimize.helpers import REPORTS

GELU = """
__global__ void gelu(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    y[i] = 0.5f * v * (1.0f + tanhf(0.79788456f * (v + 0.044715f * v * v * v))) * expf(-v * v) / (1.0f + v * v);
}
"""


def _request_for(source: str):  # type: ignore[no-untyped-def]
    launch = LaunchContext(grid=["ceil_div(n, 32)"], block=[32], params={"n": 1 << 24})

    def build(transform: str, finding: Finding | None) -> RewriteRequest:
        return RewriteRequest(
            source=source, language="cuda", transform=transform, finding=finding, launch=launch
        )

    return build


def _diagnosis(category: str, transforms: list[str]) -> KernelDiagnosis:
    """A recorded kernel's diagnosis with one finding of ``category`` naming ``transforms`` (as the
    classifier's launch rule names launch-config and thread-coarsening for many tiny blocks)."""
    record = perfagent.diagnose(REPORTS / "08_vector_copy_near_peak.ncu-rep")
    kernel = record.kernels[0]
    finding = kernel.findings[0].model_copy(
        update={"category": category, "severity": "warning", "transforms": transforms, "title": category}
    )
    return kernel.model_copy(update={"findings": [finding]})


def test_findings_that_name_coarsening_and_fast_math_plan_them_as_runnable() -> None:
    recipes = get_rewriter("recipes")
    for category, transforms in (
        ("launch-config", ["launch-config", "thread-coarsening"]),
        ("compute-bound", ["use-tensor-cores", "fast-math"]),
    ):
        steps = make_plan(
            _diagnosis(category, transforms),
            rewriter=recipes,
            request_for=_request_for(GELU),
            measured=True,
            recipe_check=recipes,
        )
        by_id = {s.transform.id: s for s in steps}
        named = transforms[-1]
        assert by_id[named].origin == "diagnosis"
        assert recipes.applies(_request_for(GELU)(named, None)) is None  # the recipe itself applies
        if named == "thread-coarsening":
            assert named in {s.transform.id for s in runnable(steps)}
        else:  # the recorded copy kernel's XU pipe is idle: the measured indicators veto fast math
            assert "measured indicators do not hold" in (by_id[named].skipped or "")
        no_recipe = {s.transform.id for s in steps if "no deterministic recipe" in (s.skipped or "")}
        assert no_recipe <= {"use-tensor-cores", "write-kernel"}


def test_every_transform_has_a_recipe_or_says_why_not() -> None:
    without = {tid for tid, entry in catalog().items() if not entry.recipes}
    assert without == {"use-tensor-cores", "write-kernel"}
    for tid in without:
        reason = catalog()[tid].no_recipe
        assert reason and "llm backend" in reason


def test_unmeasured_plans_offer_the_new_recipes_where_their_precondition_holds() -> None:
    recipes = get_rewriter("recipes")
    steps = make_plan(
        None, rewriter=recipes, request_for=_request_for(GELU), measured=False, recipe_check=recipes
    )
    ids = {s.transform.id for s in runnable(steps)}
    assert {"thread-coarsening", "fast-math"} <= ids
    refused = {s.transform.id: s.skipped for s in steps if s.skipped}
    assert "no __shared__ array" in (refused.get("smem-swizzle") or "")
    assert "no two consecutive kernel launches" in (refused.get("kernel-fusion") or "")


LIFE_FLAT = """
__global__ void life(const unsigned char *in, unsigned char *out, unsigned int w, unsigned int h)
{
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < w * h; i += blockDim.x * gridDim.x) {
        unsigned int c = i % w, r = i / w;
        unsigned int up = (r + h - 1) % h, dn = (r + 1) % h, lf = (c + w - 1) % w, rt = (c + 1) % w;
        unsigned int n = in[up * w + lf] + in[up * w + c] + in[up * w + rt] + in[r * w + lf] + in[r * w + rt]
                       + in[dn * w + lf] + in[dn * w + c] + in[dn * w + rt];
        out[i] = n == 3 || (n == 2 && in[r * w + c]);
    }
}
"""


def test_a_compute_bound_stencil_plans_coarsening_even_when_its_launch_indicators_do_not_hold() -> None:
    # a torus stencil bound on integer math (unseen2/11's kind): thread-coarsening's own indicators (many
    # short waves, idle schedulers) are about launches, so on a compute-bound finding its instruction-count
    # effect decides and stencil-rows (several cells per thread) is tried before the fast-math nudge
    recipes = get_rewriter("recipes")
    kernel = _diagnosis("compute-bound", ["thread-coarsening", "fast-math"])
    profile = kernel.profile  # as unseen2/11 measured: few waves of blocks, busy schedulers
    busy = profile.metrics.model_copy(update={"issue_slot_utilization_pct": 71.0})
    few = profile.launch.model_copy(update={"waves_per_sm": 2.0})
    kernel = kernel.model_copy(
        update={"profile": profile.model_copy(update={"metrics": busy, "launch": few})}
    )
    entry = catalog()["thread-coarsening"]
    assert all(c.evaluate(kernel.profile) is False for c in entry.applies_when)  # measured, and none holds
    args = [
        LaunchArg(name="in"),
        LaunchArg(name="out"),
        LaunchArg(name="w", value="W"),
        LaunchArg(name="h", value="H"),
    ]
    launch = LaunchContext(grid=["16 * sm_count"], block=[256], params={"W": 512, "H": 512}, args=args)

    def build(transform: str, finding: Finding | None) -> RewriteRequest:
        return RewriteRequest(
            source=LIFE_FLAT, language="cuda", transform=transform, finding=finding, launch=launch
        )

    steps = make_plan(kernel, rewriter=recipes, request_for=build, measured=True, recipe_check=recipes)
    order = [s.transform.id for s in runnable(steps)]
    assert order[0] == "thread-coarsening", order  # the structural fix first
    assert [c.recipe for c in recipes.propose(build("thread-coarsening", None))][:1] == ["stencil-rows"]
