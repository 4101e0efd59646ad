"""``--repairs N``: a candidate that fails to compile gets the compiler's first errors back, one that fails
verification the failing check's detail, in a repair request; bounded by N and recorded per candidate
(``repairs``, ``repair_of``). The real openai client against the loopback server (tests/rewrite/llm_server.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from rewrite.llm_server import MODEL, ReplayServer, Reply, fenced, structured

import perfagent
from perfagent.llm_client import LLMConfig
from perfagent.optimize.events import LoopEvent
from tests.optimize.helpers import KB, TRANSPOSE, copy_example

PROBLEM = KB / "01_vector_add.py"
CURRENT = KB / "01_vector_add_triton.py"
ORIGINAL = CURRENT.read_text()
WRONG = ORIGINAL.replace("a + b, mask=mask", "a - b, mask=mask").replace("block = 1024", "block = 4096")
WRONG_AGAIN = ORIGINAL.replace("a + b, mask=mask", "a * b, mask=mask").replace("block = 1024", "block = 4096")
GOOD = ORIGINAL.replace("block = 1024", "block = 4096")


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


def _run(server: ReplayServer, out: Path, **kw: object) -> perfagent.RunRecord:
    options: dict[str, object] = {
        "problem": PROBLEM,
        "backend": "llm",
        "transform": "launch-config",
        "iterations": 1,
        "device": "cpu",
        "out": out,
        "seeds": 1,
        "llm_config": _config(server),
    }
    options.update(kw)
    return perfagent.optimize(CURRENT, **options)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _triton() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("triton")


def test_a_wrong_candidate_gets_the_failing_check_back_and_its_repair_is_verified(tmp_path: Path) -> None:
    events: list[LoopEvent] = []
    with ReplayServer() as server:
        server.enqueue(
            Reply(content=structured(WRONG, "Bigger blocks.")), Reply(content=structured(GOOD, "Fixed."))
        )
        record = _run(server, tmp_path / "run", progress=events.append)  # default: --repairs 1
        first, fix = server.completions
    c1, c2 = record.candidates
    assert (c1.verdict, c1.repairs, c1.repair_of) == ("incorrect", 0, None)
    assert (c2.verdict, c2.repairs, c2.repair_of) == ("not-timed", 1, "c1")
    assert c2.parameters["repair"] == 1 and c2.iteration == c1.iteration == 1
    messages = fix.body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[:2] == first.body["messages"]
    assert json.loads(messages[2]["content"])["new_source"] == WRONG  # the candidate, as the model's reply
    feedback = messages[3]["content"]
    correctness = next(c for c in c1.verification.checks if c.name == "correctness")
    assert "fails verification" in feedback and "check `correctness`" in feedback
    assert correctness.detail.splitlines()[0] in feedback and "max abs err" in feedback
    assert "keep applying `launch-config`" in feedback
    assert any("c1 incorrect: asking for a repair (1 of 1)" in e.message for e in events)
    saved = json.loads((tmp_path / "run" / "record.json").read_text())
    assert [c["repairs"] for c in saved["candidates"]] == [0, 1]
    assert "(repair 1 of c1)" in (tmp_path / "run" / "summary.md").read_text()


def test_repairs_are_bounded(tmp_path: Path) -> None:
    with ReplayServer() as server:
        server.enqueue(
            Reply(content=structured(WRONG)),
            Reply(content=structured(WRONG_AGAIN)),
            Reply(content=structured(GOOD)),
        )
        record = _run(server, tmp_path / "run", repairs=1)
        asked = len(server.completions)
    # one proposal + one repair; the loop's second try at the transform is outside the 1-iteration budget
    assert asked == 2 and [c.repairs for c in record.candidates] == [0, 1]
    assert [c.verdict for c in record.candidates] == ["incorrect", "incorrect"]
    assert record.candidates[1].repair_of == "c1"


def test_repairs_zero_asks_nothing_more(tmp_path: Path) -> None:
    with ReplayServer() as server:
        server.enqueue(Reply(content=structured(WRONG)))
        record = _run(server, tmp_path / "run", repairs=0)
        assert len(server.completions) == 1
    [c1] = record.candidates
    assert c1.verdict == "incorrect" and c1.repairs == 0


def test_a_build_failure_gets_the_compilers_first_errors_back(tmp_path: Path) -> None:
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed")
    folder = copy_example(TRANSPOSE, tmp_path)
    source = (folder / "slow.cu").read_text()
    padded = source.replace("tile[TILE_DIM][TILE_DIM];", "tile[TILE_DIM][TILE_DIM + 1];")
    broken = padded.replace("tile[TILE_DIM][TILE_DIM + 1];", "tile[TILE_DIM][TILE_DIM + PAD];")
    with ReplayServer() as server:
        server.reject_json_schema = True
        server.enqueue(Reply(content=fenced(broken, "cuda")), Reply(content=fenced(padded, "cuda")))
        record = perfagent.optimize(
            folder / "slow.cu",
            backend="llm",
            transform="smem-padding",
            iterations=1,
            device="cpu",
            out=tmp_path / "run",
            llm_config=_config(server),
        )
        fix = server.completions[-1].body["messages"]
    c1, c2 = record.candidates
    assert c1.verdict == "build-failed" and (c2.verdict, c2.repairs, c2.repair_of) == (
        "not-verified",
        1,
        "c1",
    )
    feedback = fix[-1]["content"]
    assert "does not compile" in feedback and "PAD" in feedback and "error" in feedback
    assert len(feedback.split("Fix it:")[0].splitlines()) <= 25  # the first ~20 lines, not the whole log
    assert fix[-2]["role"] == "assistant" and "TILE_DIM + PAD" in fix[-2]["content"]


def test_a_cuda_modelnew_failing_for_want_of_a_gpu_is_not_sent_back(tmp_path: Path) -> None:
    events: list[LoopEvent] = []
    cuda_file = KB / "01_vector_add_cuda.py"
    changed = cuda_file.read_text().replace("int threads = 256;", "int threads = 512;")
    with ReplayServer() as server:
        server.enqueue(Reply(content=structured(changed)))
        record = perfagent.optimize(
            cuda_file,
            problem=PROBLEM,
            backend="llm",
            transform="launch-config",
            iterations=1,
            device="cpu",
            seeds=1,
            out=tmp_path / "run",
            llm_config=_config(server),
            progress=events.append,
        )
        assert len(server.completions) == 1
    [c1] = record.candidates
    # the machine's failure, not the code's: not verified here (never 'incorrect'), and no repair asked
    assert c1.verdict == "not-verified" and "not verified here" in c1.reason
