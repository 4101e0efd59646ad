"""The write-kernel step: a plain-PyTorch KernelBench problem with the llm backend gets a first ModelNew
(Triton here: verified on the CPU under the interpreter), verified against the reference like any other
candidate, then the targeted-transform loop continues on it. The real openai client against the loopback
server (tests/rewrite/llm_server.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from rewrite.llm_server import MODEL, ReplayServer, Reply, structured

import perfagent
from perfagent.llm_client import LLMConfig
from perfagent.optimize.events import LoopEvent
from profilers.core_errors import BadInput
from tests.optimize.helpers import KB

pytestmark = pytest.mark.slow
TRITON = (KB / "01_vector_add_triton.py").read_text()
WRONG = TRITON.replace("a + b, mask=mask", "a - b, mask=mask")
TUNED = TRITON.replace("block = 1024", "block = 4096")


@pytest.fixture(autouse=True)
def _triton() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("triton")


def _config(server: ReplayServer) -> LLMConfig:
    return LLMConfig.from_env(
        base_url=server.base_url,
        model=MODEL,
        api_key="sk-x",
        env={},
        timeout_s=10.0,
        max_retries=0,
        backoff_s=0.0,
    )


def _problem(tmp_path: Path) -> Path:
    target = tmp_path / "01_vector_add.py"
    shutil.copy(KB / "01_vector_add.py", target)
    return target


def test_first_triton_kernel_written_verified_then_optimized(tmp_path: Path) -> None:
    problem = _problem(tmp_path)
    before = problem.read_text()
    events: list[LoopEvent] = []
    with ReplayServer() as server:
        server.enqueue(
            Reply(content=structured(TRITON, "A Triton add kernel.")),
            Reply(content=structured(TUNED, "Bigger blocks.")),
        )
        record = perfagent.optimize(
            problem,
            backend="llm",
            language="triton",
            iterations=2,
            device="cpu",
            seeds=1,
            out=tmp_path / "run",
            llm_config=_config(server),
            progress=events.append,
        )
        first, second = server.completions
    result = record.optimize
    assert result is not None
    c1, c2 = record.candidates
    assert (c1.transform, c1.verdict, c1.verification.verdict) == ("write-kernel", "not-timed", "pass")
    assert c1.file == str(
        tmp_path / "01_vector_add_perfagent_triton.py"
    )  # --apply never overwrites the problem
    assert (c2.transform, c2.parent, c2.verification.verdict) == ("launch-config", "c1", "pass")
    assert c2.file == c1.file and Path(c2.source_path or "").read_text() == TUNED
    assert result.plan[0].transform == "write-kernel" and result.plan[0].origin == "write-kernel"
    assert result.plan[0].tried and any(p.transform == "launch-config" and p.tried for p in result.plan)
    # The first request: the reference, its input shapes, the kernel language; plain JSON reply schema.
    prompt = first.prompt_text
    assert "write a first ModelNew with Triton kernel(s) for" in prompt and "01_vector_add.py" in prompt
    assert "forward receives (get_inputs()): float32[65536], float32[65536]" in prompt
    assert "the constructor receives (get_init_inputs()): none" in prompt
    assert "class Model(nn.Module)" in prompt and "return a + b" in prompt and "@triton.jit" in prompt
    assert "Transform `write-kernel`" in prompt
    assert first.body["response_format"]["json_schema"]["name"] == "RewriteReply"
    # The second works on the new kernel and knows what the first gave.
    later = second.prompt_text
    assert "apply the transform `launch-config`" in later and "c1 (write-kernel): not-timed" in later
    assert "The current source below is" not in later  # adopted, not accepted (nothing was timed)
    assert "BLOCK_SIZE" in later.split("Current source:")[1]
    assert any("first kernel correct (not-timed), adopted" in e.message for e in events)
    assert problem.read_text() == before and not (tmp_path / "01_vector_add_perfagent_triton.py").exists()
    saved = json.loads((tmp_path / "run" / "record.json").read_text())
    assert saved["candidates"][0]["transform"] == "write-kernel"


def test_a_wrong_first_kernel_is_repaired_and_a_reply_without_a_kernel_is_refused(tmp_path: Path) -> None:
    plain = "import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n    def forward(self, a, b):\n        return a + b\n"
    with ReplayServer() as server:
        server.enqueue(
            Reply(content=structured(plain)),  # no @triton.jit: a reply problem, repaired in the conversation
            Reply(content=structured(WRONG)),  # a Triton kernel that subtracts: incorrect, repair request
            Reply(content=structured(TRITON)),
        )
        record = perfagent.optimize(
            _problem(tmp_path),
            backend="llm",
            language="triton",
            iterations=1,
            device="cpu",
            seeds=1,
            out=tmp_path / "run",
            llm_config=_config(server),
        )
        asked = [r.body["messages"][-1]["content"] for r in server.completions]
    c1, c2 = record.candidates
    assert c1.verdict == "incorrect" and (c2.repairs, c2.repair_of, c2.verification.verdict) == (
        1,
        "c1",
        "pass",
    )
    assert "no @triton.jit kernel" in asked[1]
    assert "fails verification" in asked[2] and "keep applying `write-kernel`" in asked[2]
    assert record.optimize is not None and record.optimize.stopped.startswith("iteration budget spent")


def test_recipes_keep_the_message_and_write_kernel_needs_a_plain_problem(tmp_path: Path) -> None:
    record = perfagent.optimize(
        _problem(tmp_path), backend="recipes", device="cpu", out=tmp_path / "run", iterations=1
    )
    assert record.optimize is not None and record.optimize.stopped.startswith("nothing to try:")
    assert "--backend llm, --language cuda|triton" in record.optimize.stopped
    with pytest.raises(BadInput, match="plain-PyTorch"):
        perfagent.optimize(
            KB / "01_vector_add_triton.py",
            problem=KB / "01_vector_add.py",
            backend="recipes",
            transform="write-kernel",
            device="cpu",
            out=tmp_path / "run2",
        )
    with pytest.raises(BadInput, match="kernel language"):
        perfagent.optimize(_problem(tmp_path), language="rust", device="cpu", out=tmp_path / "run3")


def test_a_cuda_first_kernel_without_a_gpu_is_asked_once_and_said_so(tmp_path: Path) -> None:
    events: list[LoopEvent] = []
    with ReplayServer() as server:
        server.enqueue(Reply(content=structured((KB / "01_vector_add_cuda.py").read_text())))
        record = perfagent.optimize(
            _problem(tmp_path),
            backend="llm",  # --language cuda is the default
            iterations=3,
            device="cpu",
            seeds=1,
            out=tmp_path / "run",
            llm_config=_config(server),
            progress=events.append,
        )
        [req] = server.completions
    system = req.body["messages"][0]["content"]
    assert "torch.utils.cpp_extension.load_inline" in system and "getCurrentCUDAStream" in system
    [c1] = record.candidates
    assert (
        c1.transform == "write-kernel" and c1.verdict == "not-verified" and "not verified here" in c1.reason
    )
    result = record.optimize
    assert result is not None and "could not be verified here (no GPU)" in result.stopped
    assert any("cannot be built or verified here" in n for n in result.notes)
