"""Long tool calls as cancellable child processes with periodic progress.

A thread cannot be stopped: a cancelled ``optimize`` run in a thread kept the GPU busy to its end and
disturbed the next timing. So verify, bench and optimize run in ``job_worker`` processes, each in its
own process group. When the client cancels the call (or the job overruns its budget) the server sends
SIGTERM to the group (the worker turns it into KeyboardInterrupt: the optimize loop saves its record
as interrupted, the subprocess helper kills its own children), waits a grace period, then SIGKILLs the
group, and finally makes sure the run folder's record says "interrupted".

Progress: every line the job prints is forwarded at once, and a heartbeat repeats the last line every
few seconds, always with ``progress`` = elapsed seconds and ``total`` = the job's time budget, so a
host whose timeout resets on progress never gives up on a job that is still working.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from subprocess import PIPE
from typing import Any

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

import perfagent
from perfagent.records import RunRecord
from perfagent.session import RECORD_FILE, load_record, save_record
from profilers.core_errors import BadInput, PerfAgentError
from profilers.errors import ToolTimeout

Reporter = Callable[[float, float | None, str], Coroutine[Any, Any, None]]
"""``(progress, total, message)``: an MCP progress notification."""

HEARTBEAT_S = 5.0
"""Seconds between repeated progress notifications while a job is quiet."""
GRACE_S = 10.0
"""Seconds a job has to save its record after SIGTERM before its process group is killed."""
MAX_LINE_BYTES = 256 * 1024 * 1024
INTERRUPTED = "interrupted: the MCP client cancelled the call; the record holds what finished before it"


class JobFailed(PerfAgentError):
    """A job's own failure, carried back from the worker with its exit code and kind."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(str(error.get("cause", "the job failed")), hint=str(error.get("next_step", "")))
        self.exit_code = int(error.get("exit_code", 1))  # type: ignore[assignment]
        self.kind = str(error.get("kind", "PerfAgentError"))


@dataclass(frozen=True)
class Job:
    """One long tool call to run in a worker process."""

    function: str
    """``module:function`` the worker calls as ``fn(progress, **kwargs)``."""
    kwargs: dict[str, Any]
    budget_s: float
    """Wall-clock limit; the job is stopped beyond it (and reported as ``total`` in progress)."""
    target: str = ""
    run_dir: Path | None = None
    """The run folder the job writes, made consistent ("interrupted") when the job is stopped."""
    cwd: Path | None = None
    """The worker's working folder: the project root, so that paths in progress lines are relative to it."""
    on_start: Callable[[int], None] = field(default=lambda _pid: None)
    """Told the worker's process id (its process group id too) once it runs."""


async def run_job(job: Job, report: Reporter, *, heartbeat_s: float = HEARTBEAT_S) -> dict[str, Any]:
    """Run ``job`` to completion and return its result (JSON), or raise its error.

    Raises:
        JobFailed: the job's own failure (bad target, verification error, ...).
        ToolTimeout: the job ran past its budget and was stopped.
    """
    started = time.monotonic()
    last = ["started"]
    proc = await anyio.open_process(
        [sys.executable, "-m", "perfagent.mcp_server.job_worker"],
        stdin=PIPE,
        stdout=PIPE,
        stderr=None,
        start_new_session=True,
        cwd=job.cwd,
        env=_worker_env(),
    )
    job.on_start(proc.pid)

    async def notify(message: str) -> None:
        last[0] = message
        await report(round(time.monotonic() - started, 1), job.budget_s, message)

    async def heartbeat() -> None:
        while True:
            await anyio.sleep(heartbeat_s)
            await notify(last[0])

    try:
        with anyio.fail_after(job.budget_s):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(heartbeat)
                outcome = await _converse(proc, job, notify)
                tasks.cancel_scope.cancel()
    except TimeoutError:
        with anyio.CancelScope(shield=True):
            await stop(proc, job)
        raise ToolTimeout(
            f"the job ran past its {job.budget_s:g} s budget and was stopped",
            hint="raise budget_s, or make the workload smaller",
        ) from None
    except BaseException:
        with anyio.CancelScope(shield=True):
            await stop(proc, job)
        raise
    if "error" in outcome:
        raise JobFailed(outcome["error"])
    return dict(outcome["result"])


async def _converse(proc: Process, job: Job, notify: Callable[[str], Awaitable[None]]) -> dict[str, Any]:
    """Send the request, forward progress lines, return the final result or error message."""
    assert proc.stdin is not None and proc.stdout is not None
    request = {"function": job.function, "kwargs": job.kwargs}
    await proc.stdin.send(json.dumps(request).encode())
    await proc.stdin.aclose()
    lines = BufferedByteReceiveStream(proc.stdout)
    while True:
        try:
            raw = await lines.receive_until(b"\n", MAX_LINE_BYTES)
        except (anyio.EndOfStream, anyio.IncompleteRead):
            code = await proc.wait()
            raise JobFailed(
                {
                    "cause": f"the job worker ended (exit code {code}) without a result",
                    "next_step": "",
                    "kind": "ToolFailure",
                }
            ) from None
        message = json.loads(raw)
        if "progress" in message:
            await notify(str(message["progress"]))
            continue
        await proc.wait()
        return dict(message)


async def stop(proc: Process, job: Job) -> None:
    """End the job's process group (SIGTERM, grace period, SIGKILL) and leave its run folder consistent.

    The record is marked interrupted before the signal too, so that whoever sees the job gone also
    sees the record say so (the optimize loop then overwrites it with its own, fuller, partial record).
    """
    if job.run_dir is not None:
        mark_interrupted(job.run_dir, job.target)
    _signal_group(proc.pid, signal.SIGTERM)
    with anyio.move_on_after(GRACE_S):
        await proc.wait()
    _signal_group(proc.pid, signal.SIGKILL)  # stragglers of the group, and the worker if it hung
    await proc.wait()
    if job.run_dir is not None:
        mark_interrupted(job.run_dir, job.target)


def _signal_group(pgid: int, signum: signal.Signals) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass  # the whole group has ended already


def mark_interrupted(run_dir: Path, target: str) -> None:
    """Make ``run_dir/record.json`` say the run was interrupted (written when the job could not)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        record = load_record(run_dir) if (run_dir / RECORD_FILE).is_file() else None
    except BadInput:
        record = None
    if record is None:
        record = RunRecord(kind="optimize", id=run_dir.name, target=target, tool="none", notes=[INTERRUPTED])
    elif record.optimize is not None and (record.optimize.stopped or "").startswith("running"):
        stopped = record.optimize.model_copy(update={"stopped": INTERRUPTED})
        record = record.model_copy(update={"optimize": stopped})
    else:
        return  # the job saved its own final or interrupted record
    save_record(record, run_dir)


def _worker_env() -> dict[str, str]:
    """The server's environment, with this perfagent first on the path (an editable copy may shadow another)."""
    here = str(Path(perfagent.__file__).resolve().parents[1])
    path = os.environ.get("PYTHONPATH", "")
    return dict(os.environ, PYTHONPATH=here + (os.pathsep + path if path else ""))
