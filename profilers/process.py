"""The one subprocess helper: every external command of the project goes through ``run_command``.

argv lists only (never a shell string), a mandatory timeout, the whole process group killed on
timeout so that a hung application under a profiler cannot outlive us, and a result that keeps
argv, return code, stdout and stderr for error messages.

``start_standby`` starts a command before its input is known (a worker that imports while the caller
is busy elsewhere); its ``finish`` then runs as ``run_command`` would, from that moment's time limit.

``run_forked`` keeps that contract for a Python function run in a fresh child forked from a warm
server that imported the heavy modules once (``profilers.fork_server``).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from profilers import live_groups
from profilers.errors import ProfilerUnavailable, ToolTimeout
from profilers.fork_server import Call, ForkServer
from profilers.settings import TIMEOUTS

DEFAULT_TIMEOUT_S = TIMEOUTS.profile_s
"""A command given no limit of its own gets a profiler run's (``profilers.settings.Timeouts``)."""


@dataclass(frozen=True)
class CompletedCommand:
    """What an external command did."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    elapsed_s: float

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def tail(self, lines: int = 15) -> str:
        """The last lines of stderr (or stdout when stderr is empty), for error messages."""
        text = self.stderr.strip() or self.stdout.strip()
        return "\n".join(text.splitlines()[-lines:])


def run_command(
    argv: Sequence[str | os.PathLike[str]],
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    stdin_text: str | None = None,
) -> CompletedCommand:
    """Run ``argv`` and wait at most ``timeout_s`` seconds.

    Args:
        argv: program and arguments; the program is looked up on PATH.
        timeout_s: wall-clock limit; on expiry the whole process group is killed.
        cwd: working directory.
        env: full environment (default: inherit ours).
        stdin_text: text fed to stdin (default: stdin is closed).

    Returns:
        The completed command with decoded stdout/stderr (undecodable bytes replaced).

    Raises:
        ProfilerUnavailable: the program does not exist or is not executable.
        ToolTimeout: the command ran past ``timeout_s``.
    """
    args = [os.fspath(a) for a in argv]
    start = time.monotonic()
    proc = _spawn(args, cwd, env, piped_stdin=stdin_text is not None)
    live_groups.track(proc.pid)  # an interrupted caller stops it (live_groups.stop_all)
    return _communicate(proc, args, start, stdin_text, timeout_s)


def _communicate(
    proc: subprocess.Popen[bytes], args: list[str], start: float, stdin_text: str | None, timeout_s: float
) -> CompletedCommand:
    """Feed ``stdin_text``, wait at most ``timeout_s`` (then kill the group), collect the output."""
    try:
        out, err = proc.communicate(
            input=stdin_text.encode() if stdin_text is not None else None, timeout=timeout_s
        )
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        raise ToolTimeout(
            f"'{Path(args[0]).name}' ran past its {timeout_s:g} s limit and was killed",
            hint="raise --timeout or make the workload smaller",
        ) from None
    except BaseException:
        _kill_group(proc)
        proc.wait()
        raise
    finally:
        live_groups.untrack(proc.pid)
    return CompletedCommand(
        argv=tuple(args),
        returncode=proc.returncode,
        stdout=out.decode(errors="replace"),
        stderr=err.decode(errors="replace"),
        elapsed_s=time.monotonic() - start,
    )


class Standby:
    """A command started before its input exists (``start_standby``): it gets ready (a worker imports
    its modules) and waits on stdin; ``finish`` gives it its input and waits as ``run_command`` does."""

    def __init__(self, proc: subprocess.Popen[bytes], args: list[str]) -> None:
        self._proc, self.argv = proc, tuple(args)
        self._taken = threading.Lock()

    @property
    def alive(self) -> bool:
        return self._proc.poll() is None

    def finish(self, stdin_text: str, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> CompletedCommand:
        """Feed ``stdin_text`` and wait at most ``timeout_s`` from now (``run_command``'s result and errors).

        Raises:
            ToolTimeout: the command ran past ``timeout_s`` (its whole process group is killed).
            RuntimeError: ``finish`` or ``cancel`` was called before.
        """
        if not self._taken.acquire(blocking=False):
            raise RuntimeError("a standby command is finished once")
        return _communicate(self._proc, list(self.argv), time.monotonic(), stdin_text, timeout_s)

    def cancel(self) -> None:
        """Kill the command's process group unless it was finished (idempotent)."""
        if not self._taken.acquire(blocking=False):
            return
        _kill_group(self._proc)
        self._proc.communicate()
        live_groups.untrack(self._proc.pid)


def start_standby(
    argv: Sequence[str | os.PathLike[str]],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Standby:
    """Start ``argv`` now with stdin piped, its input and time limit given later (``Standby.finish``).

    Raises:
        ProfilerUnavailable: the program does not exist or is not executable.
    """
    args = [os.fspath(a) for a in argv]
    proc = _spawn(args, cwd, env, piped_stdin=True)
    live_groups.track(proc.pid)  # an interrupted caller stops it (live_groups.stop_all)
    return Standby(proc, args)


def _spawn(
    args: list[str],
    cwd: str | os.PathLike[str] | None,
    env: Mapping[str, str] | None,
    *,
    piped_stdin: bool,
) -> subprocess.Popen[bytes]:
    """Start ``args`` in its own session (so its whole group can be killed), stdout and stderr piped.

    Raises:
        ProfilerUnavailable: the program does not exist or is not executable.
    """
    try:
        return subprocess.Popen(
            args,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=subprocess.PIPE if piped_stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except FileNotFoundError as exc:
        raise ProfilerUnavailable(
            f"'{args[0]}' was not found",
            hint=f"install it or put it on PATH (looked for {Path(args[0]).name})",
        ) from exc
    except PermissionError as exc:
        raise ProfilerUnavailable(f"'{args[0]}' is not executable", hint="check its permissions") from exc


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


_SERVERS_LOCK = threading.Lock()
_servers: dict[tuple[tuple[str, ...], tuple[str, ...]], ForkServer] = {}


def fork_server_available() -> bool:
    """Whether ``run_forked`` can work here (``fork`` and ``select`` on pipes: Linux, macOS)."""
    return sys.platform != "win32" and hasattr(os, "fork")


def _server(
    preload: tuple[str, ...], wrapper: tuple[str, ...] = (), env: dict[str, str] | None = None
) -> ForkServer:
    """The running server for ``preload`` under ``wrapper`` (started on first use with ``env``, default
    ours; restarted if it died)."""
    with _SERVERS_LOCK:
        server = _servers.get((preload, wrapper))
        if server is None or not server.alive:
            server = _servers[(preload, wrapper)] = ForkServer(
                preload, dict(os.environ) if env is None else env, wrapper
            )
        return server


def run_forked(
    entry: str,
    args: Sequence[str],
    *,
    preload: Sequence[str] = (),
    timeout_s: float = DEFAULT_TIMEOUT_S,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    stdin_text: str | None = None,
    wrapper: Sequence[str] = (),
    server_env: Mapping[str, str] | None = None,
    io_root: str | os.PathLike[str] | None = None,
) -> CompletedCommand:
    """Call ``entry`` ("module:function", given ``args`` as a list) in a fresh child of a warm server.

    The child is a new process for every call: its own session and process group, ``cwd``, the full
    ``env`` in place of the server's, ``stdin_text`` on stdin, stdout and stderr captured. It shares
    only the modules the server imported once, before any call (``preload``), and exits with the
    function's return value. Preload nothing whose import reads the environment or initialises a GPU:
    the server imports it once, under the first caller's environment.

    ``wrapper``: a command prefix the server runs under (a confinement: ``bwrap ... --``); one server
    per distinct ``preload`` and ``wrapper``. ``server_env``: the server's own environment when it is
    started (default ours). ``io_root``: where the child's stdio files go (a folder the wrapper lets it
    write; default the system's temporary folder).

    Returns:
        The completed call, as ``run_command`` reports a command (a signal is a negative return code).

    Raises:
        ProfilerUnavailable: no fork server on this platform, or it could not start the child.
        ToolTimeout: the call ran past ``timeout_s`` (its whole process group is killed).
    """
    if not fork_server_available():
        raise ProfilerUnavailable("no fork server on this platform", hint="use run_command")
    io_dir = Path(tempfile.mkdtemp(prefix="perfagent-forked-", dir=io_root))
    streams = [io_dir / "stdin", io_dir / "stdout", io_dir / "stderr"]
    streams[0].write_text(stdin_text or "", encoding="utf-8")
    start = time.monotonic()
    call: Call | None = None
    try:
        server_key = (tuple(preload), tuple(wrapper), dict(server_env) if server_env is not None else None)
        call = _started_call(server_key, entry, args, cwd, env, streams)
        _await_end(call, entry, timeout_s)
        return _completed(call, entry, args, streams[1:], start)
    except BaseException:
        if call is not None and call.pid is not None and not call.ended.is_set():
            _kill_forked(call.pid)
        raise
    finally:
        shutil.rmtree(io_dir, ignore_errors=True)


def _started_call(
    server_key: tuple[tuple[str, ...], tuple[str, ...], dict[str, str] | None],
    entry: str,
    args: Sequence[str],
    cwd: str | os.PathLike[str] | None,
    env: Mapping[str, str] | None,
    streams: list[Path],
) -> Call:
    """The call of ``entry`` in a child of the server for (preload, wrapper, server environment).

    A server that ended before forking the child ran none of the caller's code: one fresh server is
    tried before the call is given up (a server can die between two calls)."""
    call: Call | None = None
    for _ in range(2):
        call = _server(*server_key).start(
            entry,
            list(args),
            os.fspath(cwd) if cwd is not None else os.getcwd(),
            dict(env) if env is not None else dict(os.environ),
            [str(p) for p in streams],
        )
        if call.pid is not None:
            return call
    raise ProfilerUnavailable(
        f"the fork server could not start '{entry}'", hint="it ended; the next call starts a new one"
    )


def _await_end(call: Call, entry: str, timeout_s: float) -> None:
    """Wait for the forked child to end; kill its group and raise past ``timeout_s``, or when the server
    ended and can no longer report the child."""
    assert call.pid is not None
    if not call.ended.wait(timeout_s):
        _kill_forked(call.pid)
        call.ended.wait(10)
        raise ToolTimeout(
            f"'{entry}' ran past its {timeout_s:g} s limit and was killed",
            hint="raise --timeout or make the workload smaller",
        )
    if call.returncode is None:  # the server ended (killed?) and can no longer report the child
        _kill_forked(call.pid)
        raise ProfilerUnavailable(
            f"the fork server ended while '{entry}' ran", hint="the next call starts a new one"
        )


def _completed(
    call: Call, entry: str, args: Sequence[str], outputs: list[Path], start: float
) -> CompletedCommand:
    """The ended call as a ``CompletedCommand``, its stdout and stderr read from their files."""
    assert call.returncode is not None  # _await_end saw the child's end
    out, err = (p.read_bytes().decode(errors="replace") if p.exists() else "" for p in outputs)
    return CompletedCommand(
        argv=("forked", entry, *args),
        returncode=call.returncode,
        stdout=out,
        stderr=err,
        elapsed_s=time.monotonic() - start,
    )


def _kill_forked(pid: int) -> None:
    """Kill a forked child's process group (it made its own), or the child alone before it did."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
