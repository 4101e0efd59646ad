"""smem-padding on parse trees of real kernels: where it applies, what it writes, that nvcc agrees."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.rewrite.recipes import smem_padding
from tests.rewrite.helpers import (
    DATA,
    EXAMPLES,
    assert_clean_cuda,
    assert_compiled,
    nvcc_compile,
    request,
    smem_bytes,
)

TRANSPOSE = EXAMPLES / "cuda" / "02_transpose_bank_conflicts" / "slow.cu"
SGEMM = DATA / "sgemm_smem_tiled.cu"


def test_pads_the_transpose_tile_with_its_macro() -> None:
    req = request(TRANSPOSE, "smem-padding")
    assert smem_padding.applies(req) is None
    [cand] = smem_padding.propose(req)
    assert "__shared__ float tile[TILE_DIM][TILE_DIM + 1];" in cand.source
    assert cand.source.count("TILE_DIM + 1") == 1
    # Only the declaration changed, byte for byte elsewhere.
    assert cand.source.replace("[TILE_DIM + 1]", "[TILE_DIM]") == req.source
    assert cand.parameters == {"arrays": "tile", "pad": 1} and cand.backend == "recipes"
    assert cand.diff.startswith("--- a/examples/cuda/02_transpose_bank_conflicts/slow.cu")
    assert_clean_cuda(cand.source)
    # Matches the hand-written fix of the example.
    fixed = (TRANSPOSE.parent / "fixed.cu").read_text()
    assert "tile[TILE_DIM][TILE_DIM + 1]" in fixed


def test_pads_both_sgemm_tiles() -> None:
    [cand] = smem_padding.propose(request(SGEMM, "smem-padding"))
    assert "__shared__ float As[TILE][TILE + 1];" in cand.source
    assert "__shared__ float Bs[TILE][TILE + 1];" in cand.source
    assert_clean_cuda(cand.source)


def test_literal_sizes_become_literals() -> None:
    src = "__global__ void k(float *o) {\n    __shared__ float t[8][64];\n    t[threadIdx.y][threadIdx.x] = 1.f;\n    o[0] = t[1][2];\n}\n"
    req = request(SGEMM, "smem-padding").model_copy(update={"source": src})
    [cand] = smem_padding.propose(req)
    assert "__shared__ float t[8][65];" in cand.source


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        (EXAMPLES / "cuda" / "03_reduction_divergent" / "slow.cu", "is 1-D"),
        (EXAMPLES / "cuda" / "05_low_occupancy_smem" / "slow.cu", "dynamic shared memory"),
        (EXAMPLES / "cuda" / "01_transpose_naive" / "slow.cu", "no __shared__ array"),
        (DATA / "smem_not_paddable.cu", "has double elements"),
        (DATA / "smem_not_paddable.cu", "24 is not a multiple of 32"),
        (DATA / "smem_not_paddable.cu", "'flat' (line 8): used with 1 of 2 subscripts"),
        (DATA / "smem_not_paddable.cu", "'sized' (line 9): used with 0 of 2 subscripts"),
    ],
)
def test_does_not_apply(path: Path, reason: str) -> None:
    req = request(path, "smem-padding")
    why = smem_padding.applies(req)
    assert why is not None and reason in why
    assert smem_padding.propose(req) == []


def test_refuses_triton_and_broken_sources() -> None:
    py = request(DATA / "triton_matmul_rowmajor.py", "smem-padding", language="triton")
    assert "CUDA sources only" in (smem_padding.applies(py) or "")
    broken = request(TRANSPOSE, "smem-padding").model_copy(update={"source": "__global__ void k( {"})
    assert "cannot parse the source cleanly" in (smem_padding.applies(broken) or "")


def test_respects_the_static_shared_memory_limit() -> None:
    src = "__global__ void k(float *o) {\n    __shared__ float t[96][128];\n    t[0][threadIdx.x] = 1.f;\n    o[0] = t[1][2];\n}\n"
    req = request(SGEMM, "smem-padding").model_copy(update={"source": src})
    assert "limit 49152" in (smem_padding.applies(req) or "")  # 48 KiB + 384 B after padding


def test_nvcc_compiles_the_padded_kernels_and_ptxas_sees_the_padding(tmp_path: Path) -> None:
    sources = {
        "transpose_before": TRANSPOSE.read_text(),
        "transpose_after": smem_padding.propose(request(TRANSPOSE, "smem-padding"))[0].source,
        "sgemm_after": smem_padding.propose(request(SGEMM, "smem-padding"))[0].source,
    }
    results = nvcc_compile(sources, tmp_path)
    assert_compiled(results)
    assert smem_bytes(results["transpose_before"], "transpose_smem_conflicts") == 32 * 32 * 4
    assert smem_bytes(results["transpose_after"], "transpose_smem_conflicts") == 32 * 33 * 4
    assert smem_bytes(results["sgemm_after"], "sgemm_smem_tiled") == 2 * 32 * 33 * 4
