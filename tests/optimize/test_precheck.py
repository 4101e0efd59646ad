"""Check before it travels: ``--propose-only`` compiles each proposal here (nvcc for a launch-spec kernel,
a parse for Python) and sends a compile error back to the model as a repair before anything is written.
The real openai client against the loopback server (tests/rewrite/llm_server.py); nvcc compiles for real."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from rewrite.llm_server import MODEL, ReplayServer, Reply, structured

from perfagent.llm_client import LLMConfig
from perfagent.optimize.phases import propose
from perfagent.optimize.precheck import precheck
from perfagent.records import RunRecord
from perfagent.workloads.detect import resolve
from tests.optimize.helpers import KB, TRANSPOSE, copy_example

SLOW = (TRANSPOSE / "slow.cu").read_text()
PADDED = SLOW.replace("tile[TILE_DIM][TILE_DIM]", "tile[TILE_DIM][TILE_DIM + 1]")
BROKEN = PADDED.replace("__syncthreads();", "__syncthreads()", 1)  # a missing semicolon


@pytest.fixture(autouse=True)
def _nvcc() -> None:
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed")


def _propose(tmp_path: Path, *replies: str, repairs: int = 1) -> tuple[RunRecord, list[str]]:
    folder = copy_example(TRANSPOSE, tmp_path)
    with ReplayServer() as server:
        server.enqueue(*[Reply(content=structured(r)) for r in replies])
        config = LLMConfig.from_env(base_url=server.base_url, model=MODEL, api_key="k", env={}, max_retries=0)
        record = propose(
            folder / "slow.cu",
            backend="llm",
            transform="smem-padding",
            gpu="h100-sxm",
            iterations=1,
            repairs=repairs,
            out=tmp_path / "run",
            llm_config=config,
        )
        prompts = [r.prompt_text for r in server.completions if r.answered == 200]
    return record, prompts


def test_a_compile_error_goes_back_as_a_repair_before_anything_is_written(tmp_path: Path) -> None:
    record, prompts = _propose(tmp_path, BROKEN, PADDED)
    [p1] = record.candidates
    assert p1.verdict == "proposed" and p1.source == PADDED
    assert any("compiled here: nvcc -cubin -arch=sm_90" in n and "1 repair" in n for n in p1.notes)
    assert len(prompts) == 2 and "It does not compile" in prompts[1] and "error" in prompts[1]
    assert p1.tokens is not None and p1.tokens["requests"] == 2  # the repair's tokens are counted


def test_a_proposal_that_still_does_not_build_is_not_sent_to_the_gpu(tmp_path: Path) -> None:
    record, prompts = _propose(tmp_path, BROKEN, BROKEN.replace("TILE_DIM + 1", "TILE_DIM + 2"))
    [p1] = record.candidates
    assert p1.verdict == "build-failed" and p1.reason.startswith("build failed here (nvcc, 1 repair(s))")
    assert (tmp_path / "run" / p1.proposal_dir / "build.log").read_text()
    assert record.optimize is not None


def test_python_is_parsed_and_load_inline_says_it_was_not_compiled_here() -> None:
    wl = resolve(KB / "01_vector_add.py")
    assert precheck(wl, "def f(:\n", {}, arch="sm_90", timeout_s=60).ok is False
    inline = "from torch.utils.cpp_extension import load_inline\nclass ModelNew: pass\n"
    said = precheck(wl, inline, {}, arch="sm_90", timeout_s=60)
    assert said.ok is None and "not compiled here" in said.detail
