"""`perfagent doctor` contacts the LLM endpoint (a real loopback server, the real openai client, the real CLI)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from perfagent.llm_client import LLMConfig, check_endpoint
from tests.rewrite.llm_server import MODEL, ReplayServer, Reply

REPO = Path(__file__).resolve().parents[2]
KEY = "sk-doctor-SECRET-9876543210"


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as srv:
        yield srv


def _doctor(env: dict[str, str]) -> tuple[int, dict[str, object], str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PERFAGENT_LLM_", "OPENAI_"))}
    done = subprocess.run(
        [sys.executable, "-m", "perfagent", "doctor", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env={**base, "PYTHONPATH": str(REPO), **env},
    )
    probes = {p["name"]: p for p in json.loads(done.stdout)["probes"]}
    return done.returncode, probes["LLM endpoint"], done.stdout + done.stderr


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_doctor_reports_a_reachable_endpoint_and_its_model_without_the_key(server: ReplayServer) -> None:
    rc, llm, everything = _doctor(
        {
            "PERFAGENT_LLM_BASE_URL": server.base_url,
            "PERFAGENT_LLM_MODEL": MODEL,
            "PERFAGENT_LLM_API_KEY": KEY,
        }
    )
    assert rc == 0 and llm["ok"] is True
    assert str(llm["detail"]).startswith(
        "reachable, model found"
    ) and "key from PERFAGENT_LLM_API_KEY" in str(llm["detail"])
    assert [r.path for r in server.requests] == ["/v1/models"]  # it really asked
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert KEY not in everything


def test_doctor_says_when_the_model_is_not_served(server: ReplayServer) -> None:
    _, llm, _ = _doctor({"PERFAGENT_LLM_BASE_URL": server.base_url, "PERFAGENT_LLM_MODEL": "gpt-nonexistent"})
    assert llm["ok"] is False
    assert "model NOT found" in str(llm["detail"]) and f"it has: {MODEL}" in str(llm["detail"])


def test_doctor_falls_back_to_a_one_token_completion_without_a_models_route(server: ReplayServer) -> None:
    server.serve_models = False
    server.enqueue(Reply(content="p"))
    _, llm, _ = _doctor({"PERFAGENT_LLM_BASE_URL": server.base_url, "PERFAGENT_LLM_MODEL": MODEL})
    assert llm["ok"] is True and "1-token completion" in str(llm["detail"])
    [completion] = server.completions
    assert completion.body["max_tokens"] == 1 and completion.body["model"] == MODEL


def test_doctor_reports_a_closed_port_as_unreachable() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    _, llm, _ = _doctor({"PERFAGENT_LLM_BASE_URL": url, "PERFAGENT_LLM_MODEL": MODEL})
    assert llm["ok"] is False and str(llm["detail"]).startswith("unreachable: cannot reach")


def test_doctor_reports_an_unset_model(server: ReplayServer) -> None:
    _, llm, _ = _doctor({"PERFAGENT_LLM_BASE_URL": server.base_url})
    assert llm["ok"] is False and "PERFAGENT_LLM_MODEL not set" in str(llm["detail"])
    assert not server.requests


def test_doctor_says_the_key_was_rejected(server: ReplayServer) -> None:
    config = LLMConfig.from_env(base_url=server.base_url, model=MODEL, api_key=KEY, env={})
    server.serve_models = False
    server.enqueue(Reply(status=401, error_message=f"bad key {KEY}"))
    check = check_endpoint(config, timeout_s=10.0)
    assert check.reachable and not check.ok and "rejected the API key (HTTP 401)" in check.detail
    assert KEY not in check.detail


def test_an_endpoint_that_answers_garbage_is_reachable_but_an_error(server: ReplayServer) -> None:
    server.serve_models = False
    server.enqueue(Reply(raw_body=b"<html>hello"))
    check = check_endpoint(LLMConfig.from_env(base_url=server.base_url, model=MODEL, env={}), timeout_s=10.0)
    assert check.reachable and not check.ok and "not as an OpenAI-compatible API" in check.detail
