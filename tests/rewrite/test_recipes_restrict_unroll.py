"""restrict-pointers and loop-unroll on parse trees of real kernels."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.rewrite.recipes import loop_unroll, restrict_pointers
from tests.rewrite.helpers import DATA, EXAMPLES, assert_clean_cuda, assert_compiled, nvcc_compile, request

CUDA = EXAMPLES / "cuda"
TRANSPOSE = CUDA / "02_transpose_bank_conflicts" / "slow.cu"
PROGRAM = DATA / "saxpy_program.cu"
SGEMM = DATA / "sgemm_smem_tiled.cu"
TEMPLATE = DATA / "reduce_template.cu"


# ------------------------------------------------------------------ restrict-pointers


def test_restrict_on_an_extern_c_kernel_adds_const_to_read_only_pointers() -> None:
    src = 'extern "C" __global__ void k(float *out, float *in, int n)\n{\n    int i = threadIdx.x;\n    if (i < n)\n        out[i] = 2.0f * in[i];\n}\n'
    req = request(TRANSPOSE, "restrict-pointers").model_copy(update={"source": src})
    [cand] = restrict_pointers.propose(req)
    assert "k(float *__restrict__ out, const float *__restrict__ in, int n)" in cand.source
    assert cand.parameters["const"] == 1 and cand.parameters["restrict"] == 2
    assert any("aliasing unchecked" in n for n in cand.notes)


def test_restrict_on_the_transpose_example() -> None:
    [cand] = restrict_pointers.propose(request(TRANSPOSE, "restrict-pointers"))
    assert (
        "(float *__restrict__ odata, const float *__restrict__ idata, int width, int height)" in cand.source
    )
    assert_clean_cuda(cand.source)


def test_restrict_keeps_cxx_signatures_and_skips_the_aliased_launch() -> None:
    [cand] = restrict_pointers.propose(request(PROGRAM, "restrict-pointers"))
    assert "saxpy(int n, float a, const float *__restrict__ x, float *__restrict__ y)" in cand.source
    assert "scale(float *__restrict__ out, const float *__restrict__ in, float s, int n)" in cand.source
    # axpby(x, x, ...) passes x as the written 'out' and as 'x': left alone, and said so.
    assert "axpby(float *out, float *x, float *y" in cand.source
    assert any("passes 'x' to both 'out' and 'x'" in n for n in cand.notes)
    assert cand.parameters["aliasing_checked_launches"] == 2
    assert cand.parameters["const"] == 0  # C++ kernels: adding const would change the mangled name


def test_restrict_treats_atomics_and_copies_as_writes() -> None:
    hist = request(CUDA / "09_histogram_atomics" / "slow.cu", "restrict-pointers")
    [cand] = restrict_pointers.propose(hist)
    assert "const int *__restrict__ data, int *__restrict__ bins" in cand.source
    copy = request(CUDA / "08_vector_copy_near_peak" / "slow.cu", "restrict-pointers")
    assert "already __restrict__" in (restrict_pointers.applies(copy) or "")


def test_restrict_refuses_when_the_only_kernel_is_aliased() -> None:
    req = request(PROGRAM, "restrict-pointers", kernel="axpby")
    why = restrict_pointers.applies(req)
    assert why is not None and "undefined behaviour" in why and "line 39" in why


# ------------------------------------------------------------------ loop-unroll


def test_unroll_constant_trip_loops_of_the_transpose() -> None:
    [full] = loop_unroll.propose(request(TRANSPOSE, "loop-unroll"))
    assert full.source.count("    #pragma unroll\n    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)") == 2
    assert full.parameters == {"unroll": "full", "loops": 2}
    # Both loops run 32 / 8 = 4 times: no '#pragma unroll 4' candidate (it is made only for loops of > 4).


def test_unroll_counts_shift_loops_and_macros() -> None:
    full, four = loop_unroll.propose(request(TEMPLATE, "loop-unroll"))
    assert "(block_sum, 5 iterations)" in full.description  # offset = 16; offset > 0; offset >>= 1
    assert "(block_sum, 2 iterations)" in full.description  # s = 256/2; s > 32; s >>= 1
    assert four.parameters == {"unroll": "4", "loops": 1}
    assert "        #pragma unroll 4\n        for (int offset = 16;" in four.source
    [sgemm_full, sgemm_four] = loop_unroll.propose(request(SGEMM, "loop-unroll"))
    assert "        #pragma unroll\n        for (int i = 0; i < TILE; ++i)" in sgemm_full.source
    assert "(sgemm_smem_tiled, 32 iterations)" in sgemm_full.description


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        (CUDA / "06_register_spills" / "slow.cu", "already has #pragma unroll"),
        (CUDA / "10_sgemm_naive" / "slow.cu", "condition 'i < K' is not 'i < <constant>'"),
        (CUDA / "04_small_grid" / "slow.cu", "is not 'i = <constant>'"),
        (CUDA / "11_strided_access" / "slow.cu", "no innermost for loop"),
    ],
)
def test_unroll_does_not_apply(path: Path, reason: str) -> None:
    why = loop_unroll.applies(request(path, "loop-unroll"))
    assert why is not None and reason in why


def test_unroll_refuses_loops_that_assign_their_variable() -> None:
    src = "__global__ void k(float *o) {\n    for (int i = 0; i < 8; ++i) {\n        o[i] = 1.f;\n        i += 1;\n    }\n}\n"
    req = request(TRANSPOSE, "loop-unroll").model_copy(update={"source": src})
    assert "assigns the loop variable i" in (loop_unroll.applies(req) or "")


def test_nvcc_compiles_restrict_and_unroll_outputs(tmp_path: Path) -> None:
    sources: dict[str, str] = {}
    for path in (TRANSPOSE, PROGRAM, SGEMM, TEMPLATE, CUDA / "09_histogram_atomics" / "slow.cu"):
        for recipe in (restrict_pointers, loop_unroll):
            transform = "restrict-pointers" if recipe is restrict_pointers else "loop-unroll"
            for i, cand in enumerate(recipe.propose(request(path, transform))):
                assert_clean_cuda(cand.source)
                sources[f"{path.parent.name}_{path.stem}_{transform}_{i}"] = cand.source
    assert len(sources) >= 9
    assert_compiled(nvcc_compile(sources, tmp_path))
