"""Rewriters: turn one diagnosed transform into candidate sources.

``get_rewriter("recipes" | "llm" | "auto")`` returns a backend behind the ``Rewriter`` protocol
(``perfagent.rewrite.base``). ``auto`` is both backends in one loop (``CombinedRewriter``: recipes for the
transforms they cover, the model for the rest and as an extra sample on structural ones) when an endpoint
and a model are configured (PERFAGENT_LLM_BASE_URL / PERFAGENT_LLM_MODEL or explicit arguments), and
``recipes`` alone otherwise, and says which and why (``auto_choice``). Nothing heavy is imported here: the openai client is built on first
use, torch and triton never.
"""

from __future__ import annotations

from typing import Literal

from perfagent.llm_client import LLMConfig
from perfagent.rewrite.base import (
    Candidate,
    EarlierAttempt,
    FailedAttempt,
    Rewriter,
    RewriteRequest,
    TokenUsage,
)
from perfagent.workloads.base import Language
from profilers.core_errors import BadInput

__all__ = [
    "BACKENDS",
    "Candidate",
    "EarlierAttempt",
    "FailedAttempt",
    "Language",
    "RewriteRequest",
    "Rewriter",
    "TokenUsage",
    "auto_choice",
    "get_rewriter",
]

BackendChoice = Literal["recipes", "llm", "auto"]
BACKENDS: tuple[str, ...] = ("recipes", "llm", "auto")


def auto_choice(config: LLMConfig | None = None) -> tuple[str, str]:
    """(backend name, the reason in plain words) for ``auto``: 'auto' (both) or 'recipes'."""
    cfg = config if config is not None else LLMConfig.from_env()
    reason = cfg.availability()
    if reason is None:
        return "auto", (
            f"using recipes and the llm backend together: {cfg.describe()} (recipes where they apply, the model "
            "for the rest and as an extra sample on structural transforms)"
        )
    return "recipes", f"using the recipes backend only: {reason}"


def get_rewriter(name: str = "auto", *, config: LLMConfig | None = None) -> Rewriter:
    """The rewriter backend called ``name``.

    Args:
        name: 'recipes', 'llm' or 'auto' (both when an endpoint is configured, else recipes).
        config: LLM settings (default: from the environment).

    Raises:
        BadInput: unknown name (the message lists the known ones).
    """
    if name == "auto":
        name, _ = auto_choice(config)
        if name == "auto":
            # a backend loads when it is chosen: recipes pull in tree-sitter, llm the prompt tables
            from perfagent.rewrite.combined import CombinedRewriter
            from perfagent.rewrite.llm import LLMRewriter
            from perfagent.rewrite.recipes_backend import RecipesRewriter

            return CombinedRewriter(RecipesRewriter(), LLMRewriter(config))
    if name == "recipes":
        # tree-sitter and every recipe: loaded only when the recipes backend is chosen
        from perfagent.rewrite.recipes_backend import RecipesRewriter

        return RecipesRewriter()
    if name == "llm":
        # the prompt tables: loaded only when the llm backend is chosen
        from perfagent.rewrite.llm import LLMRewriter

        return LLMRewriter(config)
    raise BadInput(f"unknown rewriter '{name}'", hint=f"use one of: {', '.join(BACKENDS)}")
