"""launch-geometry (launch-spec grid / block sweep) on parse trees of the real examples and their specs."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from perfagent.optimize.measure import candidate_spec
from perfagent.rewrite.base import RewriteRequest, launch_context
from perfagent.rewrite.recipes import launch_geometry
from perfagent.rewrite.recipes_backend import RecipesRewriter
from perfagent.workloads.detect import resolve
from perfagent.workloads.launch_spec import load_launch_spec
from tests.rewrite.helpers import EXAMPLES

CUDA = EXAMPLES / "cuda"


def _request(example: str, transform: str = "launch-config", **fields: object) -> RewriteRequest:
    folder = CUDA / example
    spec_path = next(folder.glob("*.launch.toml"))
    spec = load_launch_spec(spec_path)
    return RewriteRequest(
        source=(folder / "slow.cu").read_text(),
        path=str(folder / "slow.cu"),
        language="cuda",
        transform=transform,
        kernel=spec.kernel,
        launch=launch_context(spec.model_dump(mode="json")),
        **fields,  # type: ignore[arg-type]
    )


def test_small_grid_saxpy_gets_one_element_per_thread_then_waves() -> None:
    cands = launch_geometry.propose(_request("04_small_grid", "increase-parallelism", max_candidates=8))
    grids = [c.launch.grid[0] for c in cands if c.launch and c.launch.grid]
    assert grids == [
        "ceil_div(n, 256)",  # loop bound n is the 4th parameter -> the spec's 4th arg value
        "8 * sm_count * (max_threads_per_sm // 256)",
        "4 * sm_count * (max_threads_per_sm // 256)",
        "sm_count * (max_threads_per_sm // 256)",
    ]
    assert cands[0].parameters["blocks"] == (1 << 25) // 256
    assert all(c.source == _request("04_small_grid").source for c in cands)  # source untouched
    assert len({c.id for c in cands}) == len(cands)  # same source, other launch: other ids


def test_float4_copy_covers_n_over_four_and_skips_its_own_grid() -> None:
    cands = launch_geometry.propose(_request("08_vector_copy_near_peak", max_candidates=8))
    grids = [c.launch.grid[0] for c in cands if c.launch and c.launch.grid]
    # `i < n4` with n4 = n / 4: one float4 per thread is n / 4 threads = ceil_div(n, 1024) blocks of 256
    assert grids[0] == "ceil_div(n, 1024)"
    assert "sm_count * (max_threads_per_sm // 256)" not in grids  # the spec's current grid (1 wave)


def test_one_element_per_thread_kernel_sweeps_the_block_with_its_grid() -> None:
    cands = launch_geometry.propose(_request("11_strided_access", max_candidates=8))
    assert [(c.launch.block, c.launch.grid) for c in cands if c.launch] == [
        ([128], ["ceil_div(n, 128)"]),
        ([512], ["ceil_div(n, 512)"]),
        ([1024], ["ceil_div(n, 1024)"]),
    ]


@pytest.mark.parametrize(
    ("example", "why"),
    [
        ("03_reduction_divergent", "shared memory"),
        ("06_register_spills", "__launch_bounds__"),
        ("01_transpose_naive", "more than one dimension"),
        ("10_sgemm_naive", "more than one dimension"),
    ],
)
def test_kernels_whose_result_may_depend_on_the_geometry_are_left_alone(example: str, why: str) -> None:
    reason = launch_geometry.applies(_request(example))
    assert reason is not None and why in reason
    assert launch_geometry.propose(_request(example)) == []


def test_block_id_use_is_refused_with_its_line() -> None:
    source = """
extern "C" __global__ void partial_sums(const float *x, float *out, int n)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    float acc = 0.0f;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (size_t)n; i += stride)
        acc += x[i];
    atomicAdd(&out[blockIdx.x], acc);
}
"""
    req = _request("04_small_grid").model_copy(update={"source": source, "kernel": "partial_sums"})
    reason = launch_geometry.applies(req)
    assert reason is not None and "blockIdx.x on line 8 is used as a block id" in reason


def test_without_a_launch_spec_it_does_not_apply() -> None:
    req = _request("04_small_grid").model_copy(update={"launch": None})
    assert "no launch spec" in (launch_geometry.applies(req) or "")


def test_recipes_backend_returns_launch_only_candidates() -> None:
    cands = RecipesRewriter().propose(_request("04_small_grid", "increase-parallelism", max_candidates=2))
    assert len(cands) == 2 and all(c.recipe == "launch-geometry" and c.launch is not None for c in cands)


def test_candidate_spec_copy_carries_the_grid_for_the_candidate_only(tmp_path: Path) -> None:
    wl = resolve(CUDA / "04_small_grid" / "slow.cu")
    path = candidate_spec(wl, tmp_path, {}, {"grid": ["ceil_div(n, 256)"]})
    data = tomllib.loads(path.read_text())
    assert data["grid"] == [32]  # the oracle keeps its own geometry
    assert data["variants"]["source.cu"]["grid"] == ["ceil_div(n, 256)"]
    load_launch_spec(path)  # a valid spec


def test_oversized_dynamic_shared_memory_is_right_sized() -> None:
    cands = launch_geometry.propose(_request("05_low_occupancy_smem", max_candidates=8))
    assert len(cands) == 1 and cands[0].launch is not None
    # scratch[threadIdx.x] only: 128 threads x 4 bytes instead of the spec's 200 KiB
    assert cands[0].launch.shared_mem == "512" and cands[0].parameters["bytes"] == 512


def test_shared_memory_indexed_otherwise_is_not_resized() -> None:
    source = (
        (CUDA / "05_low_occupancy_smem" / "slow.cu")
        .read_text()
        .replace(
            "out[i] = fmaf(a, scratch[threadIdx.x], b);", "out[i] = fmaf(a, scratch[threadIdx.x ^ 1], b);"
        )
    )
    req = _request("05_low_occupancy_smem").model_copy(update={"source": source})
    reason = launch_geometry.applies(req)
    assert reason is not None and "scratch on line" in reason and "threadIdx.x alone" in reason
