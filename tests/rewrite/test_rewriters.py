"""The Rewriter interface, the recipes backend as a whole, and the request/candidate models."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from knowledge.transforms import catalog
from perfagent.rewrite import get_rewriter
from perfagent.rewrite.base import (
    Candidate,
    FailedAttempt,
    Rewriter,
    RewriteRequest,
    TokenUsage,
    candidate_id,
)
from perfagent.rewrite.llm import LLMRewriter
from perfagent.rewrite.recipes import RECIPES, recipes_for
from perfagent.rewrite.recipes_backend import RecipesRewriter
from tests.rewrite.helpers import DATA, EXAMPLES, request

TRANSPOSE = EXAMPLES / "cuda" / "02_transpose_bank_conflicts" / "slow.cu"


def test_backends_satisfy_the_protocol() -> None:
    assert isinstance(RecipesRewriter(), Rewriter)
    assert isinstance(LLMRewriter(), Rewriter)
    assert get_rewriter("recipes").name == "recipes"


def test_every_recipe_implements_catalogued_transforms() -> None:
    assert set(RECIPES) == {
        "smem-padding",
        "launch-config",
        "triton-config",
        "grid-swizzle",
        "restrict-pointers",
        "loop-unroll",
        "vectorize-access",
        "launch-geometry",
        "thread-map-swap",
        "chunk-interleave",
        "transpose-tile",
        "transpose-inplace",
        "permute-rows",
        "chunk-stride",
        "smem-pad-index",
        "privatize-atomics",
        "cooperative-row",
        "cooperative-scan",
        "sequential-reduction",
        "smem-tiling",
        "register-tiling",
        "thread-coarsening",
        "async-copy",
        "grid-swizzle-cuda",
        "smem-swizzle",
        "fast-math",
        "demote-double",
        "kernel-fusion",
        "divergent-reduction",
        "relax-launch-bounds",
        "block-aggregate-atomics",
        "warp-shuffle-scan",
        "register-streaming",
        "modulo-to-select",
        "permute-tile",
        "stencil-rows",
    }
    for recipe in RECIPES.values():
        assert recipe.transforms and all(t in catalog() for t in recipe.transforms)
        assert recipe.summary
    assert [r.name for r in recipes_for("launch-config", "triton")] == ["triton-config"]
    assert [r.name for r in recipes_for("launch-config", "cuda")] == ["launch-config", "launch-geometry"]


def test_recipes_backend_explains_what_it_cannot_do() -> None:
    rw = RecipesRewriter()
    no_recipe = rw.applies(request(TRANSPOSE, "use-tensor-cores"))
    assert (
        no_recipe is not None
        and "no deterministic recipe for transform 'use-tensor-cores'" in no_recipe
        and "llm" in no_recipe
    )
    wrong_lang = rw.applies(request(TRANSPOSE, "restrict-pointers").model_copy(update={"language": "triton"}))
    assert wrong_lang is not None and "edit cuda sources, not triton" in wrong_lang
    precondition = rw.applies(request(EXAMPLES / "cuda" / "01_transpose_naive" / "slow.cu", "smem-padding"))
    assert precondition is not None and "smem-padding: no __shared__ array" in precondition
    assert rw.propose(request(TRANSPOSE, "use-tensor-cores")) == []


def test_recipes_backend_is_deterministic_and_bounded() -> None:
    rw = RecipesRewriter()
    req = request(EXAMPLES / "cuda" / "03_reduction_divergent" / "slow.cu", "launch-config", max_candidates=3)
    first, second = rw.propose(req), rw.propose(req)
    assert [c.id for c in first] == [c.id for c in second] and len(first) == 3
    assert len({c.id for c in first}) == 3
    for cand in first:
        assert cand.id == candidate_id("launch-config", "recipes", cand.source)
        assert cand.id.startswith("launch-config/recipes/") and cand.tokens is None


def test_models_round_trip_and_accept_failure_pairs() -> None:
    req = request(
        TRANSPOSE,
        "smem-padding",
        failed_attempts=[("smem-padding/llm/abc", "not faster: 1.01x within noise")],
    )
    assert req.failed_attempts == [
        FailedAttempt(candidate_id="smem-padding/llm/abc", reason="not faster: 1.01x within noise")
    ]
    assert RewriteRequest.model_validate_json(req.model_dump_json()) == req
    [cand] = RecipesRewriter().propose(req)
    again = Candidate.model_validate(json.loads(cand.model_dump_json()))
    assert again == cand
    with pytest.raises(ValidationError):
        RewriteRequest(source="x", language="fortran", transform="smem-padding")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        RewriteRequest(source="x", language="cuda", transform="smem-padding", max_candidates=0)
    usage = TokenUsage(prompt_tokens=3, completion_tokens=4, requests=1) + TokenUsage(
        prompt_tokens=1, completion_tokens=1, requests=1
    )
    assert (usage.total_tokens, usage.requests) == (9, 2)


def test_recipes_for_triton_dispatch_by_language() -> None:
    rw = RecipesRewriter()
    cands = rw.propose(
        request(DATA / "triton_matmul_rowmajor.py", "launch-config", language="triton", max_candidates=2)
    )
    assert [c.recipe for c in cands] == ["triton-config", "triton-config"]
    assert rw.applies(request(DATA / "triton_matmul_rowmajor.py", "grid-swizzle", language="python")) is None
