"""The one subprocess helper: every external command of the project goes through ``run_command``.

argv lists only (never a shell string), a mandatory timeout, the whole process group killed on
timeout so that a hung application under a profiler cannot outlive us, and a result that keeps
argv, return code, stdout and stderr for error messages.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from profilers.errors import ProfilerUnavailable, ToolTimeout

DEFAULT_TIMEOUT_S = 600.0


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
    try:
        proc = subprocess.Popen(
            args,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
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
    return CompletedCommand(
        argv=tuple(args),
        returncode=proc.returncode,
        stdout=out.decode(errors="replace"),
        stderr=err.decode(errors="replace"),
        elapsed_s=time.monotonic() - start,
    )


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
