"""A launch spec names the template instantiation it runs (``scale<float, 2>``); the recipes find the
template's definition under that name (unseen2/14 got no transform tried at all: every recipe said
'no __global__ kernel named scale<...>'). Our own templated grid-stride kernel, every recipe that fits it."""

from __future__ import annotations

import pytest

from perfagent.rewrite import get_rewriter
from perfagent.rewrite.base import LaunchArg, LaunchContext, RewriteRequest

TEMPLATED = """
template <typename T, int FACTOR>
__global__ void scale_copy(int n, const T *src, T *dst)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        dst[i] = src[i] * (T)FACTOR;
}

template __global__ void scale_copy<float, 2>(int, const float *, float *);
"""
LAUNCH = LaunchContext(
    grid=["min(ceil_div(n, 256), 32 * sm_count)"],
    block=[256],
    params={"n": 1 << 20},
    args=[LaunchArg(name="n", value="n"), LaunchArg(name="src"), LaunchArg(name="dst")],
)


@pytest.mark.parametrize("transform", ["restrict-pointers", "launch-config", "increase-parallelism"])
def test_a_template_kernel_named_by_its_instantiation_is_found(transform: str) -> None:
    request = RewriteRequest(
        source=TEMPLATED, language="cuda", transform=transform, kernel="scale_copy<float, 2>", launch=LAUNCH
    )
    recipes = get_rewriter("recipes")
    assert recipes.applies(request) is None, recipes.applies(request)
    assert recipes.propose(request)


def test_the_template_is_analysed_and_refused_for_its_own_reasons() -> None:
    # found: the refusal is about the body (the element type is a template parameter), not the name
    named = RewriteRequest(
        source=TEMPLATED, language="cuda", transform="vectorize-access", kernel="scale_copy<float, 2>"
    )
    why = get_rewriter("recipes").applies(named)
    assert why is not None and "points to T, which has no 16-byte vector form" in why, why
    other = named.model_copy(update={"kernel": "copy<float>"})
    why = get_rewriter("recipes").applies(other)
    assert why is not None and "no __global__ function named copy<float>" in why, why
