"""launch-config (CUDA block-size sweep) on parse trees of real kernels and programs."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.rewrite.recipes import launch_config
from tests.rewrite.helpers import DATA, EXAMPLES, assert_clean_cuda, assert_compiled, nvcc_compile, request

TRANSPOSE = EXAMPLES / "cuda" / "02_transpose_bank_conflicts" / "slow.cu"
REDUCE = EXAMPLES / "cuda" / "03_reduction_divergent" / "slow.cu"
PROGRAM = DATA / "saxpy_program.cu"
TEMPLATE = DATA / "reduce_template.cu"


def test_guarded_macro_block_size_is_swept_and_returned_as_a_define() -> None:
    cands = launch_config.propose(request(REDUCE, "launch-config", max_candidates=8))
    values = [c.parameters["REDUCE_BLOCK"] for c in cands]
    assert values == [512, 128, 1024, 64]  # closest first, 256 itself excluded
    for cand in cands:
        value = cand.parameters["REDUCE_BLOCK"]
        assert f"#define REDUCE_BLOCK {value}\n" in cand.source
        assert cand.defines == {"REDUCE_BLOCK": value}  # the spec's -D must follow the edit
        assert any("#ifndef-guarded" in n for n in cand.notes)
        assert_clean_cuda(cand.source)


def test_block_dimension_below_a_warp_uses_dimension_values() -> None:
    cands = launch_config.propose(request(TRANSPOSE, "launch-config", max_candidates=8))
    assert {c.parameters["BLOCK_ROWS"] for c in cands} == {1, 2, 4, 16, 32}
    assert all("TILE_DIM" not in c.parameters for c in cands)  # the tile is not a block size


def test_literal_launch_changes_grid_literals_with_it() -> None:
    cands = launch_config.propose(request(PROGRAM, "launch-config", max_candidates=12))
    saxpy = next(c for c in cands if c.parameters.get("block@35") == 512)
    assert "saxpy<<<(n + 511) / 512, 512>>>(n, 2.0f, x, y);" in saxpy.source
    assert "axpby<<<(n + 255) / 256, 256>>>" in saxpy.source  # the other launch is its own knob


def test_constexpr_in_a_dim3_respects_a_literal_launch_bound() -> None:
    cands = launch_config.propose(request(PROGRAM, "launch-config", max_candidates=12))
    threads = sorted(int(c.parameters["THREADS"] or 0) for c in cands if "THREADS" in c.parameters)
    assert threads == [64, 256, 512]  # 1024 > __launch_bounds__(512) of scale, launched with THREADS
    assert all(not c.defines for c in cands)  # constexpr / literals need no -D


def test_template_parameter_moves_with_its_explicit_launch() -> None:
    cands = launch_config.propose(request(TEMPLATE, "launch-config", max_candidates=8))
    assert [c.parameters["BLOCK_SIZE"] for c in cands] == [512, 128, 1024, 64]
    first = cands[0].source
    assert "template <int BLOCK_SIZE = 512>" in first
    assert "block_sum<512><<<(n + 511) / 512, 512>>>(in, out, n);" in first


def test_kernel_filter_and_max_candidates() -> None:
    req = request(PROGRAM, "launch-config", kernel="saxpy", max_candidates=2)
    cands = launch_config.propose(req)
    assert len(cands) == 2 and all("block@35" in c.parameters for c in cands)
    assert "no __global__ function named nope" in (
        launch_config.applies(request(PROGRAM, "launch-config", kernel="nope")) or ""
    )


@pytest.mark.parametrize(
    "path",
    [
        EXAMPLES / "cuda" / "04_small_grid" / "slow.cu",
        DATA / "sgemm_smem_tiled.cu",
        EXAMPLES / "cuda" / "06_register_spills" / "slow.cu",
    ],
)
def test_does_not_apply_without_a_compile_time_block_size(path: Path) -> None:
    why = launch_config.applies(request(path, "launch-config"))
    assert why is not None and "no compile-time block size found" in why
    assert launch_config.propose(request(path, "launch-config")) == []


def test_refuses_triton_sources() -> None:
    why = launch_config.applies(
        request(DATA / "triton_matmul_rowmajor.py", "launch-config", language="triton")
    )
    assert why is not None and "triton-config" in why


def test_nvcc_compiles_every_variant(tmp_path: Path) -> None:
    sources: dict[str, str] = {}
    defines: dict[str, dict[str, int]] = {}
    for path in (REDUCE, TRANSPOSE, PROGRAM, TEMPLATE):
        for i, cand in enumerate(launch_config.propose(request(path, "launch-config", max_candidates=3))):
            name = f"{path.parent.name}_{path.stem}_{i}"
            sources[name] = cand.source
            defines[name] = cand.defines
    assert len(sources) == 12
    assert_compiled(nvcc_compile(sources, tmp_path, defines))
