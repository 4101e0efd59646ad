"""The llm backend against broken and stalled endpoints (real ``openai`` client, real loopback server)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from perfagent.llm_client import DEFAULT_TIMEOUT_S, LLMConfig
from perfagent.rewrite.llm import LLMRewriter
from profilers.core_errors import LLMError
from tests.rewrite.llm_server import MODEL, ReplayServer, Reply, structured
from tests.rewrite.test_llm import KEY, _padded, _request


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as srv:
        yield srv


def _config(server: ReplayServer, **options: object) -> LLMConfig:
    base: dict[str, object] = {"timeout_s": 1.0, "max_retries": 0, "backoff_s": 0.0}
    base.update(options)
    return LLMConfig.from_env(base_url=server.base_url, model=MODEL, api_key=KEY, env={}, **base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "body",
    [b"<html>this is not json", b'{"object": "chat.completion"}', b"[1, 2, 3]"],
    ids=["not-json", "no-choices", "a-list"],
)
def test_a_reply_that_is_not_a_chat_completion_is_an_llm_error(server: ReplayServer, body: bytes) -> None:
    server.enqueue(Reply(raw_body=body))
    with pytest.raises(LLMError) as info:
        LLMRewriter(_config(server)).propose(_request())
    assert "did not answer with an OpenAI chat-completions response" in info.value.message
    assert "/v1" in info.value.hint and KEY not in str(info.value)


def test_default_request_timeout_is_at_most_two_minutes() -> None:
    assert DEFAULT_TIMEOUT_S <= 120
    assert LLMConfig.from_env(base_url="http://127.0.0.1:9/v1", model="m", env={}).timeout_s <= 120


def test_a_stalled_endpoint_reports_waiting_and_each_retry(server: ReplayServer) -> None:
    server.enqueue(Reply(content=structured(_padded()), held=True), Reply(content=structured(_padded())))
    heard: list[str] = []
    rewriter = LLMRewriter(
        # 3 s, not less: the second, prompt reply must arrive within it on a loaded 2-core CI machine; the
        # held first reply costs that much wall time (no CPU)
        _config(server, timeout_s=3.0, max_retries=1),
        progress=heard.append,
        wait_tick_s=0.25,
    )
    [cand] = rewriter.propose(_request())
    assert cand.source == _padded() and len(server.completions) == 2
    waiting = [m for m in heard if m.startswith("waiting for the model (")]
    assert waiting and all("gives up at 3 s" in m for m in waiting)
    assert any("no answer within 3 s; retrying (1 of 1)" in m for m in heard), heard


def test_a_stalled_endpoint_gives_up_after_the_retries_with_exit_5(server: ReplayServer) -> None:
    server.enqueue(*[Reply(content=structured(_padded()), held=True)] * 2)
    heard: list[str] = []
    with pytest.raises(LLMError) as info:
        LLMRewriter(_config(server, timeout_s=0.5, max_retries=1), progress=heard.append).propose(_request())
    assert server.holding == 2  # both attempts gave up on their own while their replies were held
    assert info.value.exit_code == 5 and "did not answer within 0.5 s" in info.value.message
    assert sum("retrying" in m for m in heard) == 1


def test_server_errors_are_retried_and_said(server: ReplayServer) -> None:
    server.enqueue(Reply(status=503, error_message="overloaded"), Reply(content=structured(_padded())))
    heard: list[str] = []
    [cand] = LLMRewriter(_config(server, max_retries=2), progress=heard.append).propose(_request())
    assert cand.source == _padded()
    assert heard == ["the LLM endpoint: HTTP 503; retrying (1 of 2) in 0 s"]


def test_the_hint_names_the_real_backend_flag(server: ReplayServer) -> None:
    unconfigured = LLMConfig.from_env(env={})
    with pytest.raises(LLMError) as info:
        LLMRewriter(unconfigured).propose(_request())
    assert "--backend recipes" in info.value.hint and "--rewriter" not in info.value.hint
    server.enqueue(*[Reply(content="no code here")] * 3)
    with pytest.raises(LLMError) as info:
        LLMRewriter(_config(server)).propose(_request())
    assert "--backend recipes" in info.value.hint
