"""The committed LLM cassettes (tests/data/llm_cassettes, recorded by scripts/record_llm_cassettes.py against
the loopback server with scripted replies) replayed with no server: each multi-round optimize run over a
bundled example proposes the same candidates byte for byte and reaches the same verdicts."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

import perfagent
from perfagent.llm_client import LLMConfig, cassette_config

REPO = Path(__file__).resolve().parents[2]
CASSETTES = sorted(p for p in (REPO / "tests" / "data" / "llm_cassettes").iterdir() if p.is_dir())


def test_three_examples_are_recorded() -> None:
    assert len(CASSETTES) >= 3
    for cassette in CASSETTES:
        meta = json.loads((cassette / "expected.json").read_text())
        assert "scripted replies" in meta["recorded_against"]
        assert meta["requests"] >= 2 and len(meta["candidates"]) >= 2


@pytest.mark.parametrize("cassette", CASSETTES, ids=[c.name for c in CASSETTES])
def test_replay_reproduces_the_recorded_candidates(cassette: Path, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    meta = json.loads((cassette / "expected.json").read_text())
    if meta["problem"] and "triton" in meta["target"]:
        pytest.importorskip("triton")
    offline = LLMConfig.from_env(env={}, timeout_s=5.0, max_retries=0, backoff_s=0.0)  # no endpoint at all
    record = perfagent.optimize(
        REPO / meta["target"],
        problem=REPO / meta["problem"] if meta["problem"] else None,
        backend="llm",
        transforms=meta["transforms"],
        iterations=2,
        device="cpu",
        seeds=1,
        repairs=1,
        out=tmp_path / "run",
        llm_config=cassette_config(offline, record=None, replay=str(cassette)),
    )
    got = [
        {
            "id": c.id,
            "transform": c.transform,
            "verdict": c.verdict,
            "repair_of": c.repair_of,
            "source_sha256": hashlib.sha256((c.source or "").encode()).hexdigest(),
        }
        for c in record.candidates
    ]
    assert got == meta["candidates"]
