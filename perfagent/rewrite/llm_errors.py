"""What the LLM endpoint's failures mean: which are retried and after how long (``retry_after``), and each
as an ``LLMError`` with its cause and the next step, never the API key (``llm_error``, ``not_an_api``)."""

from __future__ import annotations

from perfagent.llm_client import ENV_API_KEY, ENV_BASE_URL, ENV_TIMEOUT, LLMConfig
from profilers.core_errors import LLMError

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
"""HTTP statuses retried (timeouts, conflicts, rate limits, server errors)."""
MAX_RETRY_AFTER_S = 60.0
"""Longest ``Retry-After`` honoured, s (a server asking for more is retried after this)."""


def retry_after(exc: Exception) -> float | None:
    """The server's ``Retry-After`` (or ``retry-after-ms``) in seconds, capped; None when it sent none."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return min(max(float(value) * scale, 0.0), MAX_RETRY_AFTER_S)
        except ValueError:
            continue  # an HTTP date: fall back to the backoff
    return None


def not_an_api(cfg: LLMConfig, exc: Exception) -> LLMError:
    """A reply that is not an OpenAI chat-completions response (not JSON, wrong shape), as an ``LLMError``."""
    return LLMError(
        cfg.redact(
            f"the LLM endpoint {cfg.endpoint} did not answer with an OpenAI chat-completions response "
            f"({type(exc).__name__}: {str(exc)[:120]})"
        ),
        hint=f"check that {ENV_BASE_URL} points at an OpenAI-compatible API (it usually ends in /v1)",
    )


def llm_error(cfg: LLMConfig, exc: Exception) -> LLMError:
    """An ``openai`` failure as an ``LLMError``: the cause in the user's terms and the next step, never the key."""
    # openai is an optional extra and takes about a second to import: only an LLM call loads it
    import openai

    where = cfg.describe()
    if isinstance(exc, openai.APITimeoutError):
        return LLMError(
            f"the LLM endpoint did not answer within {cfg.timeout_s:g} s ({where}, {cfg.max_retries} retries)",
            hint=f"raise the timeout ({ENV_TIMEOUT} or --llm-timeout), use a faster model, or check the server",
        )
    if isinstance(exc, openai.APIConnectionError):
        return LLMError(
            f"cannot reach the LLM endpoint {cfg.endpoint}",
            hint=f"start the server or fix {ENV_BASE_URL} (it usually ends in /v1)",
        )
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        return LLMError(
            f"the LLM endpoint rejected the API key (HTTP {exc.status_code}, {where})",
            hint=f"set {ENV_API_KEY} (or OPENAI_API_KEY) to a valid key",
        )
    if isinstance(exc, openai.NotFoundError):
        return LLMError(
            f"the LLM endpoint answered 404 ({where})",
            hint=f"check the model name and that {ENV_BASE_URL} includes the API prefix (/v1)",
        )
    if isinstance(exc, openai.RateLimitError):
        return LLMError(
            f"the LLM endpoint kept rate-limiting after {cfg.max_retries} retries ({where})",
            hint="wait, or raise PERFAGENT_LLM_MAX_RETRIES",
        )
    if isinstance(exc, openai.APIStatusError):
        body = cfg.redact(str(exc.message))[:200]
        return LLMError(
            f"the LLM endpoint answered HTTP {exc.status_code}: {body} ({where})",
            hint="check the server's log",
        )
    return LLMError(
        cfg.redact(f"LLM request failed: {type(exc).__name__} ({where})"), hint="check the endpoint"
    )
