"""A fresh worker started ahead: its interpreter start and imports overlap the caller's other work.

A confined GPU worker cannot be forked from the warm server (``runner.gpu_confined_by_bubblewrap_alone``),
so each one is a new interpreter that imports torch and perfagent's worker modules (3.3-5.1 s on the H200
host, ``tests/gpu/h200x4_2026-11-26c/worker_startup.txt``) before it reads its request; an optimize run
starts four or more (the original's timing, one per iteration). Within ``ahead``, one such worker is kept
started: it imports and then waits on stdin for its nonce, and ``take`` hands it to the next fresh worker
start, which writes the request and sends the nonce. So the imports run while ncu profiles the original
or the last winner, or while the rewriter proposes, instead of in front of the verification.

Nothing about the worker changes: the same command line (bubblewrap, its own folder, the environment)
that a fresh start would get now, checked when it is taken (a spare that differs, or died, is discarded and
the worker starts fresh); it runs one request and exits. It only imports before the request exists: no
CUDA context and no GPU work, so a measurement running meanwhile is not disturbed.
``PERFAGENT_WORKER_STANDBY=0`` turns it off (to measure the difference).
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from profilers.errors import ProfilerUnavailable
from profilers.process import Standby, start_standby

__all__ = ["STANDBY_ENV", "Command", "Spare", "ahead", "counts", "enabled", "take"]

STANDBY_ENV = "PERFAGENT_WORKER_STANDBY"
"""``0``: no worker is started ahead (every fresh worker starts when it is needed)."""

Command = Callable[[Path], tuple[list[str], dict[str, str]]]
"""A worker folder -> the command line and environment a fresh worker in it gets now (its request file
is the command line's last argument)."""


@dataclass
class Spare:
    """A worker started ahead, in its own folder, waiting for its nonce."""

    work: Path
    argv: list[str]
    """The command line a fresh start would have (without the standby's preload arguments)."""
    env: dict[str, str]
    process: Standby


@dataclass
class Counts:
    """Fresh worker starts in this process: started ahead, taken by a start, started with none waiting
    (``missed``), and started ahead but discarded unused."""

    started: int = 0
    taken: int = 0
    missed: int = 0
    discarded: int = 0


class _Pool:
    """At most one spare; kept started while some ``ahead`` block is open (they may nest or overlap)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.open = 0
        self.spare: Spare | None = None
        self.start: Callable[[], Spare | None] | None = None
        self.counts = Counts()


_POOL = _Pool()


def enabled() -> bool:
    return os.environ.get(STANDBY_ENV, "1").strip() != "0"


def counts() -> Counts:
    """This process's counts so far (a copy)."""
    with _POOL.lock:
        c = _POOL.counts
        return Counts(c.started, c.taken, c.missed, c.discarded)


@contextmanager
def ahead(command: Command, new_work: Callable[[], Path], preload: tuple[str, ...]) -> Iterator[None]:
    """Keep one worker started ahead while inside (``command``: what a fresh worker gets; ``new_work``: a
    new worker folder; ``preload``: the modules it imports before its request exists)."""
    if not enabled():
        yield
        return

    def start() -> Spare | None:
        work = new_work()
        argv, env = command(work)
        standby_argv = [*argv[:-1], "--standby", ",".join(preload), argv[-1]]
        try:
            process = start_standby(standby_argv, cwd=work, env=env)
        except ProfilerUnavailable:  # the fresh start will say why, as without a standby
            shutil.rmtree(work, ignore_errors=True)
            return None
        return Spare(work, argv, env, process)

    with _POOL.lock:
        _POOL.open += 1
        _POOL.start = start
    _refill()
    try:
        yield
    finally:
        with _POOL.lock:
            _POOL.open -= 1
            spare = _POOL.spare if _POOL.open == 0 else None
            if spare is not None:
                _POOL.spare, _POOL.start = None, None
        if spare is not None:
            _discard(spare)


def take(command: Command) -> Spare | None:
    """The spare, when it is exactly what a fresh worker would be now (``command``) and still running;
    another is started in its place while an ``ahead`` block is open."""
    with _POOL.lock:
        spare, _POOL.spare = _POOL.spare, None
    if spare is not None and (not spare.process.alive or (spare.argv, spare.env) != command(spare.work)):
        _discard(spare)
        spare = None
    with _POOL.lock:
        if spare is not None:
            _POOL.counts.taken += 1
        else:
            _POOL.counts.missed += 1
    _refill()
    return spare


def _refill() -> None:
    """Start a spare when an ``ahead`` block is open and none is waiting."""
    with _POOL.lock:
        start = _POOL.start if _POOL.open and _POOL.spare is None else None
    if start is None:
        return
    spare = start()
    if spare is None:
        return
    with _POOL.lock:
        if _POOL.open and _POOL.spare is None:
            _POOL.spare, spare = spare, None
            _POOL.counts.started += 1
    if spare is not None:  # the block closed, or another thread refilled meanwhile
        spare.process.cancel()
        shutil.rmtree(spare.work, ignore_errors=True)


def _discard(spare: Spare) -> None:
    spare.process.cancel()
    shutil.rmtree(spare.work, ignore_errors=True)
    with _POOL.lock:
        _POOL.counts.discarded += 1
