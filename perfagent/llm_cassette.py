"""Record and replay LLM conversations: ``--llm-record DIR`` and ``--llm-replay DIR``.

A cassette is a folder of JSON files, one per chat-completions request: the request exactly as sent
(model, messages, temperature, response_format, …) and the server's reply as the ``openai`` client
parsed it. The API key is never part of a request body, so it is never stored. Requests are keyed by
the SHA-256 of their canonical JSON and numbered per key in the order they were made, so the same
request made twice (e.g. two samples at one temperature) replays the two recorded answers in order.

Replaying needs no network and no endpoint: the optimize loop sends the same requests (prompts are
deterministic given the same sources, diagnosis and measured outcomes) and gets the recorded replies,
so it proposes the same candidates byte for byte. A request with no recording is an error naming its
hash, which points at what changed (a prompt, a source, a measurement).

Some recordings cannot be made again (a real model answered through a relay once). Those cassettes say
``"replay": "in-order"`` in cassette.json (or are opened with ``order="recorded"``): the n-th request
gets the n-th recorded reply (each exchange carries its ``sequence``), whatever it asks, so a later
change to a prompt still replays the model's answers; each mismatch between what is asked and what was
recorded is kept as a note (``CassetteClient.take_notes``) instead of failing.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from profilers.core_errors import BadInput, LLMError

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletion

CassetteMode = Literal["record", "replay"]
ReplayOrder = Literal["keyed", "recorded"]
"""keyed: each request answered by its own recording (exact); recorded: answers in recording order."""
IN_ORDER = "in-order"
"""cassette.json's ``replay`` value that selects the ``recorded`` order."""
META_FILE = "cassette.json"
"""What was recorded, against which endpoint (never the key) and model."""


def request_key(kwargs: dict[str, Any]) -> str:
    """The request's identity: SHA-256 of its canonical JSON (keys sorted, no whitespace)."""
    canonical = json.dumps(kwargs, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


class Cassette:
    """A folder of recorded request/reply pairs, written in record mode and read in replay mode."""

    def __init__(self, directory: Path, mode: CassetteMode, *, order: ReplayOrder | None = None) -> None:
        """``order`` None: the one cassette.json names (``"replay": "in-order"``), else keyed."""
        self.directory = directory
        self.mode = mode
        self._seen: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._queue: list[dict[str, Any]] | None = None
        """In-order replay: the recorded exchanges not served yet (loaded on first use)."""
        self.drift: list[str] = []
        """In-order replay: one note per request that differed from its recording."""
        if mode == "replay" and not (directory / META_FILE).is_file():
            raise BadInput(
                f"{directory} is not an LLM cassette (no {META_FILE})",
                hint="record one first with --llm-record DIR",
            )
        if mode == "record":
            directory.mkdir(parents=True, exist_ok=True)
        self._sequence = int(self.meta().get("requests", 0))
        """The next exchange's ``sequence`` (recording continues after what is there)."""
        self.order: ReplayOrder = order or ("recorded" if self.meta().get("replay") == IN_ORDER else "keyed")

    def meta(self) -> dict[str, Any]:
        """The cassette's description (model, endpoint, requests)."""
        path = self.directory / META_FILE
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}

    def remember(self, name: str, value: Any) -> None:
        """Keep one run setting in the description, so that a replay can use it again (the
        verification seed: its inputs and errors appear in repair prompts)."""
        meta = self.meta() or {"requests": 0}
        meta[name] = value
        (self.directory / META_FILE).write_text(json.dumps(meta, indent=2), encoding="utf-8")

    def _next_path(self, key: str) -> Path:
        with self._lock:
            index = self._seen[key]
            self._seen[key] += 1
        return self.directory / f"{key[:16]}-{index}.json"

    def record(
        self, kwargs: dict[str, Any], reply: dict[str, Any], *, model: str | None, endpoint: str | None
    ) -> None:
        """Store one exchange (and keep the cassette's description current)."""
        key = request_key(kwargs)
        path = self._next_path(key)
        with self._lock:
            sequence, self._sequence = self._sequence, self._sequence + 1
            exchange = {"key": key, "sequence": sequence, "request": kwargs, "reply": reply}
            path.write_text(json.dumps(exchange, indent=2), encoding="utf-8")
            meta = {"model": model, "endpoint": endpoint, "requests": 0, **self.meta()}
            meta["requests"] = int(meta.get("requests", 0)) + 1
            (self.directory / META_FILE).write_text(json.dumps(meta, indent=2), encoding="utf-8")

    def replay(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The recorded reply to this request (keyed: the n-th recording for its n-th occurrence;
        recorded order: the next recording, a mismatch noted in ``drift``)."""
        if self.order == "recorded":
            return self._replay_in_order(kwargs)
        key = request_key(kwargs)
        path = self._next_path(key)
        if not path.is_file():
            raise LLMError(
                f"the cassette {self.directory} has no recorded reply for request {key[:16]} "
                f"(occurrence {path.stem.rsplit('-', 1)[1]})",
                hint="the prompt changed since it was recorded (sources, diagnosis or measurements): record again",
            )
        return dict(json.loads(path.read_text(encoding="utf-8"))["reply"])

    def take_drift(self) -> list[str]:
        """The drift notes gathered since the last call (then forgotten)."""
        with self._lock:
            notes, self.drift = self.drift, []
        return notes

    def exchanges(self) -> list[dict[str, Any]]:
        """Every recorded exchange, in the order it was recorded."""
        paths = [p for p in self.directory.glob("*-*.json") if p.name != META_FILE]
        loaded = [json.loads(p.read_text(encoding="utf-8")) for p in paths]
        missing = [p.name for p, e in zip(paths, loaded, strict=True) if "sequence" not in e]
        if missing:
            raise BadInput(
                f"the cassette {self.directory} cannot replay in order: {', '.join(sorted(missing))} "
                "has no sequence number",
                hint='record it again, or replay it keyed (drop "replay" from cassette.json)',
            )
        return sorted(loaded, key=lambda e: int(e["sequence"]))

    def _replay_in_order(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            if self._queue is None:
                self._queue = self.exchanges()
            if not self._queue:
                raise LLMError(
                    f"the cassette {self.directory} has no more recorded replies "
                    f"(asked for {_describe(kwargs)})",
                    hint="the run now asks more than it did when recorded: record again",
                )
            exchange = self._queue.pop(0)
            if request_key(kwargs) != exchange["key"]:
                self.drift.append(
                    f"prompt drifted since recording: asked {_describe(kwargs)}, "
                    f"recorded for {_describe(exchange['request'])}; "
                    f"{_first_difference(kwargs, exchange['request'])}; replayed the recorded reply"
                )
        return dict(exchange["reply"])


def _describe(kwargs: dict[str, Any]) -> str:
    """A request in a few words: the first line of its first user message, and its key."""
    users = [m.get("content", "") for m in kwargs.get("messages", []) if m.get("role") == "user"]
    first = (
        str(users[0]).strip().splitlines()[0][:120] if users and str(users[0]).strip() else "no user message"
    )
    return f"'{first}' ({request_key(kwargs)[:16]})"


def _first_difference(asked: dict[str, Any], recorded: dict[str, Any]) -> str:
    """Where the two requests' last messages first differ (the Task lines are often the same)."""
    lines = [str((r.get("messages") or [{}])[-1].get("content", "")).splitlines() for r in (asked, recorded)]
    for number, (now, then) in enumerate(zip(*lines, strict=False), start=1):
        if now != then:
            column = len(os.path.commonprefix([now, then]))
            start = max(0, column - 30)
            return (
                f"first difference at line {number}, column {column + 1}: "
                f"now '…{now[start : column + 60]}', then '…{then[start : column + 60]}'"
            )
    return "the last messages agree line by line (another field differs)"


class _Completions:
    def __init__(self, client: CassetteClient) -> None:
        self._client = client

    def create(self, **kwargs: Any) -> ChatCompletion:
        return self._client.create(**kwargs)


class _Chat:
    def __init__(self, client: CassetteClient) -> None:
        self.completions = _Completions(client)


class CassetteClient:
    """Stands in for ``openai.OpenAI`` where perfagent uses it: ``chat.completions.create`` and
    ``models.list``. Records through ``inner`` or replays without it."""

    def __init__(
        self, cassette: Cassette, inner: openai.OpenAI | None, *, model: str | None, endpoint: str | None
    ) -> None:
        if cassette.mode == "record" and inner is None:
            raise BadInput(
                "recording needs a reachable endpoint",
                hint="set PERFAGENT_LLM_BASE_URL and PERFAGENT_LLM_MODEL",
            )
        self.cassette = cassette
        self.inner = inner
        self.model = model
        self.endpoint = endpoint
        self.chat = _Chat(self)

    def take_notes(self) -> list[str]:
        """The drift notes of in-order replay gathered since the last call (then forgotten)."""
        return self.cassette.take_drift()

    def create(self, **kwargs: Any) -> ChatCompletion:
        # openai is an optional extra and takes about a second to import: only an LLM call loads it
        from openai.types.chat import ChatCompletion

        if self.cassette.mode == "replay":
            return ChatCompletion.model_validate(self.cassette.replay(kwargs))
        assert self.inner is not None
        response: ChatCompletion = self.inner.chat.completions.create(**kwargs)
        self.cassette.record(
            kwargs, response.model_dump(mode="json"), model=self.model, endpoint=self.endpoint
        )
        return response
