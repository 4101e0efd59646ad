"""The whole loop on CPU with the llm backend: a KernelBench problem, Triton candidates, the real openai
client against a real HTTP server on loopback (tests/rewrite/llm_server.py) replaying prepared replies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rewrite.llm_server import MODEL, ReplayServer, Reply, fenced

import perfagent
from perfagent.llm_client import LLMConfig
from perfagent.optimize.events import LoopEvent
from tests.optimize.helpers import KB

pytest.importorskip("torch")
pytest.importorskip("triton")

PROBLEM = KB / "01_vector_add.py"
CURRENT = KB / "01_vector_add_triton.py"
KEY = "sk-optimize-SECRET-24680"
ORIGINAL = CURRENT.read_text()
WRONG = ORIGINAL.replace("a + b, mask=mask", "a - b, mask=mask").replace("block = 1024", "block = 4096")
GOOD = ORIGINAL.replace("block = 1024", "block = 4096").replace(
    "BLOCK_SIZE=block)", "BLOCK_SIZE=block, num_warps=8)"
)


def _config(server: ReplayServer, timeout_s: float = 10.0) -> LLMConfig:
    return LLMConfig.from_env(
        base_url=server.base_url,
        model=MODEL,
        api_key=KEY,
        env={},
        timeout_s=timeout_s,
        max_retries=0,
        backoff_s=0.0,
    )


def _run(server: ReplayServer, out: Path, events: list[LoopEvent], **kw: object) -> perfagent.RunRecord:
    options: dict[str, object] = {
        "problem": PROBLEM,
        "backend": "llm",
        "transform": "launch-config",
        "iterations": 2,
        "device": "cpu",
        "out": out,
        "seeds": 1,
        "llm_config": _config(server),
        "progress": events.append,
    }
    options.update(kw)
    return perfagent.optimize(CURRENT, **options)  # type: ignore[arg-type]


def test_wrong_rewrite_rejected_with_reason_fed_back_then_good_rewrite_verified_not_timed(
    tmp_path: Path,
) -> None:
    events: list[LoopEvent] = []
    with ReplayServer() as server:
        server.reject_json_schema = True  # a plain chat server: fenced replies
        server.enqueue(
            Reply(content=fenced(WRONG, "python", "Bigger blocks.")),
            Reply(content=fenced(GOOD, "python", "8 warps.")),
        )
        # no repair request (--repairs 0): the rejection reaches the next rewrite request instead
        record = _run(server, tmp_path / "run", events, repairs=0)
        prompts = [r.prompt_text for r in server.completions if r.answered == 200]

    assert record.kind == "optimize" and record.optimize is not None
    c1, c2 = record.candidates
    assert (c1.verdict, c1.accepted, c1.verification.verdict) == ("incorrect", False, "fail")
    assert c1.reason.startswith("incorrect: correctness")
    # The rejection reason steered the second request.
    assert c1.id in prompts[-1] and c1.reason in prompts[-1]
    assert (c2.verdict, c2.accepted, c2.verification.verdict) == ("not-timed", False, "pass")
    assert c2.reason == "correct but not timed (no GPU): speed-up not measured"
    assert c2.time_s is None and c2.speedup is None and record.best is None
    assert c2.tokens is not None and c2.tokens["requests"] == 1
    assert Path(c2.source_path or "").read_text() == GOOD
    kinds = [e.kind for e in events]
    for kind in ("planned", "proposed", "built", "verified", "rejected"):
        assert kind in kinds
    assert "accepted" not in kinds and "timed" not in kinds
    saved = (tmp_path / "run" / "record.json").read_text()
    assert KEY not in saved and KEY not in json.dumps([e.model_dump() for e in events])
    assert CURRENT.read_text() == ORIGINAL  # the user's file is untouched without apply


def test_malformed_reply_is_repaired_within_the_request(tmp_path: Path) -> None:
    with ReplayServer() as server:
        server.reject_json_schema = True
        server.enqueue(Reply(content="I would raise the block size."), Reply(content=fenced(GOOD, "python")))
        record = _run(server, tmp_path / "run", [], iterations=1)
        repair = server.completions[-1].prompt_text
    [cand] = record.candidates
    assert cand.verdict == "not-timed" and cand.tokens is not None and cand.tokens["requests"] == 2
    assert "could not be used" in repair
    assert not record.optimize or not record.optimize.llm_errors


def test_slow_reply_past_the_timeout_is_recorded_and_the_loop_stops_cleanly(tmp_path: Path) -> None:
    events: list[LoopEvent] = []
    with ReplayServer() as server:
        server.enqueue(Reply(content=fenced(GOOD, "python"), held=True))
        record = _run(
            server, tmp_path / "run", events, llm_config=_config(server, timeout_s=0.5), iterations=3
        )
    result = record.optimize
    assert result is not None and not record.candidates and record.best is None
    assert len(result.llm_errors) == 1 and "did not answer within 0.5 s" in result.llm_errors[0]
    assert result.stopped.startswith("plan exhausted")
    assert any(e.kind == "info" and "LLM error" in e.message for e in events)
    assert (tmp_path / "run" / "record.json").is_file() and (tmp_path / "run" / "summary.md").is_file()
