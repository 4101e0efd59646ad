"""The ``llm`` backend: one targeted transform per request to any OpenAI-compatible endpoint.

Each request carries the catalog entry, the finding's evidence, the hardware, the source and earlier
failures (``perfagent.rewrite.prompt``). The reply is asked for as structured output
(``response_format={"type": "json_schema", ...}`` from ``RewriteReply``); a server that rejects that
with HTTP 400 is asked again in plain chat, and from then on only in plain chat. A reply is usable when
it is a ``RewriteReply`` JSON object, or content holding exactly one fenced code block with the complete
new source (``perfagent.rewrite.llm_reply`` parses and checks replies); anything else is answered
with a repair message, at most ``reply_retries`` times with doubling backoff. Transport problems
(timeouts, connection errors, 408/409/429, 5xx) are retried here, ``max_retries`` times, each retry
announced through ``progress``; while a request is in flight ``progress`` hears "waiting for the model
(N s)" every ``WAIT_TICK_S``, so a stalled endpoint is never silent. A reply that is not an OpenAI
chat-completions response (not JSON, wrong shape) is an ``LLMError`` too. Token usage of every reply is
summed into the candidate. Failures raise ``LLMError`` (exit code 5) with the cause and the next step,
never the API key.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from knowledge.transforms import catalog
from perfagent.llm_client import ENV_BASE_URL, LLMConfig, make_client
from perfagent.rewrite import launch_reply, prompt
from perfagent.rewrite.base import (
    WRITE_KERNEL,
    Candidate,
    ParamValue,
    RewriteRequest,
    TokenUsage,
    make_candidate,
)
from perfagent.rewrite.llm_errors import RETRY_STATUS, llm_error, not_an_api, retry_after
from perfagent.rewrite.llm_reply import (
    ParsedReply,
    launch_key,
    normalised,
    parse_full,
    reply_schema,
    response_choices,
    response_usage,
)
from perfagent.workloads.base import Language
from profilers.core_errors import LLMError

if TYPE_CHECKING:
    import openai

log = logging.getLogger(__name__)
WAIT_TICK_S = 15.0
"""How often a request in flight reports that it is still waiting, s."""


_Sample = tuple[ParsedReply, TokenUsage, dict[str, ParamValue]]
"""A usable sample: the parsed reply, the tokens it alone cost, and its params (sample index, temperature)."""


class _Default:
    """The configured value (``LLMConfig.temperature``), as opposed to an explicit None (the server's)."""


DEFAULT = _Default()


class LLMRewriter:
    """Rewrites through an OpenAI-compatible chat-completions endpoint."""

    name = "llm"

    def __init__(
        self,
        config: LLMConfig | None = None,
        *,
        client: openai.OpenAI | None = None,
        sleep: Callable[[float], None] = time.sleep,
        progress: Callable[[str], None] | None = None,
        wait_tick_s: float = WAIT_TICK_S,
    ) -> None:
        """
        Args:
            config: endpoint, model, key and limits (default: ``LLMConfig.from_env()``).
            client: a prepared ``openai.OpenAI`` (default: built from ``config`` on first use, without
                the client's own retries: this class retries and says so).
            sleep: the backoff clock (tests pass a no-op).
            progress: receives "waiting for the model (N s)" while a request is in flight and one line
                per retry (may be set later: ``rewriter.progress = ...``).
            wait_tick_s: seconds between two "waiting" lines.
        """
        self.config = config if config is not None else LLMConfig.from_env()
        self._client = client
        self._sleep = sleep
        self._structured = self.config.structured_output
        self._n_supported: bool | None = None
        """Whether the endpoint honours ``n`` (None: not asked yet)."""
        self.duplicates_dropped = 0
        """Samples dropped because their normalised source repeated another (or the current source)."""
        self.progress = progress
        self.wait_tick_s = wait_tick_s

    @property
    def structured(self) -> bool:
        """Whether structured output is still being requested (False after a server rejected it)."""
        return self._structured

    def availability(self) -> str | None:
        return self.config.availability()

    def applies(self, request: RewriteRequest) -> str | None:
        entry = catalog().get(request.transform)
        if entry is None:
            return f"unknown transform '{request.transform}'"
        if "llm" not in entry.backends:
            return f"transform '{request.transform}' is recipes-only in the catalog"
        if request.transform == WRITE_KERNEL and request.kernel_language is None:
            return (
                "write-kernel is for a plain-PyTorch KernelBench problem (the loop plans it with --language)"
            )
        return self.availability()

    def propose(self, request: RewriteRequest) -> list[Candidate]:
        """At most ``min(samples, request.max_candidates)`` candidates (``config.samples``).

        One sample: one request. Several: one request with ``n`` = samples when the server honours it
        (remembered), else one request per sample at rising temperatures (``sample_temperature``).
        Samples whose normalised source (comments and whitespace stripped, ``normalised``) repeats an
        earlier sample or the current source are dropped before any GPU time; ``duplicates_dropped``
        counts them over the rewriter's life.

        Raises:
            LLMError: not configured, unreachable, timed out, key rejected, or no usable reply
                after ``reply_retries`` repairs.
        """
        reason = self.applies(request)
        if reason is not None:
            raise LLMError(
                reason, hint=f"set {ENV_BASE_URL} and PERFAGENT_LLM_MODEL, or use --backend recipes"
            )
        count = min(max(self.config.samples, self.config.candidates), request.max_candidates)
        if count == 1:
            return [self._one(request)]
        return self._samples(request, count)

    def sample_temperature(self, index: int) -> float | None:
        """The temperature of sample ``index`` (0-based) when samples are separate requests: the configured
        one first, then 0.25 higher each, at most 1.2 (the server's default when none is configured)."""
        base = self.config.temperature
        if index == 0:
            return base
        start = 0.2 if base is None else base
        return round(min(start + 0.25 * index, max(1.2, start)), 2)

    def _samples(self, request: RewriteRequest, count: int) -> list[Candidate]:
        found: list[_Sample] = []
        spent, done = TokenUsage(), 0
        if self._n_supported is not False:
            done, spent = self._n_choices(request, count, found)
        error = self._one_by_one(request, range(done, count), count, found)
        if not found and error is not None:
            raise error
        if not found:  # n samples, none usable: one request with its repair conversation
            cand = self._one(request)
            found.append(
                (ParsedReply(cand.source, cand.description, cand.launch), cand.tokens or TokenUsage(), {})
            )
        return self._distinct(request, found, spent, count)

    def _n_choices(self, request: RewriteRequest, count: int, found: list[_Sample]) -> tuple[int, TokenUsage]:
        """One request for ``count`` choices (``n``); the usable ones go into ``found``.

        Returns (the choices answered, the tokens spent). An endpoint that answers fewer choices than asked
        is asked one sample a request from then on.
        """
        entry = catalog()[request.transform]
        messages = prompt.build_messages(request, entry, structured=self._structured)
        choices, used, _ = self._complete(request, entry, messages, n=count)
        if len(choices) < count and self._n_supported is None:
            log.info(
                "the endpoint answered %d of n=%d choices: sampling by separate requests", len(choices), count
            )
            self._n_supported = False
        elif len(choices) >= count:
            self._n_supported = True
        for index, (content, finish) in enumerate(choices[:count]):
            parsed = parse_full(
                content, request.language, request.source, request.launch, request.kernel_language
            )
            if isinstance(parsed, str):
                cut = " (cut off at the token limit)" if finish == "length" else ""
                log.warning("unusable LLM sample %d of %d%s: %s", index + 1, count, cut, parsed)
                continue
            found.append((parsed, TokenUsage(), {"sample": index + 1, "samples": count, "n": count}))
        return len(choices[:count]), used

    def _one_by_one(
        self, request: RewriteRequest, indices: range, count: int, found: list[_Sample]
    ) -> LLMError | None:
        """The samples ``indices`` by separate requests (each at its own temperature) into ``found``; the
        error that stopped them (a failing endpoint is not asked again for this batch), else None."""
        for index in indices:
            temperature = self.sample_temperature(index)
            try:
                cand = self._one(request, temperature=temperature)
            except LLMError as exc:
                log.warning("LLM sample %d of %d failed: %s", index + 1, count, exc)
                return exc
            extra: dict[str, ParamValue] = {"sample": index + 1, "samples": count, "temperature": temperature}
            found.append(
                (ParsedReply(cand.source, cand.description, cand.launch), cand.tokens or TokenUsage(), extra)
            )
        return None

    def _distinct(
        self, request: RewriteRequest, found: list[_Sample], spent: TokenUsage, count: int
    ) -> list[Candidate]:
        """The samples whose source differs from the current one and from each other, as candidates; the
        first carries the tokens of the request and of the samples dropped."""
        out: list[Candidate] = []
        keys = {normalised(request.source, request.language)}
        for parsed, usage, extra in found:
            key = normalised(parsed.source, request.language) + launch_key(parsed.launch)
            if key in keys:
                self.duplicates_dropped += 1
                log.info(
                    "LLM sample %s dropped: the same source as an earlier one or the current one",
                    extra.get("sample"),
                )
                spent = spent + usage
                continue
            keys.add(key)
            out.append(
                self._candidate(request, parsed, usage if out else usage + spent, attempts=1, extra=extra)
            )
            if len(out) == 1:
                spent = TokenUsage()
        if not out:
            raise LLMError(
                f"the model's {count} samples all repeat the current source",
                hint="try another transform or a higher temperature",
            )
        if spent.requests or spent.total_tokens:
            first = out[0]
            out[0] = first.model_copy(update={"tokens": (first.tokens or TokenUsage()) + spent})
        return out

    def _candidate(
        self,
        request: RewriteRequest,
        parsed: ParsedReply,
        usage: TokenUsage,
        *,
        attempts: int,
        extra: dict[str, ParamValue] | None = None,
    ) -> Candidate:
        log.info(
            "llm candidate for %s: %d prompt + %d completion tokens in %d request(s)",
            request.transform,
            usage.prompt_tokens,
            usage.completion_tokens,
            usage.requests,
        )
        return make_candidate(
            request,
            backend="llm",
            recipe=self.config.model,
            source=parsed.source,
            description=parsed.explanation or f"LLM rewrite applying {request.transform}.",
            parameters={
                "model": self.config.model,
                "structured_output": self._structured,
                "attempts": attempts,
                **(extra or {}),
            },
            launch=parsed.launch,
            tokens=usage,
            notes=self._client_notes(),
        )

    def _client_notes(self) -> list[str]:
        """What the client noticed while answering (an in-order cassette replaying a drifted prompt)."""
        take = getattr(self._client, "take_notes", None)
        return list(take()) if callable(take) else []

    # ------------------------------------------------------------------ internals

    def _client_or_build(self) -> openai.OpenAI:
        if self._client is None:
            self._client = make_client(replace(self.config, max_retries=0))
        return self._client

    def _say(self, message: str) -> None:
        if self.progress is not None:
            try:
                self.progress(message)
            except Exception:  # noqa: BLE001 - a failing progress sink must not break the request
                log.debug("progress callback failed", exc_info=True)

    @contextmanager
    def _waiting(self) -> Iterator[None]:
        """While the body runs: 'waiting for the model (N s)' every ``wait_tick_s`` (from a helper thread)."""
        if self.progress is None:
            yield
            return
        stop = threading.Event()
        start = time.monotonic()
        limit = self.config.timeout_s

        def tick() -> None:
            while not stop.wait(self.wait_tick_s):
                self._say(
                    f"waiting for the model ({time.monotonic() - start:.0f} s; gives up at {limit:g} s)"
                )

        thread = threading.Thread(target=tick, name="perfagent-llm-wait", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join(timeout=1.0)

    def _create(self, client: openai.OpenAI, kwargs: dict[str, Any]) -> Any:
        """One chat completion, retried on transport problems (each retry announced)."""
        import openai  # an optional extra, about a second to import: only an LLM call loads it

        retries = self.config.max_retries
        for attempt in range(retries + 1):
            try:
                with self._waiting():
                    return client.chat.completions.create(**kwargs)
            except openai.BadRequestError:
                raise
            except (openai.APITimeoutError, openai.APIConnectionError, openai.APIStatusError) as exc:
                status = getattr(exc, "status_code", None)
                retryable = not isinstance(exc, openai.APIStatusError) or status in RETRY_STATUS
                if not retryable or attempt == retries:
                    raise
                what = (
                    f"no answer within {self.config.timeout_s:g} s"
                    if isinstance(exc, openai.APITimeoutError)
                    else f"HTTP {status}"
                    if status is not None
                    else "connection failed"
                )
                delay = retry_after(exc)
                if delay is None:
                    delay = self.config.backoff_s * 2**attempt
                self._say(f"the LLM endpoint: {what}; retrying ({attempt + 1} of {retries}) in {delay:g} s")
                self._sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def repair(
        self, request: RewriteRequest, candidate: Candidate, feedback: str, *, round_: int = 1
    ) -> Candidate:
        """A corrected ``candidate``: the request's conversation, the candidate as the model's reply, and
        ``feedback`` (the compiler's first errors, or the failing check with its detail) as the next message.

        Args:
            request: the request ``candidate`` answered.
            candidate: the candidate that failed to compile or verify.
            feedback: what failed, in the words of the compiler or the verifier.
            round_: which repair this is for the candidate's lineage (1 = the first), for the record.

        Raises:
            LLMError: as ``propose``.
        """
        reason = self.applies(request)
        if reason is not None:
            raise LLMError(reason, hint="use --repairs 0 or another backend")
        entry = catalog()[request.transform]
        messages = [
            *prompt.build_messages(request, entry, structured=self._structured),
            {"role": "assistant", "content": self._as_reply(candidate, request.language)},
            {
                "role": "user",
                "content": prompt.fix_message(
                    feedback, request, structured=self._structured, launch=request.launch is not None
                ),
            },
        ]
        return self._one(request, messages=messages, extra={"repair": round_})

    def _as_reply(self, candidate: Candidate, language: Language) -> str:
        """``candidate`` written back as the model's reply (the format it was asked for)."""
        if self._structured:
            data: dict[str, Any] = {"new_source": candidate.source, "explanation": candidate.description}
            if candidate.launch is not None:
                data["launch"] = launch_reply.as_data(candidate.launch)
            return json.dumps(data)
        text = prompt.fenced(candidate.source, language)
        if candidate.launch is not None:
            text += f"\n\n```toml\n{launch_reply.as_toml(candidate.launch)}\n```"
        return f"{text}\n\n{candidate.description}"

    def _one(
        self,
        request: RewriteRequest,
        *,
        temperature: float | None | _Default = DEFAULT,
        messages: list[dict[str, str]] | None = None,
        extra: dict[str, ParamValue] | None = None,
    ) -> Candidate:
        entry = catalog()[request.transform]
        usage = TokenUsage()
        if messages is None:
            messages = prompt.build_messages(request, entry, structured=self._structured)
        problem = ""
        attempts = 0
        for attempt in range(self.config.reply_retries + 1):
            attempts = attempt + 1
            if attempt:
                self._sleep(self.config.backoff_s * 2 ** (attempt - 1))
            choices, used, messages = self._complete(request, entry, messages, temperature=temperature)
            content, finish = choices[0] if choices else (None, None)
            usage = usage + used
            parsed = parse_full(
                content, request.language, request.source, request.launch, request.kernel_language
            )
            if isinstance(parsed, str) and finish == "length":
                parsed = f"the reply was cut off at the token limit ({parsed})"
            if not isinstance(parsed, str):
                return self._candidate(request, parsed, usage, attempts=attempts, extra=extra)
            problem = parsed
            log.warning("unusable LLM reply (attempt %d): %s", attempts, problem)
            messages = [
                *messages,
                {"role": "assistant", "content": (content or "")[:4000]},
                {
                    "role": "user",
                    "content": prompt.repair_message(
                        problem,
                        request.language,
                        structured=self._structured,
                        launch=request.launch is not None,
                    ),
                },
            ]
        raise LLMError(
            self.config.redact(f"the model gave no usable rewrite in {attempts} replies: {problem}"),
            hint="try another model or transform, or the recipes backend (--backend recipes)",
        )

    def _complete(
        self,
        request: RewriteRequest,
        entry: Any,
        messages: list[dict[str, str]],
        *,
        n: int = 1,
        temperature: float | None | _Default = DEFAULT,
    ) -> tuple[list[tuple[str | None, str | None]], TokenUsage, list[dict[str, str]]]:
        """One chat completion: its choices as (content, finish reason), the usage, the messages sent.

        Falls back to plain chat once if structured output is rejected (HTTP 400); a 400 to ``n`` > 1 is
        remembered and answered with one choice (the caller samples the rest by separate requests).
        """
        import openai  # an optional extra, about a second to import: only an LLM call loads it

        client = self._client_or_build()
        temp = self.config.temperature if isinstance(temperature, _Default) else temperature
        while True:
            kwargs: dict[str, Any] = {"model": self.config.model, "messages": messages}
            if temp is not None:
                kwargs["temperature"] = temp
            if n > 1 and self._n_supported is not False:
                kwargs["n"] = n
            if self._structured:
                kwargs["response_format"] = reply_schema(launch=request.launch is not None)
            started = time.monotonic()
            try:
                response = self._create(client, kwargs)
            except openai.BadRequestError as exc:
                about_format = getattr(exc, "param", None) == "response_format"
                if "n" in kwargs and not (about_format and self._structured):
                    log.info("the endpoint rejected n=%d (HTTP 400); sampling by separate requests", n)
                    self._n_supported = False
                    n = 1
                    continue
                if self._structured:
                    log.info("the endpoint rejected structured output (HTTP 400); falling back to plain chat")
                    self._structured = False
                    fresh = prompt.build_messages(request, entry, structured=False)
                    messages = [*fresh, *messages[len(fresh) :]]
                    continue
                raise llm_error(self.config, exc) from None
            except openai.APIError as exc:
                raise llm_error(self.config, exc) from None
            except (ValueError, TypeError, AttributeError) as exc:  # json.JSONDecodeError is a ValueError
                raise not_an_api(self.config, exc) from None
            if not isinstance(getattr(response, "choices", None), list):
                raise not_an_api(self.config, TypeError(f"a {type(response).__name__} without choices"))
            usage = response_usage(response, time.monotonic() - started).priced(self.config.price_per_million)
            return response_choices(response), usage, messages
