"""One long MCP tool call (verify, bench, optimize) in its own process: ``python -m perfagent.mcp_server.job_worker``.

The server starts this in a new process group so that cancelling the call can end it and everything
it started (compilers, verify workers, the profiler). Wire format, one JSON object per line:
stdin carries ``{"function": "module:name", "kwargs": {...}}``; the protocol stream (the process's
original stdout) carries ``{"progress": "..."}`` lines, then ``{"result": {...}}`` or
``{"error": {cause, next_step, exit_code, kind}}``. While the job runs, fd 1 points at stderr so that
a compiler or profiler it starts cannot write into the protocol stream. SIGTERM becomes
KeyboardInterrupt, so the optimize loop saves its record as interrupted before the process ends.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import IO, Any

from pydantic import BaseModel

from profilers.core_errors import PerfAgentError, exit_code_for, one_line

JobFunction = Callable[..., BaseModel]
"""Called as ``fn(progress, **kwargs)``; ``progress`` takes one line of text."""


def _interrupt(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _load(spec: str) -> JobFunction:
    module, _, name = spec.partition(":")
    fn: JobFunction = getattr(importlib.import_module(module), name)
    return fn


def _error(exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, PerfAgentError):
        return {
            "cause": exc.message,
            "next_step": exc.hint,
            "exit_code": exit_code_for(exc),
            "kind": type(exc).__name__,
        }
    return {
        "cause": one_line(exc),
        "next_step": "",
        "exit_code": exit_code_for(exc),
        "kind": type(exc).__name__,
    }


def serve(request: dict[str, Any], stream: IO[str]) -> int:
    """Run one job, writing its progress and outcome to ``stream``; the process's exit status."""

    def send(message: dict[str, Any]) -> None:
        try:
            stream.write(json.dumps(message) + "\n")
            stream.flush()
        except BrokenPipeError:
            pass  # the server stopped listening (the call was cancelled): nobody to tell

    try:
        result = _load(request["function"])(lambda line: send({"progress": line}), **request["kwargs"])
    except KeyboardInterrupt as exc:
        send({"error": _error(exc) | {"cause": "cancelled by the client"}})
        return 130
    except Exception as exc:  # every failure goes back to the server as a structured error
        send({"error": _error(exc)})
        return 1
    send({"result": result.model_dump(mode="json")})
    return 0


def main() -> int:
    """Read the request, keep the original stdout for the protocol, run the job."""
    signal.signal(signal.SIGTERM, _interrupt)
    request = json.loads(sys.stdin.read())
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    with protocol:
        return serve(request, protocol)


if __name__ == "__main__":
    sys.exit(main())
