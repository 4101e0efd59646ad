"""Which rewriter a run uses (``auto``: recipes and llm together when configured, else recipes, said plainly)
and its settings."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

from perfagent.llm_cassette import Cassette
from perfagent.llm_client import ENV_BASE_URL, ENV_MODEL, LLMConfig
from perfagent.optimize.events import Info, ProgressCallback
from perfagent.optimize.settings import OptimizeSettings
from perfagent.rewrite import auto_choice, get_rewriter
from perfagent.rewrite.base import Rewriter
from perfagent.rewrite.combined import CombinedRewriter
from perfagent.rewrite.llm import LLMRewriter
from profilers.core_errors import LLMError

__all__ = ["ChosenRewriter", "choose_backend", "choose_rewriter", "conversation_seed"]


@dataclass(frozen=True)
class ChosenRewriter:
    """The rewriter a run uses, why, and the settings it needs."""

    rewriter: Rewriter
    name: str
    reason: str
    config: LLMConfig
    settings: OptimizeSettings
    """The run's settings, ``max_candidates`` raised to the LLM's samples."""


def choose_rewriter(
    settings: OptimizeSettings, llm_config: LLMConfig | None, emit: ProgressCallback
) -> ChosenRewriter:
    """The rewriter of ``settings.backend`` (``auto``: both when configured, else recipes, said plainly).

    Raises:
        LLMError: ``backend='llm'`` and no endpoint is configured.
    """
    config = settings.with_samples(llm_config) if llm_config is not None else settings.llm_config()
    name, reason = choose_backend(settings.backend, config)
    if name == "llm":
        wanted = max(settings.max_candidates, config.samples, config.candidates)
        settings = settings.model_copy(update={"max_candidates": wanted})
    elif name == "auto":  # the recipes' candidates and the model's samples side by side
        wanted = settings.max_candidates + max(config.samples, config.candidates)
        settings = settings.model_copy(update={"max_candidates": min(wanted, 64)})
    rewriter = get_rewriter(name, config=config)
    if isinstance(
        rewriter, LLMRewriter | CombinedRewriter
    ):  # a slow model is never silent: waiting lines and retries
        rewriter.progress = lambda message: emit(Info(message=message))
    return ChosenRewriter(rewriter=rewriter, name=name, reason=reason, config=config, settings=settings)


def conversation_seed(config: LLMConfig) -> int | None:
    """The verification seed of a recorded or replayed LLM run (None otherwise): recording draws one and
    keeps it in the cassette, replaying reads it back, so repair prompts repeat byte for byte."""
    if not config.cassette:
        return None
    cassette = Cassette(Path(config.cassette), config.cassette_mode or "replay")
    if config.cassette_mode == "record":
        seed = secrets.randbelow(2**30)
        cassette.remember("verify_seed", seed)
        return seed
    recorded = cassette.meta().get("verify_seed")
    return int(recorded) if recorded is not None else None


def choose_backend(backend: str, config: LLMConfig) -> tuple[str, str]:
    if backend == "auto":
        return auto_choice(config)
    if backend == "llm":
        reason = config.availability()
        if reason is not None:
            raise LLMError(
                reason,
                hint=f"set {ENV_BASE_URL} and {ENV_MODEL} (or --llm-base-url / --llm-model), or use --backend recipes",
            )
        return "llm", f"asked for: {config.describe()}"
    return "recipes", "asked for: deterministic recipes (offline)"
