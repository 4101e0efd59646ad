"""A real HTTP server on 127.0.0.1 speaking OpenAI chat-completions and replaying prepared replies.

The real ``openai`` client talks to it over a socket: ``POST /v1/chat/completions`` (and
``/chat/completions``) pops the next prepared ``Reply`` from a queue; ``GET /v1/models`` lists one
model. Every request is recorded (path, headers, JSON body) so that tests can assert what the prompt
carried and which Authorization header was sent. ``reject_json_schema`` makes the server answer 400
to any request asking for ``response_format`` (a server without structured output), without
consuming a reply. Slow replies wait on an event that ``stop()`` sets, so no handler outlives a test.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "replay-model"
HOLD_BACKSTOP_S = 120.0
"""How long a held reply is held at most: far past any client timeout the tests set (0.5-0.8 s)."""


@dataclass(frozen=True)
class Reply:
    """One prepared answer to a chat-completions request."""

    content: str | None = None
    """The assistant message content."""
    status: int = 200
    """HTTP status; non-200 sends an OpenAI-style error body with ``error_message``."""
    error_message: str = "error"
    delay_s: float = 0.0
    """Wait this long before answering."""
    held: bool = False
    """Never answer while the server runs (a server slower than any client timeout, with no clock in the
    test: a client that returns while the reply is held can only have given up on its own)."""
    prompt_tokens: int = 100
    completion_tokens: int = 50
    finish_reason: str = "stop"
    refusal: str | None = None
    """The message's ``refusal`` (OpenAI's structured-output refusal); content is then None."""
    headers: tuple[tuple[str, str], ...] = ()
    """Extra response headers, e.g. (("Retry-After", "1"),) with a 429."""
    raw_body: bytes | None = None
    """Send exactly these bytes as a 200 response body (a broken server: not JSON, wrong shape)."""


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    """Header names lower-cased."""
    body: dict[str, Any] = field(default_factory=dict)
    answered: int = 0
    """The status the server answered with."""

    @property
    def prompt_text(self) -> str:
        """All message contents joined (what the model saw)."""
        return "\n".join(str(m.get("content", "")) for m in self.body.get("messages", []))


class ReplayServer:
    """``with ReplayServer() as server: server.enqueue(Reply(...)); url = server.base_url``."""

    def __init__(self) -> None:
        self.replies: queue.Queue[Reply] = queue.Queue()
        self.requests: list[RecordedRequest] = []
        self.reject_json_schema = False
        self.honour_n = False
        """True: a request with ``n`` > 1 pops that many replies and answers them as that many choices
        (OpenAI, vLLM); False: ``n`` is ignored and one choice comes back (servers without it)."""
        self.reject_n = False
        """True: a request with ``n`` > 1 is answered 400 without consuming a reply."""
        self.serve_models = True
        """False: ``GET /models`` answers 404 (servers without the route: doctor falls back to a completion)."""
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.holding = 0
        """Requests whose reply was held (unanswered while the server ran, or for ``HOLD_BACKSTOP_S``)."""
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> ReplayServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence stderr logging
                return

            def do_GET(self) -> None:
                server._record("GET", self, {}, 200)
                if server.serve_models and self.path.rstrip("/") in ("/v1/models", "/models"):
                    self._send(
                        200,
                        {
                            "object": "list",
                            "data": [{"id": MODEL, "object": "model", "created": 0, "owned_by": "test"}],
                        },
                    )
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {"_raw": raw.decode(errors="replace")}
                if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                    server._record("POST", self, body, 404)
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                    return
                fmt = body.get("response_format") or {}
                if server.reject_json_schema and fmt.get("type") == "json_schema":
                    server._record("POST", self, body, 400)
                    self._send(
                        400,
                        {
                            "error": {
                                "message": "response_format type json_schema is not supported by this server",
                                "type": "invalid_request_error",
                                "param": "response_format",
                                "code": None,
                            }
                        },
                    )
                    return
                n = int(body.get("n") or 1)
                if server.reject_n and n > 1:
                    server._record("POST", self, body, 400)
                    self._send(
                        400,
                        {
                            "error": {
                                "message": "n > 1 is not supported",
                                "type": "invalid_request_error",
                                "param": "n",
                            }
                        },
                    )
                    return
                try:
                    reply = server.replies.get_nowait()
                except queue.Empty:
                    server._record("POST", self, body, 500)
                    self._send(500, {"error": {"message": "no reply queued", "type": "server_error"}})
                    return
                server._record("POST", self, body, reply.status)
                if reply.held and server._hold():
                    return
                if reply.delay_s and server._stopping.wait(reply.delay_s):
                    return
                if reply.raw_body is not None:
                    self._send_raw(reply.raw_body)
                    return
                if reply.status != 200:
                    self._send(
                        reply.status,
                        headers=reply.headers,
                        payload={
                            "error": {
                                "message": reply.error_message,
                                "type": "invalid_request_error",
                                "code": None,
                            }
                        },
                    )
                    return
                batch = [reply]
                while server.honour_n and len(batch) < n:
                    try:
                        batch.append(server.replies.get_nowait())
                    except queue.Empty:
                        break
                choices = []
                for index, one in enumerate(batch):
                    message: dict[str, Any] = {"role": "assistant", "content": one.content}
                    if one.refusal is not None:
                        message["refusal"] = one.refusal
                    choices.append({"index": index, "message": message, "finish_reason": one.finish_reason})
                self._send(
                    200,
                    {
                        "id": f"chatcmpl-{len(server.requests)}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", MODEL),
                        "choices": choices,
                        "usage": {
                            "prompt_tokens": reply.prompt_tokens,
                            "completion_tokens": sum(one.completion_tokens for one in batch),
                            "total_tokens": reply.prompt_tokens + sum(one.completion_tokens for one in batch),
                        },
                    },
                )

            def _send(
                self, status: int, payload: dict[str, Any], headers: tuple[tuple[str, str], ...] = ()
            ) -> None:
                self._send_raw(json.dumps(payload).encode(), status, headers)

            def _send_raw(
                self, data: bytes, status: int = 200, headers: tuple[tuple[str, str], ...] = ()
            ) -> None:
                try:
                    self.send_response(status)
                    for name, value in headers:
                        self.send_header(name, value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout): nothing to answer

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ use

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def _hold(self) -> bool:
        """Keep a request unanswered until the server stops (True); after ``HOLD_BACKSTOP_S`` answer it
        after all (False), so that a client whose timeout is broken fails its test instead of hanging it."""
        with self._lock:
            self.holding += 1
        return self._stopping.wait(HOLD_BACKSTOP_S)

    def enqueue(self, *replies: Reply) -> None:
        for reply in replies:
            self.replies.put(reply)

    @property
    def completions(self) -> list[RecordedRequest]:
        """Recorded chat-completions requests, in arrival order."""
        with self._lock:
            return [r for r in self.requests if r.method == "POST"]

    def _record(
        self, method: str, handler: BaseHTTPRequestHandler, body: dict[str, Any], status: int
    ) -> None:
        with self._lock:
            self.requests.append(
                RecordedRequest(
                    method, handler.path, {k.lower(): v for k, v in handler.headers.items()}, body, status
                )
            )


def fenced(source: str, lang: str = "cuda", explanation: str = "Padded the tile.") -> str:
    """A plain-chat reply: one fenced block with the source, then an explanation."""
    return f"Here is the rewrite.\n\n```{lang}\n{source.rstrip()}\n```\n\n{explanation}\n"


def structured(source: str, explanation: str = "Padded the tile.") -> str:
    """A structured-output reply: the RewriteReply JSON object."""
    return json.dumps({"new_source": source, "explanation": explanation})
