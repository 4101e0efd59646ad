"""The process groups ``run_command`` has running right now, so that an interrupted caller can stop them.

Every command runs in its own session (a timeout kills its whole group), so a Ctrl-C or a closed terminal
reaches only perfagent itself; ``stop_all`` then asks each running group to end (SIGTERM: a perfagent
worker cleans its temporary folders and ends its own children) and kills what is left after a grace period.
"""

from __future__ import annotations

import os
import signal
import threading
import time

_LOCK = threading.Lock()
_running: set[int] = set()


def track(pgid: int) -> None:
    with _LOCK:
        _running.add(pgid)


def untrack(pgid: int) -> None:
    with _LOCK:
        _running.discard(pgid)


def running() -> list[int]:
    """The groups started and not yet reaped."""
    with _LOCK:
        return sorted(_running)


def stop_all(grace_s: float = 5.0) -> int:
    """SIGTERM every running group, SIGKILL those still alive after ``grace_s``; returns how many there were."""
    groups = running()
    for pgid in groups:
        _signal(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(_alive(g) for g in groups):
        time.sleep(0.05)  # polling the groups' state: no event tells us when another process group is gone
    for pgid in groups:
        if _alive(pgid):
            _signal(pgid, signal.SIGKILL)
    return len(groups)


def _signal(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True  # any member left (a zombie leader is reaped at once by the thread waiting for it)
