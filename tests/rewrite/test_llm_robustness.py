"""Replies real models send, through the real openai client and the loopback server: reasoning blocks,
several code blocks, truncation, refusals, the wrong language, rate limits; cassettes that record and
replay a conversation byte for byte; token cost accounting."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from perfagent.llm_client import LLMConfig, cassette_config
from perfagent.rewrite.llm import LLMRewriter
from perfagent.rewrite.llm_reply import parse_reply, strip_reasoning
from profilers.core_errors import BadInput, ExitCode, LLMError
from tests.rewrite.llm_server import MODEL, ReplayServer, Reply, fenced, structured
from tests.rewrite.test_llm import KEY, SLOW_CU, _padded, _request


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as srv:
        yield srv


def _config(server: ReplayServer, **options: object) -> LLMConfig:
    # plain chat (no json_schema request): replies as models write them
    base: dict[str, object] = {
        "timeout_s": 5.0,
        "max_retries": 0,
        "backoff_s": 0.0,
        "reply_retries": 1,
        "structured_output": False,
    }
    base.update(options)
    return LLMConfig.from_env(base_url=server.base_url, model=MODEL, api_key=KEY, env={}, **base)  # type: ignore[arg-type]


ORIGINAL = SLOW_CU.read_text()


def test_think_blocks_are_dropped_before_parsing(server: ReplayServer) -> None:
    thought = "<think>\nThe tile read is column-wise: ```cuda\n__global__ void nope() {}\n``` no.\n</think>\n"
    server.enqueue(Reply(content=thought + fenced(_padded())))
    [cand] = LLMRewriter(_config(server)).propose(_request())
    assert cand.source == _padded()
    assert "nope" not in cand.source and "<think>" not in cand.description


def test_a_reply_that_never_leaves_its_thoughts_is_named_as_such() -> None:
    problem = parse_reply("<think>\nlet me consider the bank mapping ... (cut)", "cuda", ORIGINAL)
    assert isinstance(problem, str) and "reasoning" in problem
    assert strip_reasoning("<THINKING>a</THINKING>answer") == "answer"


def test_several_code_blocks_take_the_complete_file(server: ReplayServer) -> None:
    fragment = "```cuda\n__shared__ float tile[TILE_DIM][TILE_DIM + 1];\n```"
    usage = "```bash\nnvcc -arch=sm_90 slow.cu\n```"
    server.enqueue(
        Reply(content=f"Change this line:\n{fragment}\nFull file:\n{fenced(_padded())}\nBuild:\n{usage}\n")
    )
    [cand] = LLMRewriter(_config(server)).propose(_request())
    assert cand.source == _padded()


def test_several_complete_files_take_the_last(server: ReplayServer) -> None:
    first = ORIGINAL.replace("tile[TILE_DIM][TILE_DIM];", "tile[TILE_DIM][TILE_DIM + 2];")
    server.enqueue(Reply(content=f"{fenced(first)}\nActually, one is enough:\n{fenced(_padded())}"))
    [cand] = LLMRewriter(_config(server)).propose(_request())
    assert cand.source == _padded()


def test_truncated_reply_is_repaired(server: ReplayServer) -> None:
    cut = "```cuda\n" + _padded()[:200]  # no closing fence: finish_reason = length
    server.enqueue(Reply(content=cut, finish_reason="length"), Reply(content=fenced(_padded())))
    [cand] = LLMRewriter(_config(server)).propose(_request())
    assert cand.source == _padded() and cand.parameters["attempts"] == 2
    second = server.completions[1].prompt_text
    assert "cut off at the token limit" in second


@pytest.mark.parametrize(
    "reply",
    [
        Reply(content=None, refusal="I can't help modify this code."),
        Reply(content="I'm sorry, but I can't help with that request."),
    ],
    ids=["refusal-field", "refusal-text"],
)
def test_refusals_are_llm_errors_that_say_so(server: ReplayServer, reply: Reply) -> None:
    server.enqueue(reply, reply)
    with pytest.raises(LLMError) as info:
        LLMRewriter(_config(server)).propose(_request())
    assert "refused" in info.value.message
    assert info.value.exit_code == ExitCode.LLM


def test_the_wrong_language_is_named_and_repaired(server: ReplayServer) -> None:
    python = "```python\nimport torch\n\ndef transpose(x):\n    return x.t().contiguous()\n```"
    server.enqueue(Reply(content=python), Reply(content=fenced(_padded())))
    [cand] = LLMRewriter(_config(server)).propose(_request())
    assert cand.source == _padded()
    assert "not cuda" in server.completions[1].prompt_text


def test_rate_limit_with_retry_after_is_waited_out(server: ReplayServer) -> None:
    server.enqueue(
        Reply(status=429, error_message="rate limited", headers=(("Retry-After", "1"),)),
        Reply(content=fenced(_padded())),
    )
    started = time.monotonic()
    [cand] = LLMRewriter(_config(server, max_retries=2)).propose(_request())
    assert cand.source == _padded()
    assert time.monotonic() - started >= 0.9, "Retry-After must be honoured"
    assert [r.answered for r in server.completions] == [429, 200]


def test_rate_limit_past_the_retries_is_an_llm_error(server: ReplayServer) -> None:
    server.enqueue(*[Reply(status=429, error_message="slow down", headers=(("Retry-After", "0"),))] * 3)
    with pytest.raises(LLMError, match="rate-limit"):
        LLMRewriter(_config(server, max_retries=1)).propose(_request())


# ---- cost accounting ----------------------------------------------------------------------------


def test_tokens_wait_and_cost_per_candidate(server: ReplayServer) -> None:
    server.enqueue(Reply(content=structured(_padded()), prompt_tokens=2_000_000, completion_tokens=500_000))
    config = replace(_config(server, structured_output=True), price_per_million=(0.5, 2.0))
    [cand] = LLMRewriter(config).propose(_request())
    assert cand.tokens is not None
    assert cand.tokens.cost == pytest.approx(2.0 * 0.5 + 0.5 * 2.0)
    assert cand.tokens.wall_s > 0 and cand.tokens.requests == 1


# ---- cassettes ----------------------------------------------------------------------------------


def test_record_then_replay_gives_the_same_candidates_without_a_server(
    tmp_path: Path, server: ReplayServer
) -> None:
    cassette = tmp_path / "cassette"
    wrong_lang = "```python\nprint('hi')\n```"
    server.enqueue(Reply(content=wrong_lang), Reply(content=fenced(_padded())))
    recorded = LLMRewriter(cassette_config(_config(server), record=str(cassette), replay=None)).propose(
        _request()
    )
    assert len(server.completions) == 2
    files = sorted(p.name for p in cassette.iterdir())
    assert "cassette.json" in files and len(files) == 3
    stored = "".join(p.read_text() for p in cassette.iterdir())
    assert KEY not in stored, "the API key must never be stored"

    server.stop()  # no network from here on
    offline = LLMConfig.from_env(
        env={}, timeout_s=1.0, max_retries=0, backoff_s=0.0, reply_retries=1, structured_output=False
    )
    replayed = LLMRewriter(cassette_config(offline, record=None, replay=str(cassette))).propose(_request())
    assert [c.source for c in replayed] == [c.source for c in recorded]
    assert [c.id for c in replayed] == [c.id for c in recorded]


def test_replay_of_an_unrecorded_request_names_its_hash(tmp_path: Path, server: ReplayServer) -> None:
    cassette = tmp_path / "cassette"
    server.enqueue(Reply(content=fenced(_padded())))
    LLMRewriter(cassette_config(_config(server), record=str(cassette), replay=None)).propose(_request())
    offline = LLMConfig.from_env(env={}, reply_retries=0)
    other = _request(transform="smem-swizzle")
    with pytest.raises(LLMError) as info:
        LLMRewriter(cassette_config(offline, record=None, replay=str(cassette))).propose(other)
    assert "no recorded reply for request" in info.value.message and info.value.exit_code == ExitCode.LLM
    key = info.value.message.split("request ")[1].split(" ")[0]
    assert len(key) == 16 and all(c in "0123456789abcdef" for c in key)


def test_replay_needs_a_cassette(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="not an LLM cassette"):
        cassette_config(LLMConfig(), record=None, replay=str(tmp_path))
    with pytest.raises(BadInput, match="exclude"):
        cassette_config(LLMConfig(), record=str(tmp_path), replay=str(tmp_path))


def test_cassette_meta_records_model_and_endpoint_but_no_key(tmp_path: Path, server: ReplayServer) -> None:
    cassette = tmp_path / "c"
    server.enqueue(Reply(content=fenced(_padded())))
    LLMRewriter(cassette_config(_config(server), record=str(cassette), replay=None)).propose(_request())
    meta = json.loads((cassette / "cassette.json").read_text())
    assert (
        meta["model"] == MODEL and meta["endpoint"].startswith("http://127.0.0.1") and meta["requests"] == 1
    )
