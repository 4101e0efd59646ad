"""``--backend auto`` with an endpoint configured: the recipes and the model in one loop.

The GPU half is the simulated GPU of conftest.py (real recorded ncu profiles, stubbed timing: a padded tile
is 1.6x faster); the model is the real openai client against the loopback server of
tests/rewrite/llm_server.py. Recipes answer the transforms they cover, the model the rest, and on a
structural transform both propose; the record says who produced each candidate and who won each step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rewrite.llm_server import MODEL, ReplayServer, Reply, structured

import perfagent
from perfagent.llm_client import LLMConfig
from perfagent.optimize.render import render_text
from perfagent.rewrite import auto_choice, get_rewriter
from perfagent.rewrite.base import RewriteRequest
from perfagent.rewrite.combined import CombinedRewriter
from profilers.core_errors import LLMError
from tests.optimize.helpers import TRANSPOSE, copy_example

SLOW = (TRANSPOSE / "slow.cu").read_text()
# the model's smem-padding sample: a different (unpadded) staging of the tile, so the recipe's pad wins
MODEL_STAGING = SLOW.replace("int x = blockIdx.x", "const int x0 = 0;\n    int x = x0 + blockIdx.x", 1)


def _config(server: ReplayServer) -> LLMConfig:
    return LLMConfig.from_env(
        base_url=server.base_url, model=MODEL, api_key="sk-auto", env={}, timeout_s=10.0, max_retries=0
    )


def test_auto_is_both_backends_when_an_endpoint_is_configured() -> None:
    configured = LLMConfig.from_env(base_url="http://127.0.0.1:9/v1", model=MODEL, env={})
    assert auto_choice(configured)[0] == "auto"
    assert isinstance(get_rewriter("auto", config=configured), CombinedRewriter)
    assert auto_choice(LLMConfig.from_env(env={}))[0] == "recipes"


def test_who_is_asked_recipes_for_covered_model_for_the_rest_both_on_structural() -> None:
    configured = LLMConfig.from_env(base_url="http://127.0.0.1:9/v1", model=MODEL, env={})
    both = get_rewriter("auto", config=configured)
    assert isinstance(both, CombinedRewriter)

    def asked(transform: str) -> list[str]:
        return both.askers(RewriteRequest(source=SLOW, language="cuda", transform=transform))

    assert asked("smem-padding") == ["recipes", "llm"]  # structural, a recipe applies: both
    assert asked("restrict-pointers") == ["recipes"]  # tuning, a recipe applies: the recipe alone
    assert asked("thread-coarsening") == ["llm"]  # no recipe: the model


def test_a_failing_model_does_not_stop_the_recipe_candidates(tmp_path: Path) -> None:
    with ReplayServer() as server:
        server.enqueue(Reply(status=500, error_message="model down"))
        both = get_rewriter("auto", config=_config(server))
        assert isinstance(both, CombinedRewriter)
        request = RewriteRequest(source=SLOW, language="cuda", transform="smem-padding")
        found = both.propose(request)
        assert found and {c.backend for c in found} == {"recipes"}
        [error] = both.take_errors()
        assert "HTTP 500" in error and both.take_errors() == []
        server.enqueue(Reply(status=500, error_message="model down"))
        try:
            both.propose(request.model_copy(update={"transform": "thread-coarsening"}))
        except LLMError as exc:  # nothing from a recipe: the model's failure is the answer
            assert "HTTP 500" in exc.message
        else:
            raise AssertionError("a transform only the model covers must raise the model's error")


def test_recipes_and_model_compete_in_one_loop_and_the_record_says_who_won(
    tmp_path: Path, simulated_gpu: dict[str, Any]
) -> None:
    folder = copy_example(TRANSPOSE, tmp_path)
    with ReplayServer() as server:
        server.enqueue(
            Reply(content=structured(MODEL_STAGING, "Staged the tile differently.")),
            Reply(
                content=structured(MODEL_STAGING.replace("[TILE_DIM][TILE_DIM]", "[TILE_DIM][TILE_DIM + 1]"))
            ),
        )
        record = perfagent.optimize(
            folder / "slow.cu",
            backend="auto",
            transforms=["smem-padding", "thread-coarsening"],
            iterations=2,
            repairs=0,
            out=tmp_path / "run",
            llm_config=_config(server),
        )
        asked = [r.prompt_text for r in server.completions if r.answered == 200]
    result = record.optimize
    assert result is not None and result.backend == "auto"
    first = [c for c in record.candidates if c.iteration == 1]
    assert {c.backend for c in first} == {"recipes", "llm"}  # one batch, both backends, one accept rule
    padding = next(p for p in result.plan if p.transform == "smem-padding")
    assert padding.backends == ["recipes", "llm"]
    assert padding.winner is not None and padding.winner_backend == "recipes"
    winner = next(c for c in record.candidates if c.id == padding.winner)
    assert winner.accepted and winner.backend == "recipes"
    model_sample = next(c for c in first if c.backend == "llm")
    assert not model_sample.accepted and model_sample.verdict == "not-faster"
    coarsening = next(p for p in result.plan if p.transform == "thread-coarsening")
    assert coarsening.backends == ["llm"]  # no recipe covers it: the model alone
    assert len(asked) == 2 and "thread-coarsening" in asked[1]
    text = render_text(result)
    assert f"smem-padding: recipes + llm → {padding.winner} (recipes)" in text
    # an old record (no backends/winner fields) still loads
    data = record.model_dump(mode="json")
    for step in data["optimize"]["plan"]:
        for key in ("backends", "winner", "winner_backend"):
            step.pop(key)
    assert perfagent.RunRecord.model_validate(data).optimize is not None
