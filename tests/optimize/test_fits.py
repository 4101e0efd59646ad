"""Plan only what fits: transforms whose catalog precondition the evidence contradicts are not proposed,
and a propose-only run's later iterations ask for other transforms with the earlier proposals in full.

The contradictions are read from the bundled examples' real sources and recorded profiles; the plan and
the prompts come from ``--propose-only`` with the llm backend against the loopback server
(tests/rewrite/llm_server.py, the real openai client)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite.llm_server import MODEL, ReplayServer, Reply, structured

import perfagent
from perfagent.llm_client import LLMConfig
from perfagent.optimize.fits import contradiction
from perfagent.optimize.phases import propose
from tests.optimize.helpers import EXAMPLES, KB, REPORTS, copy_example

CUDA = EXAMPLES / "cuda"


def _src(name: str) -> str:
    return (CUDA / name / "slow.cu").read_text()


def test_fast_math_does_not_fit_an_integer_kernel_with_an_idle_xu_pipe() -> None:
    histogram = perfagent.diagnose(REPORTS / "09_histogram_atomics.ncu-rep").kernels[0].profile
    why = contradiction("fast-math", _src("09_histogram_atomics"), "cuda", histogram)
    assert why is not None and "XU pipe is idle" in why
    # unmeasured: the source alone (no transcendental, no float division) says so
    assert "has none" in (contradiction("fast-math", _src("09_histogram_atomics"), "cuda", None) or "")
    softmaxish = "__global__ void k(float* y, const float* x) { y[threadIdx.x] = expf(x[threadIdx.x]); }"
    assert contradiction("fast-math", softmaxish, "cuda", None) is None


def test_fast_math_fits_a_remainder_by_a_runtime_size_even_with_an_idle_xu_pipe() -> None:
    """Integer ``%`` by a runtime size is not XU work (modulo-to-select's, under fast-math): the idle XU
    of a recorded integer kernel does not rule it out, and a literal divisor (a multiply) still does."""
    histogram = perfagent.diagnose(REPORTS / "09_histogram_atomics.ncu-rep").kernels[0].profile
    torus = "__global__ void k(int* o, const int* a, int W, int n) { int i = threadIdx.x; o[i] = a[(i + 1) % W]; }"
    assert contradiction("fast-math", torus, "cuda", histogram) is None
    literal = torus.replace("% W", "% 64")
    assert "XU pipe is idle" in (contradiction("fast-math", literal, "cuda", histogram) or "")


def test_async_copy_needs_a_tiled_loop() -> None:
    assert "no loop" in (contradiction("async-copy", _src("11_strided_access"), "cuda", None) or "")
    assert "tiled loop" in (contradiction("async-copy", _src("10_sgemm_naive"), "cuda", None) or "")
    assert contradiction("async-copy", (KB / "02_matmul_relu_triton.py").read_text(), "triton", None) is None


def test_smem_tiling_does_not_fit_an_element_wise_op_but_fits_reuse_and_transposes() -> None:
    assert "element-wise" in (
        contradiction("smem-tiling", _src("08_vector_copy_near_peak"), "cuda", None) or ""
    )
    vector_add = (KB / "01_vector_add_triton.py").read_text()
    assert "element-wise" in (contradiction("smem-tiling", vector_add, "triton", None) or "")
    for fits in ("10_sgemm_naive", "01_transpose_naive", "11_strided_access", "03_reduction_divergent"):
        assert contradiction("smem-tiling", _src(fits), "cuda", None) is None, fits


def test_the_plan_says_why_and_later_iterations_ask_for_other_transforms_with_earlier_proposals(
    tmp_path: Path,
) -> None:
    folder = copy_example(CUDA / "08_vector_copy_near_peak", tmp_path)
    source = (folder / "slow.cu").read_text()
    first = source.replace("float4 v = in4[i];", "const float4 v0 = in4[i];\n        float4 v = v0;")
    second = source.replace("out[i] = a * in[i];", "out[i] = in[i] * a;")
    with ReplayServer() as server:
        server.enqueue(Reply(content=structured(first, "One.")), Reply(content=structured(second, "Two.")))
        config = LLMConfig.from_env(base_url=server.base_url, model=MODEL, api_key="k", env={}, max_retries=0)
        record = propose(
            folder / "slow.cu",
            report=REPORTS / "08_vector_copy_near_peak.ncu-rep",
            backend="llm",
            iterations=2,
            max_candidates=1,
            out=tmp_path / "run",
            llm_config=config,
        )
        prompts = [r.prompt_text for r in server.completions if r.answered == 200]
    assert record.optimize is not None
    tiling = next(p for p in record.optimize.plan if p.transform == "smem-tiling")
    assert tiling.skipped is not None and tiling.skipped.startswith("does not fit: shared-memory tiles")
    p1, p2 = record.candidates
    assert p1.transform != p2.transform  # iteration 2 asks for a different transform
    assert len(prompts) == 2 and "const float4 v0 = in4[i];" in prompts[1]  # p1 shown in full
    assert "The proposal in full" in prompts[1] and p1.id in prompts[1]


@pytest.mark.parametrize("requested", ["smem-tiling"])
def test_a_requested_transform_is_never_dropped(tmp_path: Path, requested: str) -> None:
    folder = copy_example(CUDA / "08_vector_copy_near_peak", tmp_path)
    record = propose(
        folder / "slow.cu",
        report=REPORTS / "08_vector_copy_near_peak.ncu-rep",
        backend="recipes",
        transform=requested,
        out=tmp_path / "run",
    )
    assert record.optimize is not None
    [step] = record.optimize.plan
    assert not (step.skipped or "").startswith("does not fit")
