"""The llm backend driven through the real ``openai`` client against a real loopback HTTP server."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from perfagent.llm_client import PLACEHOLDER_KEY, LLMConfig, make_client, probe
from perfagent.rewrite import auto_choice, get_rewriter
from perfagent.rewrite.base import RewriteRequest
from perfagent.rewrite.llm import LLMRewriter
from perfagent.rewrite.llm_reply import parse_reply
from perfagent.rewrite.recipes_backend import RecipesRewriter
from profilers.core_errors import BadInput, ExitCode, LLMError
from profilers.model import DeviceInfo, Evidence, Finding
from tests.rewrite.llm_server import MODEL, ReplayServer, Reply, fenced, structured

ROOT = Path(__file__).resolve().parents[2]
SLOW_CU = ROOT / "examples" / "cuda" / "02_transpose_bank_conflicts" / "slow.cu"
KEY = "sk-test-SECRET-0123456789abcdef"
TIMEOUT_S = 1.0

FINDING = Finding(
    category="shared-bank-conflicts",
    severity="high",
    title="32-way shared-memory bank conflicts on the tile read",
    explanation="94 % of shared wavefronts are bank-conflict replays.",
    evidence=[
        Evidence(metric="shared_bank_conflict_pct", value=93.8, threshold=10, comparison=">", unit="%"),
        Evidence(metric="l1_throughput_pct", value=71.0, unit="%"),
    ],
    estimated_speedup=1.4,
    transforms=["smem-padding", "smem-swizzle"],
    rule="shared_bank_conflicts",
)
H100 = DeviceInfo(
    name="NVIDIA H100 80GB HBM3", vendor="nvidia", arch="sm_90", compute_capability="9.0", sm_count=132
)


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as srv:
        yield srv


def _config(server: ReplayServer, **options: object) -> LLMConfig:
    base: dict[str, object] = {"timeout_s": TIMEOUT_S, "max_retries": 0, "backoff_s": 0.0}
    base.update(options)
    return LLMConfig.from_env(base_url=server.base_url, model=MODEL, api_key=KEY, env={}, **base)  # type: ignore[arg-type]


def _request(**fields: object) -> RewriteRequest:
    src = SLOW_CU.read_text()
    values: dict[str, object] = {
        "source": src,
        "path": "examples/cuda/02_transpose_bank_conflicts/slow.cu",
        "language": "cuda",
        "transform": "smem-padding",
        "finding": FINDING,
        "hardware": H100,
    }
    values.update(fields)
    return RewriteRequest(**values)  # type: ignore[arg-type]


def _padded() -> str:
    return SLOW_CU.read_text().replace("tile[TILE_DIM][TILE_DIM];", "tile[TILE_DIM][TILE_DIM + 1];")


def test_structured_reply_becomes_a_candidate(server: ReplayServer) -> None:
    server.enqueue(Reply(content=structured(_padded()), prompt_tokens=1234, completion_tokens=567))
    rewriter = LLMRewriter(_config(server))
    [cand] = rewriter.propose(_request())
    assert cand.source == _padded() and cand.backend == "llm" and cand.transform == "smem-padding"
    assert cand.tokens is not None and (
        cand.tokens.prompt_tokens,
        cand.tokens.completion_tokens,
        cand.tokens.requests,
    ) == (1234, 567, 1)
    assert cand.recipe == MODEL and cand.parameters["structured_output"] is True
    assert "+    __shared__ float tile[TILE_DIM][TILE_DIM + 1];" in cand.diff
    [req] = server.completions
    assert req.body["response_format"]["type"] == "json_schema"
    assert req.body["response_format"]["json_schema"]["schema"]["required"] == ["new_source", "explanation"]
    assert req.headers["authorization"] == f"Bearer {KEY}"
    prompt = req.prompt_text
    # The prompt carries the transform's catalog entry, the evidence, the hardware and the source.
    assert "Transform `smem-padding`" in prompt and "shared_bank_conflict_pct = 93.8 %" in prompt
    assert "NVIDIA H100" in prompt and "132 SMs" in prompt and "tile[TILE_DIM][TILE_DIM]" in prompt
    assert "Earlier attempts: none." in prompt


def test_falls_back_to_plain_chat_when_json_schema_is_rejected(server: ReplayServer) -> None:
    server.reject_json_schema = True
    server.enqueue(
        Reply(content=fenced(_padded())),
        Reply(content=fenced(_padded().replace("j += BLOCK_ROWS", "j += BLOCK_ROWS "))),
    )
    rewriter = LLMRewriter(_config(server))
    [cand] = rewriter.propose(_request())
    assert cand.source == _padded() and cand.parameters["structured_output"] is False
    first, second = server.completions
    assert first.answered == 400 and "response_format" in first.body
    assert second.answered == 200 and "response_format" not in second.body
    assert "exactly ONE fenced code block" in second.prompt_text
    # Remembered: the next request goes straight to plain chat.
    rewriter.propose(_request())
    assert "response_format" not in server.completions[-1].body and len(server.completions) == 3


def test_malformed_replies_are_repaired_then_accepted(server: ReplayServer) -> None:
    server.enqueue(
        Reply(content="I would pad the tile by one column.", prompt_tokens=10, completion_tokens=5),
        Reply(content='{"new_source": "oops", ', prompt_tokens=20, completion_tokens=6),
        Reply(content=structured(_padded()), prompt_tokens=30, completion_tokens=7),
    )
    [cand] = LLMRewriter(_config(server, reply_retries=2)).propose(_request())
    assert cand.parameters["attempts"] == 3
    assert cand.tokens is not None and (
        cand.tokens.prompt_tokens,
        cand.tokens.completion_tokens,
        cand.tokens.requests,
    ) == (60, 18, 3)
    second, third = server.completions[1:]
    assert "no fenced code block" in second.body["messages"][-1]["content"]
    assert "not a valid RewriteReply" in third.body["messages"][-1]["content"]


def test_malformed_replies_exhaust_the_retries(server: ReplayServer) -> None:
    server.enqueue(*[Reply(content="no code here")] * 2)
    with pytest.raises(LLMError) as info:
        LLMRewriter(_config(server, reply_retries=1)).propose(_request())
    assert info.value.exit_code == ExitCode.LLM
    assert (
        "no usable rewrite in 2 replies" in info.value.message
        and "no fenced code block" in info.value.message
    )
    assert len(server.completions) == 2


def test_slow_reply_past_the_timeout_is_an_llm_error(server: ReplayServer) -> None:
    server.enqueue(Reply(content=structured(_padded()), held=True))
    with pytest.raises(LLMError) as info:
        LLMRewriter(_config(server, timeout_s=0.5)).propose(_request())
    assert server.holding == 1  # it gave up while the reply was still held: its own timeout, not an answer
    assert "did not answer within 0.5 s" in info.value.message and "timeout" in info.value.hint


def test_the_clients_own_retry_recovers_from_a_slow_reply(server: ReplayServer) -> None:
    server.enqueue(Reply(content=structured(_padded()), held=True), Reply(content=structured(_padded())))
    # 3 s: the second, prompt reply must arrive within the client's timeout on a loaded 2-core CI machine
    [cand] = LLMRewriter(_config(server, timeout_s=3.0, max_retries=1)).propose(_request())
    assert cand.source == _padded() and len(server.completions) == 2


def test_wrong_rewrite_is_proposed_and_its_rejection_reaches_the_next_prompt(server: ReplayServer) -> None:
    wrong = _padded().replace("tile[threadIdx.x][threadIdx.y + j]", "tile[threadIdx.y + j][threadIdx.x]")
    server.enqueue(Reply(content=structured(wrong)), Reply(content=structured(_padded())))
    rewriter = LLMRewriter(_config(server))
    [bad] = rewriter.propose(_request())
    assert bad.source == wrong  # the rewriter does not judge; the verifier does
    reason = "verification failed: output mismatch, max abs error 1.93 at index (0, 1)"
    [good] = rewriter.propose(_request(failed_attempts=[(bad.id, reason)]))
    assert good.source == _padded()
    prompt = server.completions[-1].prompt_text
    assert "REJECTED" in prompt and bad.id in prompt and reason in prompt


def test_http_errors_map_to_llm_errors_with_hints(server: ReplayServer) -> None:
    server.enqueue(Reply(status=401, error_message="invalid api key"))
    with pytest.raises(LLMError, match="rejected the API key") as info:
        LLMRewriter(_config(server)).propose(_request())
    assert "PERFAGENT_LLM_API_KEY" in info.value.hint
    server.enqueue(Reply(status=404, error_message="model not found"))
    with pytest.raises(LLMError, match="404"):
        LLMRewriter(_config(server)).propose(_request())


def test_unreachable_endpoint(server: ReplayServer) -> None:
    url = server.base_url
    server.stop()
    config = LLMConfig.from_env(base_url=url, model=MODEL, env={}, timeout_s=TIMEOUT_S, max_retries=0)
    with pytest.raises(LLMError, match="cannot reach the LLM endpoint") as info:
        LLMRewriter(config).propose(_request())
    assert "PERFAGENT_LLM_BASE_URL" in info.value.hint


def test_the_key_never_appears_in_outputs_logs_or_records(
    server: ReplayServer, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    caplog.set_level(logging.DEBUG)
    server.enqueue(
        Reply(content="no block"),
        Reply(content=structured(_padded())),
        Reply(status=500, error_message=f"upstream said {KEY}"),  # even a server echoing the key
    )
    config = _config(server, reply_retries=1)
    rewriter = LLMRewriter(config)
    [cand] = rewriter.propose(_request())
    with pytest.raises(LLMError) as info:
        rewriter.propose(_request())
    record = tmp_path / "candidate.json"
    record.write_text(cand.model_dump_json(indent=2))
    texts = [
        record.read_text(),
        str(info.value),
        info.value.hint,
        repr(config),
        config.describe(),
        caplog.text,
        *capsys.readouterr(),
        json.dumps([r.body for r in server.completions]),
    ]
    assert all(KEY not in t for t in texts)
    assert "[redacted]" in str(info.value)
    # ... while the server did receive it, as the bearer token.
    assert {r.headers["authorization"] for r in server.completions} == {f"Bearer {KEY}"}


def test_placeholder_key_for_local_servers(server: ReplayServer) -> None:
    server.enqueue(Reply(content=structured(_padded())))
    config = LLMConfig.from_env(
        base_url=server.base_url, model=MODEL, env={}, timeout_s=TIMEOUT_S, max_retries=0
    )
    LLMRewriter(config).propose(_request())
    assert server.completions[0].headers["authorization"] == f"Bearer {PLACEHOLDER_KEY}"
    assert "no key" in config.describe()


def test_probe_lists_models(server: ReplayServer) -> None:
    assert probe(_config(server), timeout_s=TIMEOUT_S) is None
    message = probe(LLMConfig.from_env(base_url=server.base_url, model="other", env={}), timeout_s=TIMEOUT_S)
    assert message is not None and "does not list model 'other'" in message


def test_configuration_from_the_environment() -> None:
    env = {
        "PERFAGENT_LLM_BASE_URL": "http://127.0.0.1:9/v1",
        "PERFAGENT_LLM_MODEL": "m",
        "OPENAI_API_KEY": KEY,
    }
    config = LLMConfig.from_env(env=env)
    assert (config.endpoint, config.model, config.key_source, config.api_key) == (
        "http://127.0.0.1:9/v1",
        "m",
        "OPENAI_API_KEY",
        KEY,
    )
    assert KEY not in repr(config)
    env["PERFAGENT_LLM_API_KEY"] = "sk-own"
    assert LLMConfig.from_env(env=env).key_source == "PERFAGENT_LLM_API_KEY"
    assert LLMConfig.from_env(env=env, model="explicit").model == "explicit"
    assert LLMConfig.from_env(env={**env, "PERFAGENT_LLM_TIMEOUT": "7.5"}).timeout_s == 7.5
    with pytest.raises(BadInput):
        LLMConfig.from_env(env={**env, "PERFAGENT_LLM_TIMEOUT": "soon"})
    client = make_client(LLMConfig.from_env(env=env, timeout_s=3, max_retries=4))
    assert client.max_retries == 4 and client.timeout == 3
    unset = LLMConfig.from_env(env={})
    assert unset.availability() is not None and "PERFAGENT_LLM_BASE_URL" in (unset.availability() or "")


def test_get_rewriter_and_auto() -> None:
    unset = LLMConfig.from_env(env={})
    name, why = auto_choice(unset)
    assert name == "recipes" and "recipes backend only" in why and "PERFAGENT_LLM_MODEL" in why
    assert isinstance(get_rewriter("auto", config=unset), RecipesRewriter)
    configured = LLMConfig.from_env(base_url="http://127.0.0.1:9/v1", model="m", env={})
    assert (
        auto_choice(configured)[0] == "auto"
    )  # both backends in one loop (tests/optimize/test_backend_auto.py)
    assert isinstance(get_rewriter("llm", config=configured), LLMRewriter)
    assert get_rewriter("recipes").availability() is None
    assert get_rewriter("llm", config=unset).availability() is not None
    with pytest.raises(LLMError, match="no LLM configured"):
        get_rewriter("llm", config=unset).propose(_request())
    with pytest.raises(BadInput, match="unknown rewriter"):
        get_rewriter("magic")


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "empty"),
        ("```cuda\nx\n```\n```cuda\ny\n```", "2 code blocks"),
        ('{"new_source": 1}', "not a valid RewriteReply"),
        ("```cuda\n__device__ int x;\n```", "no __global__ kernel"),
    ],
)
def test_parse_reply_problems(content: str | None, problem: str) -> None:
    result = parse_reply(content, "cuda", SLOW_CU.read_text())
    assert isinstance(result, str) and problem in result


def test_parse_reply_accepts_json_with_a_fenced_source_and_python_checks() -> None:
    src = _padded()
    assert parse_reply(structured(f"```cuda\n{src}```"), "cuda", SLOW_CU.read_text()) == (
        src,
        "Padded the tile.",
    )
    assert (
        parse_reply(SLOW_CU.read_text(), "cuda", SLOW_CU.read_text())
        == "the reply holds no fenced code block (and no JSON object with new_source)"
    )
    bad_py = parse_reply(fenced("def f(:\n    pass", "python"), "python", "def f():\n    return 1\n")
    assert isinstance(bad_py, str) and "does not parse" in bad_py
