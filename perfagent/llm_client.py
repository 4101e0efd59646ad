"""The one place that configures and builds the OpenAI-compatible client.

Any server speaking the OpenAI chat-completions protocol works: OpenAI, vLLM, Ollama, llama.cpp
server, LM Studio. Configuration comes from explicit arguments (CLI flags) first, then the
environment:

- ``PERFAGENT_LLM_BASE_URL``: the endpoint, e.g. ``http://localhost:8000/v1``;
- ``PERFAGENT_LLM_MODEL``: the model name the server knows;
- ``PERFAGENT_LLM_API_KEY``, falling back to ``OPENAI_API_KEY``; local servers need none (a placeholder
  key is sent);
- ``PERFAGENT_LLM_TIMEOUT`` (seconds per request), ``PERFAGENT_LLM_MAX_RETRIES`` (the client's own
  retries with exponential backoff on connection errors, timeouts, 408/409/429 and 5xx).

The API key is held in a field excluded from ``repr`` and never written to logs, records, reports or
error messages: ``LLMConfig.redact`` scrubs it from any text that crosses the boundary. ``openai`` is
imported only when a client is built.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

from perfagent.llm_cassette import Cassette, CassetteClient
from profilers.core_errors import BadInput
from profilers.settings import TIMEOUTS

if TYPE_CHECKING:
    import openai

ENV_BASE_URL = "PERFAGENT_LLM_BASE_URL"
ENV_MODEL = "PERFAGENT_LLM_MODEL"
ENV_API_KEY = "PERFAGENT_LLM_API_KEY"
ENV_FALLBACK_API_KEY = "OPENAI_API_KEY"
ENV_TIMEOUT = "PERFAGENT_LLM_TIMEOUT"
ENV_MAX_RETRIES = "PERFAGENT_LLM_MAX_RETRIES"
PLACEHOLDER_KEY = "sk-no-key"
"""Sent to servers that need no key (the client refuses to start without one)."""
OPENAI_BASE_URL = "https://api.openai.com/v1"
DEFAULT_TIMEOUT_S = TIMEOUTS.llm_request_s
DEFAULT_MAX_RETRIES = 2
REDACTED = "[redacted]"


@dataclass(frozen=True)
class LLMConfig:
    """How to reach the model. Build with ``LLMConfig.from_env(...)``."""

    base_url: str | None = None
    """Endpoint root including the API prefix (``http://host:port/v1``). None: OpenAI's, when a key is set."""
    model: str | None = None
    """Model name as the server knows it."""
    api_key: str | None = field(default=None, repr=False, compare=False)
    """Secret. Never logged, stored or shown."""
    key_source: str | None = None
    """Where the key came from ('PERFAGENT_LLM_API_KEY', 'OPENAI_API_KEY', 'argument'), for messages."""
    timeout_s: float = DEFAULT_TIMEOUT_S
    """Per-request timeout, s (connect + read)."""
    max_retries: int = DEFAULT_MAX_RETRIES
    """The openai client's retries (exponential backoff) on connection errors, timeouts, 429 and 5xx."""
    reply_retries: int = 2
    """Our own bounded retries when a reply arrives but holds no usable source (malformed)."""
    backoff_s: float = 1.0
    """Delay before the first malformed-reply retry, s; doubles on each further retry."""
    structured_output: bool = True
    """Ask for ``response_format=json_schema`` first (falls back to plain chat when the server answers 400)."""
    candidates: int = 1
    """Older spelling of ``samples`` (the larger of the two is used)."""
    samples: int = 1
    """Candidates asked for per rewrite request (``--samples``): ``n`` when the server honours it, else
    one request per sample at rising temperatures; repeats (same normalised source) are dropped."""
    temperature: float | None = 0.2
    """Sampling temperature sent with each request (None: the server's default)."""
    price_per_million: tuple[float, float] | None = None
    """(prompt, completion) price per 1M tokens: each candidate's and the run's token cost is computed."""
    cassette: str | None = None
    """A cassette folder (``perfagent.llm_cassette``): every exchange is recorded there, or replayed from it."""
    cassette_mode: Literal["record", "replay"] | None = None
    """'record' (talk to the endpoint and store), 'replay' (answer from the cassette, no network)."""

    @classmethod
    def from_env(
        cls,
        *,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        timeout_s: float | None = None,
        max_retries: int | None = None,
        env: Mapping[str, str] | None = None,
        **options: float | int | bool | None,
    ) -> LLMConfig:
        """Explicit arguments first, then the environment.

        Args:
            base_url, model, api_key, timeout_s, max_retries: override the environment.
            env: the environment to read (default ``os.environ``).
            **options: other ``LLMConfig`` fields (reply_retries, backoff_s, structured_output, ...).

        Raises:
            BadInput: a timeout or retry count in the environment is not a number.
        """
        environ = os.environ if env is None else env
        key_source: str | None = None
        if api_key:
            key_source = "argument"
        elif environ.get(ENV_API_KEY):
            api_key, key_source = environ[ENV_API_KEY], ENV_API_KEY
        elif environ.get(ENV_FALLBACK_API_KEY):
            api_key, key_source = environ[ENV_FALLBACK_API_KEY], ENV_FALLBACK_API_KEY
        if timeout_s is None and environ.get(ENV_TIMEOUT):
            timeout_s = _number(environ[ENV_TIMEOUT], ENV_TIMEOUT)
        if max_retries is None and environ.get(ENV_MAX_RETRIES):
            max_retries = int(_number(environ[ENV_MAX_RETRIES], ENV_MAX_RETRIES))
        config = cls(
            base_url=(base_url or environ.get(ENV_BASE_URL) or None),
            model=(model or environ.get(ENV_MODEL) or None),
            api_key=api_key or None,
            key_source=key_source,
            timeout_s=DEFAULT_TIMEOUT_S if timeout_s is None else float(timeout_s),
            max_retries=DEFAULT_MAX_RETRIES if max_retries is None else int(max_retries),
        )
        return replace(config, **options) if options else config  # type: ignore[arg-type]

    @property
    def endpoint(self) -> str | None:
        """The URL requests go to (OpenAI's when only a key is configured)."""
        if self.base_url:
            return self.base_url.rstrip("/")
        return OPENAI_BASE_URL if self.api_key else None

    @property
    def configured(self) -> bool:
        return self.availability() is None

    def availability(self) -> str | None:
        """None when an endpoint and a model are configured, else what to set."""
        if self.cassette_mode == "replay":
            return None if self.model else f"the cassette {self.cassette} names no model: pass --llm-model"
        if not self.model:
            return (
                f"no LLM configured: set {ENV_BASE_URL} and {ENV_MODEL} (or --llm-base-url / --llm-model); "
                "without them only the recipes backend runs"
            )
        if self.endpoint is None:
            return f"no LLM endpoint: set {ENV_BASE_URL} (e.g. http://localhost:8000/v1) or an API key for OpenAI"
        return None

    def describe(self) -> str:
        """'model X at URL (key from ENV)' — never the key itself."""
        if self.cassette_mode == "replay":
            return f"model '{self.model}' replayed from {self.cassette}"
        key = f"key from {self.key_source}" if self.key_source else "no key (placeholder sent)"
        return f"model '{self.model}' at {self.endpoint} ({key})"

    def redact(self, text: str) -> str:
        """``text`` with the API key (if any) replaced by '[redacted]'."""
        if self.api_key and len(self.api_key) >= 4:
            return text.replace(self.api_key, REDACTED)
        return text


def _number(value: str, name: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise BadInput(
            f"{name}={value!r} is not a number", hint=f"set {name} to seconds/count, e.g. 60"
        ) from None


def make_client(config: LLMConfig) -> openai.OpenAI:
    """The ``openai.OpenAI`` client for ``config`` (timeout and client-side retries configured).

    Raises:
        BadInput: the configuration names no endpoint or model.
    """
    reason = config.availability()
    if reason is not None:
        raise BadInput(reason)
    # openai is an optional extra and takes about a second to import: only an LLM call loads it
    import openai

    inner = (
        None
        if config.cassette_mode == "replay"
        else openai.OpenAI(
            base_url=config.endpoint,
            api_key=config.api_key or PLACEHOLDER_KEY,
            timeout=config.timeout_s,
            max_retries=config.max_retries,
        )
    )
    if config.cassette_mode is None or config.cassette is None:
        assert inner is not None
        return inner
    cassette = Cassette(Path(config.cassette), config.cassette_mode)
    client = CassetteClient(cassette, inner, model=config.model, endpoint=config.endpoint)
    # Duck-typed: the rewriter only calls chat.completions.create on it.
    return cast("openai.OpenAI", client)


def cassette_config(config: LLMConfig, *, record: str | None, replay: str | None) -> LLMConfig:
    """``config`` set up for ``--llm-record DIR`` or ``--llm-replay DIR`` (the model from the cassette
    when none is configured)."""
    if record and replay:
        raise BadInput("--llm-record and --llm-replay exclude each other", hint="choose one")
    if record:
        return replace(config, cassette=record, cassette_mode="record")
    if replay:
        meta = Cassette(Path(replay), "replay").meta()
        return replace(
            config, cassette=replay, cassette_mode="replay", model=config.model or meta.get("model")
        )
    return config


PROBE_TIMEOUT_S = 5.0
"""Limit of each request ``check_endpoint`` makes, s."""


@dataclass(frozen=True)
class EndpointCheck:
    """What one cheap request to the endpoint showed (``perfagent doctor``). No field holds the key."""

    reachable: bool
    """The server answered HTTP at all."""
    model_found: bool | None
    """The model is listed by ``GET /models`` or answered a 1-token completion (None: not determined)."""
    detail: str
    """One line: what was asked and what came back (or why it failed), key redacted."""
    via: str = ""
    """'GET /models' or '1-token completion' ('' when nothing was sent)."""

    @property
    def ok(self) -> bool:
        return self.reachable and self.model_found is True


def check_endpoint(config: LLMConfig, *, timeout_s: float = PROBE_TIMEOUT_S) -> EndpointCheck:
    """Contact the endpoint with one cheap request: ``GET /models``, else a 1-token chat completion.

    Never raises for an endpoint problem (it is the check's answer); never puts the key in ``detail``.
    """
    reason = config.availability()
    if reason is not None:
        return EndpointCheck(reachable=False, model_found=None, detail=reason)
    # openai is an optional extra and takes about a second to import: only an LLM call loads it
    import openai

    client = make_client(replace(config, timeout_s=timeout_s, max_retries=0))
    where = config.endpoint
    try:
        models = [m.id for m in client.models.list()]
    except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
        return EndpointCheck(
            True,
            None,
            f"{where} rejected the API key (HTTP {exc.status_code}): set {ENV_API_KEY}",
            "GET /models",
        )
    except openai.APIStatusError:  # no /models route (some servers): ask the model itself
        return _check_by_completion(client, config, timeout_s)
    except openai.APITimeoutError:
        return EndpointCheck(False, None, f"{where} did not answer within {timeout_s:g} s", "GET /models")
    except openai.APIConnectionError as exc:
        cause = exc.__cause__ or exc
        return EndpointCheck(
            False, None, config.redact(f"cannot reach {where} ({type(cause).__name__})"), "GET /models"
        )
    except (openai.APIError, ValueError, TypeError, AttributeError) as exc:
        return EndpointCheck(
            True,
            None,
            config.redact(
                f"{where} answered GET /models, but not as an OpenAI-compatible API ({type(exc).__name__})"
            ),
            "GET /models",
        )
    if config.model in models:
        return EndpointCheck(True, True, f"{where} lists model '{config.model}'", "GET /models")
    if not models:
        return _check_by_completion(client, config, timeout_s)
    shown = ", ".join(models[:8]) + (" …" if len(models) > 8 else "")
    return EndpointCheck(
        True,
        False,
        f"{where} is reachable but does not list model '{config.model}' (it has: {shown})",
        "GET /models",
    )


def _check_by_completion(client: openai.OpenAI, config: LLMConfig, timeout_s: float) -> EndpointCheck:
    # openai is an optional extra and takes about a second to import: only an LLM call loads it
    import openai

    where, via = config.endpoint, "1-token completion"
    try:
        client.chat.completions.create(
            model=config.model or "", messages=[{"role": "user", "content": "ping"}], max_tokens=1
        )
    except openai.NotFoundError:
        return EndpointCheck(
            True,
            False,
            f"{where} answered 404 to a completion for model '{config.model}': unknown model or path",
            via,
        )
    except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
        return EndpointCheck(
            True, None, f"{where} rejected the API key (HTTP {exc.status_code}): set {ENV_API_KEY}", via
        )
    except openai.APIStatusError as exc:
        return EndpointCheck(
            True, None, config.redact(f"{where} answered HTTP {exc.status_code} to a completion"), via
        )
    except openai.APITimeoutError:
        return EndpointCheck(False, None, f"{where} did not answer within {timeout_s:g} s", via)
    except openai.APIConnectionError as exc:
        cause = exc.__cause__ or exc
        return EndpointCheck(
            False, None, config.redact(f"cannot reach {where} ({type(cause).__name__})"), via
        )
    except (openai.APIError, ValueError, TypeError, AttributeError) as exc:
        return EndpointCheck(
            True,
            None,
            config.redact(f"{where} answered, but not as an OpenAI-compatible API ({type(exc).__name__})"),
            via,
        )
    return EndpointCheck(
        True, True, f"{where} answered a 1-token completion from model '{config.model}'", via
    )


def probe(config: LLMConfig, *, timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
    """``check_endpoint`` as None (the endpoint answers and knows the model) or why not."""
    check = check_endpoint(config, timeout_s=timeout_s)
    return None if check.ok else check.detail
