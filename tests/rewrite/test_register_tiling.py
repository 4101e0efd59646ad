"""register-tiling: the naive matmul nest as 32x32 shared tiles with 4 rows of C per thread (32x8 block).

Same test set as smem-tiling (``test_smem_tiling.py``): the structure on the parse tree, nvcc builds, and a
block-synchronous CPU run against the original on ragged sizes for every kernel it applies to.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.rewrite.base import RewriteRequest
from perfagent.rewrite.recipes import RECIPES, register_tiling
from perfagent.rewrite.recipes_backend import RecipesRewriter
from perfagent.workloads.launch_spec import load_launch_spec
from tests.rewrite import cuda_blocks
from tests.rewrite.helpers import assert_clean_cuda, assert_compiled, nvcc_compile
from tests.rewrite.test_smem_tiling import (
    EMBEDDED,
    GUARDED,
    MM_LAUNCH,
    SPEC_CASES,
    _case,
    _embedded,
    _float_launch,
    _kernels_only,
    _spec_request,
)

APPLIES = sorted(SPEC_CASES)
"""Every case, the transposed-B one (hgemm-b-k-major) included: a transposed tile is loaded along its
contiguous index."""
TRANSPOSED = {"hgemm-b-k-major"}
"""Cases with a transposed operand: no 4x4 candidate (its tiles are loaded row-major only)."""


def _request(name: str) -> RewriteRequest:
    return _spec_request(name).model_copy(update={"transform": "register-tiling"})


def test_registered_with_the_catalog_transform() -> None:
    assert RECIPES["register-tiling"].transforms == ("register-tiling",)


@pytest.mark.parametrize("name", APPLIES)
def test_applies_with_a_32_by_8_block(name: str) -> None:
    request = _request(name)
    assert RecipesRewriter().applies(request) is None
    cands = RecipesRewriter().propose(request)
    cand = cands[0]
    assert cand.recipe == "register-tiling" and cand.parameters["rows_per_thread"] == 4
    assert cand.launch is not None and cand.launch.block == [32, 8]
    assert_clean_cuda(cand.source)
    assert cand.source.count("__syncthreads()") == 2 and "pa_acc[4]" in cand.source
    # the 4x4 variant is the second candidate wherever both operands are row-major
    assert len(cands) == (1 if name in TRANSPOSED else 2)
    if len(cands) == 2:
        grid = cands[1]
        assert grid.launch is not None and grid.launch.block == [16, 16] and "pa_acc[4][4]" in grid.source
        assert_clean_cuda(grid.source)


def test_refused_forms() -> None:
    tiled = register_tiling.propose(_request("unseen-08-row-from-x"))[0].source
    again = _request("unseen-08-row-from-x").model_copy(update={"source": tiled})
    assert "register-tiling rewrites the naive nest" in (register_tiling.applies(again) or "")
    request = RewriteRequest(source=GUARDED, language="cuda", transform="register-tiling", launch=MM_LAUNCH)
    assert register_tiling.applies(request) is None


def test_embedded_candidates_write_the_wrapper_launch() -> None:
    for name in sorted(EMBEDDED):
        path, _ = EMBEDDED[name]
        request = RewriteRequest(
            source=path.read_text(), path=str(path), language="python", transform="register-tiling"
        )
        cand = RecipesRewriter().propose(request)[0]
        compile(cand.source, str(path), "exec")
        assert "dim3(32, 8)" in cand.source, name


def test_every_candidate_compiles_with_nvcc(tmp_path: Path) -> None:
    sources = {
        f"{name}-{n}": cand.source
        for name in APPLIES
        for n, cand in enumerate(register_tiling.propose(_request(name)))
    }
    for name in EMBEDDED:
        inner = _embedded(name).inner.model_copy(update={"transform": "register-tiling"})
        for n, cand in enumerate(register_tiling.propose(inner)):
            sources[f"{name}-{n}"] = _kernels_only(cand.source)
    sources = {k: "#include <cuda_fp16.h>\n" + v for k, v in sources.items()}
    assert_compiled(nvcc_compile(sources, tmp_path))


def _emulate(tmp: Path, original: str, kernel: str, request: RewriteRequest, small: dict[str, int]) -> None:
    """Every candidate (the 4-row strip and, for row-major operands, the 4x4 tile) against the original."""
    assert request.launch is not None
    for n, cand in enumerate(register_tiling.propose(request)):
        case = _case(request.launch, small, cand.launch)
        folder = tmp / f"c{n}"
        folder.mkdir()
        cuda_blocks.assert_same(
            folder, original, _kernels_only(cand.source), kernel, [case], rtol=1e-6, atol=1e-6
        )


@pytest.mark.parametrize("name", APPLIES)
def test_register_tiled_kernel_equals_the_original(name: str, tmp_path: Path) -> None:
    path, spec_path, small = SPEC_CASES[name]
    kernel = load_launch_spec(spec_path).kernel
    _emulate(tmp_path, _kernels_only(path.read_text()), kernel, _request(name), small)


def test_guarded_square_tile_edges(tmp_path: Path) -> None:
    """Sizes around one block: fewer rows than the 8 a thread's strip spans, and exactly 32."""
    request = RewriteRequest(
        source=GUARDED, language="cuda", transform="register-tiling", launch=_float_launch()
    )
    smalls = ({"M": 5, "N": 3, "K": 1}, {"M": 32, "N": 32, "K": 32}, {"M": 41, "N": 9, "K": 33})
    smalls += ({"M": 64, "N": 64, "K": 64}, {"M": 70, "N": 130, "K": 45})  # around the 4x4 variant's 64 x 64
    for n, cand in enumerate(register_tiling.propose(request)):
        cases = [_case(_float_launch(), small, cand.launch) for small in smalls]
        folder = tmp_path / f"c{n}"
        folder.mkdir()
        cuda_blocks.assert_same(folder, GUARDED, cand.source, "g", cases, rtol=1e-6, atol=1e-6)


TRANSPOSES = {
    "A^T": ("A[row * K + k]", "A[k * M + row]"),
    "B^T": ("B[k * N + col]", "B[col * K + k]"),
}


@pytest.mark.parametrize("which", ["A^T", "B^T", "both"])
def test_transposed_operands_are_loaded_along_their_contiguous_index(which: str, tmp_path: Path) -> None:
    """A stored K x M (A[k * M + row]) and/or B stored N x K (B[col * K + k]), as KernelBench's transposed
    matmuls (level 1, 16-18) are written naively: threadIdx.x walks the contiguous index of each transposed
    tile, which is padded; the result equals the original on ragged sizes."""
    source = GUARDED
    for key, (old, new) in TRANSPOSES.items():
        if which in (key, "both"):
            source = source.replace(old, new)
    assert source != GUARDED
    request = RewriteRequest(
        source=source, language="cuda", transform="register-tiling", launch=_float_launch()
    )
    assert register_tiling.applies(request) is None
    cand, *others = register_tiling.propose(request)
    assert others == []  # no 4x4 candidate with a transposed operand
    padded = cand.source.count("[32][33]")
    assert padded == (2 if which == "both" else 1)
    if which in ("A^T", "both"):
        assert "[threadIdx.x][threadIdx.y + pa_i * 8] = ((row - threadIdx.y + threadIdx.x) < M" in cand.source
    cases = [
        _case(_float_launch(), small, cand.launch)
        for small in ({"M": 5, "N": 3, "K": 1}, {"M": 41, "N": 9, "K": 33}, {"M": 33, "N": 70, "K": 64})
    ]
    cuda_blocks.assert_same(tmp_path, source, cand.source, "g", cases, rtol=1e-6, atol=1e-6)
