"""The suite's worker process: ``python -m perfagent.suite.worker REQUEST.json RESULT.json``.

One process per entry, started by an executor with ``CUDA_VISIBLE_DEVICES`` pinned to one GPU and
its own build caches: a CUDA error, a crash or a hang is contained to this process, which is simply
not reused (the executor starts a fresh one for the next entry and records the cause).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from pathlib import Path

from pydantic import Field

from perfagent.suite.models import SuiteSettings
from profilers.model import Frozen

PR_SET_PDEATHSIG = 1
PARENT_ENV = "PERFAGENT_SUITE_PARENT"
"""The executor's pid, so a worker can tell it was orphaned before it asked to die with its parent."""


class WorkerRequest(Frozen):
    """What the executor hands a worker (written as JSON next to the result path)."""

    entry: dict[str, object]
    """A ``SuiteEntry`` dump."""
    settings: SuiteSettings
    out: str
    """The suite's output folder (absolute): optimize run folders go under it."""
    env: dict[str, str] = Field(default_factory=dict)
    """Informational: the environment the executor pinned (recorded, not applied here)."""


def die_with_parent() -> None:
    """Ask Linux to SIGTERM this worker when the thread that started it dies (``main`` turns SIGTERM into
    an orderly exit: its own workers are killed and their temporary folders removed).

    The executor starts workers in their own session (so a timeout can kill the whole group); without
    this, killing ``perfagent suite`` would leave its workers running on the GPU. Each worker is waited
    for by the thread that started it, so that thread outlives the worker in every normal run.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # not fatal: the worker still ends with its entry
        return
    # The parent may have died before the request above: then we are already an orphan.
    expected = os.environ.get(PARENT_ENV)
    if expected and str(os.getppid()) != expected:
        os._exit(1)


def _stop(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt  # unwinds through run_command/run_worker: grandchildren killed, folders removed


def main(argv: list[str]) -> int:
    """Read the request, run the entry, write its ``EntryResult`` JSON; exit 0 when written (130 when
    stopped by SIGTERM/SIGHUP/SIGINT, after cleaning up)."""
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, _stop)
    try:
        return _run(argv)
    except KeyboardInterrupt:
        return 130


def _run(argv: list[str]) -> int:
    die_with_parent()
    # Imported only now: it pulls in torch (seconds), and a worker orphaned during that import must
    # already be under die_with_parent's watch.
    from perfagent.suite.entry_runner import run_entry

    request_path, result_path = Path(argv[0]), Path(argv[1])
    request = WorkerRequest.model_validate_json(request_path.read_text(encoding="utf-8"))
    result = run_entry(request.entry, request.settings, Path(request.out))
    tmp = result_path.with_suffix(".tmp")
    tmp.write_text(result.model_dump_json(), encoding="utf-8")
    tmp.replace(result_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
