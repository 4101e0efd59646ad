"""relax-launch-bounds (reduce-register-pressure) and divergent-reduction (avoid-divergence), and the
coarsening recipe's launch sweep (``Recipe.batch``): accepted and refused forms on parse trees, nvcc."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.rewrite.base import LaunchContext, RewriteRequest
from perfagent.rewrite.recipes import RECIPES, divergent_reduction, relax_launch_bounds, thread_coarsening
from perfagent.rewrite.recipes._tail import RETUNED
from tests.rewrite.helpers import assert_clean_cuda, assert_compiled, nvcc_compile

CAPPED = """
#define THREADS 256
#define MIN_BLOCKS 8
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS) stencil5(const float *in, float *out, int n)
{
    float r[16];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < 16; ++k) r[k] = in[(i + k) % n];
    float s = 0.0f;
    for (int k = 0; k < 16; ++k) s += r[k] * r[(k * 7) % 16];
    if (i < n) out[i] = s;
}
"""
DIVERGENT_TREE = """
__global__ void reduce0(const int *g_idata, int *g_odata, unsigned n)
{
    __shared__ int sdata[256];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? g_idata[i] : 0;
    __syncthreads();
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}
"""


def _request(source: str, transform: str, launch: LaunchContext | None = None) -> RewriteRequest:
    return RewriteRequest(
        source=source, language="cuda", transform=transform, launch=launch, max_candidates=16
    )


def test_a_tight_register_cap_is_halved_then_dropped(tmp_path: Path) -> None:
    cands = relax_launch_bounds.propose(_request(CAPPED, "reduce-register-pressure"))
    assert [c.parameters["min_blocks"] for c in cands] == [4, None]
    assert "__launch_bounds__(THREADS, 4)" in cands[0].source
    assert "__launch_bounds__(THREADS) stencil5" in cands[1].source
    for cand in cands:
        assert_clean_cuda(cand.source)
    assert_compiled(nvcc_compile({f"c{k}": c.source for k, c in enumerate(cands)}, tmp_path))


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        (
            CAPPED.replace("__launch_bounds__(THREADS, MIN_BLOCKS) ", ""),
            "no __launch_bounds__ caps the registers",
        ),
        (CAPPED.replace("(THREADS, MIN_BLOCKS)", "(THREADS)"), "sets no minimum blocks per SM"),
        (CAPPED.replace("#define MIN_BLOCKS 8", "#define MIN_BLOCKS 1"), "nothing to relax"),
    ],
)
def test_kernels_without_a_cap_to_relax_are_refused(source: str, reason: str) -> None:
    why = relax_launch_bounds.applies(_request(source, "reduce-register-pressure"))
    assert why is not None and reason in why, why


def test_a_divergent_tree_reduction_is_filed_under_divergent_reduction() -> None:
    launch = LaunchContext(grid=["ceil_div(n, 256)"], block=[256])
    req = _request(DIVERGENT_TREE, "avoid-divergence", launch)
    assert divergent_reduction.RECIPE.applies(req) is None
    cands = divergent_reduction.RECIPE.propose(req)
    assert cands and all(c.transform == "avoid-divergence" for c in cands)
    assert all("% (2 * s)" not in c.source for c in cands)
    data_branch = "__global__ void k(float *y, int n) { int i = threadIdx.x; if (y[i] < 0) y[i] = -y[i]; }"
    assert divergent_reduction.RECIPE.applies(_request(data_branch, "avoid-divergence", launch)) is not None


def test_coarsening_a_block_free_kernel_sweeps_blocks_with_the_grid_rederived() -> None:
    source = (
        "__global__ void relu(const float *x, float *y, int n)\n{\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;\n}\n"
    )
    req = _request(source, "thread-coarsening", LaunchContext(grid=["ceil_div(n, 256)"], block=[256]))
    primaries = thread_coarsening.propose(req)
    batch = RECIPES["thread-coarsening"].candidates(req)
    swept = [c for c in batch if RETUNED in c.parameters]
    assert len(batch) > len(primaries) and swept
    chunk4 = [c for c in swept if c.parameters.get("chunk") == 4 and c.launch and c.launch.block]
    assert chunk4 and all(
        c.launch.grid == [f"ceil_div(ceil_div((ceil_div(n, 256)) * 256, 4), {c.launch.block[0]})"]
        for c in chunk4
    )  # type: ignore[union-attr]
