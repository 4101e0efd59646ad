"""A warm Python process that forks a fresh child per call: the server side and its client.

Why: a verification or timing worker imports torch before its first kernel, 3-5 s on a GPU host
(``tests/gpu/h200x4_2026-11-26c/worker_startup.txt``), paid again by every worker. The server imports
such modules once (``preload``) and forks a child per call; each child is still a new process (own
session and process group, folder, environment and stdio) that runs one function and exits, so nothing
one call does reaches the next.

Protocol (JSON lines): the client writes ``{"id", "entry", "args", "cwd", "env", "streams"}`` to the
server's stdin; the server answers ``{"id", "pid"}`` once the child is forked and ``{"id", "returncode"}``
when it has been reaped (a signal is a negative code, as ``subprocess`` reports it). The server is one
thread (it forks), polls for ended children while any run, and exits when its stdin closes.

Use ``profilers.process.run_forked``; this module is its machinery.
"""

from __future__ import annotations

import importlib
import json
import os
import select
import subprocess
import sys
import threading
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_REPO_ROOT = Path(__file__).resolve().parents[1]
POLL_S = 0.02
"""How often the server looks for ended children while any run, s."""
START_POLL_S = 0.5
"""How often a caller waiting for its child to be forked checks that the server is still alive, s."""
_SERVER_FDS: list[int] = []
"""The server's own descriptors beyond stdio, closed in every child."""


# ------------------------------------------------------------------------------------------------ server


def serve(preload: list[str]) -> None:
    """The server loop (``python -m profilers.fork_server MODULE...``)."""
    for name in preload:
        try:
            importlib.import_module(name)
        except Exception as exc:  # a module that cannot load is imported by each child instead
            print(f"fork server: preload {name} failed: {exc}", file=sys.stderr)
    out = os.fdopen(os.dup(1), "w", buffering=1)
    _SERVER_FDS.append(out.fileno())
    out.write('{"ready": true}\n')
    running: dict[int, int] = {}
    pending = b""
    while True:
        readable, _, _ = select.select([0], [], [], POLL_S if running else None)
        _reap(running, out)
        if not readable:
            continue
        data = os.read(0, 1 << 16)
        if not data:
            return  # the client is gone
        pending += data
        *lines, pending = pending.split(b"\n")
        for line in lines:
            if line.strip():
                request = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    _child(request)  # never returns
                running[pid] = request["id"]
                out.write(json.dumps({"id": request["id"], "pid": pid}) + "\n")


def _reap(running: dict[int, int], out: Any) -> None:
    while running:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            return
        call = running.pop(pid, None)
        if call is not None:
            out.write(json.dumps({"id": call, "returncode": os.waitstatus_to_exitcode(status)}) + "\n")


def _child(request: dict[str, Any]) -> None:
    """Become a process of its own, call the entry, leave with its exit status (never returns)."""
    code = 1
    try:
        os.setsid()  # its own process group: a timeout kills what it started too
        for fd in _SERVER_FDS:
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        # as a new interpreter would: the call's PYTHONPATH first (the server's own stays after it)
        for entry in reversed(request["env"].get("PYTHONPATH", "").split(os.pathsep)):
            if entry and entry not in sys.path:
                sys.path.insert(0, entry)
        modes = (os.O_RDONLY, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        for fd, (path, mode) in enumerate(zip(request["streams"], modes, strict=True)):
            opened = os.open(path, mode, 0o600)
            os.dup2(opened, fd)  # replaces the server's pipes: the child holds none of them
            os.close(opened)
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - the process's own stdio
        sys.stdout = open(1, "w", encoding="utf-8", buffering=1, closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", buffering=1, closefd=False)  # noqa: SIM115
        module, _, function = request["entry"].partition(":")
        returned = getattr(importlib.import_module(module), function)(list(request["args"]))
        code = returned if isinstance(returned, int) else 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: S110 - the exit status is all that is left to report
                pass
        os._exit(code)


# ------------------------------------------------------------------------------------------------ client


@dataclass
class Call:
    """One forked call as the client sees it."""

    id: int
    started: threading.Event = field(default_factory=threading.Event)
    ended: threading.Event = field(default_factory=threading.Event)
    pid: int | None = None
    returncode: int | None = None


class ForkServer:
    """A running server (``python -m profilers.fork_server``) and the calls it has forked."""

    def __init__(self, preload: tuple[str, ...], env: dict[str, str], wrapper: tuple[str, ...] = ()) -> None:
        """Start the server: ``env`` is its environment (its children get their own, but a forked
        child's initial environment block is the server's: give it none of the caller's secrets);
        ``wrapper`` a command prefix it runs under (a confinement such as ``bwrap ... --``)."""
        path = os.pathsep.join(p for p in (str(_REPO_ROOT), env.get("PYTHONPATH", "")) if p)
        self._proc = subprocess.Popen(
            [*wrapper, sys.executable, "-m", "profilers.fork_server", *preload],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**env, "PYTHONPATH": path},
            start_new_session=True,
        )
        self._lock = threading.Lock()
        self._calls: dict[int, Call] = {}
        self._next = 0
        threading.Thread(target=self._read, name="perfagent-fork-server", daemon=True).start()

    @property
    def alive(self) -> bool:
        return self._proc.poll() is None

    def start(self, entry: str, args: list[str], cwd: str, env: dict[str, str], streams: list[str]) -> Call:
        """Ask for a child; returns once it is forked (``Call.pid``) or the server is gone (``pid`` None)."""
        with self._lock:
            self._next += 1
            call = Call(self._next)
            self._calls[call.id] = call
            request = {
                "id": call.id,
                "entry": entry,
                "args": args,
                "cwd": cwd,
                "env": env,
                "streams": streams,
            }
            assert self._proc.stdin is not None
            try:
                self._proc.stdin.write((json.dumps(request) + "\n").encode())
                self._proc.stdin.flush()
            except OSError:
                call.started.set()
                call.ended.set()
                return call
        # Never wait on the answer alone: a server that dies after taking the request may leave its
        # stdout open in a child it forked, so the reader never sees EOF (a CI run once hung here).
        while not call.started.wait(START_POLL_S):
            if not self.alive:
                with self._lock:
                    self._calls.pop(call.id, None)
                call.started.set()
                call.ended.set()
        return call

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            message = json.loads(line)
            if message.get("ready"):  # preloads done: nothing waits for it, requests queue on the pipe
                continue
            call = self._calls.get(message["id"])
            if call is None:
                continue
            if "pid" in message:
                call.pid = message["pid"]
                call.started.set()
            else:
                call.returncode = message["returncode"]
                call.ended.set()
                with self._lock:
                    self._calls.pop(call.id, None)
        with self._lock:  # the server ended: nobody waits forever
            for call in self._calls.values():
                call.started.set()
                call.ended.set()
            self._calls.clear()


if __name__ == "__main__":  # pragma: no cover - started by ForkServer
    serve(sys.argv[1:])
