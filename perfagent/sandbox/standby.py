"""A fresh worker started ahead: its interpreter start and imports overlap the caller's other work.

A confined GPU worker cannot be forked from the warm server (``runner.gpu_confined_by_bubblewrap_alone``),
so each one is a new interpreter that imports torch and perfagent's worker modules (3.3-5.1 s on the H200
host, ``tests/gpu/h200x4_2026-11-26c/worker_startup.txt``) before it reads its request; an optimize run
starts four or more (the original's timing, one per iteration). Within ``ahead``, such workers are kept
started (``SPARES``): each imports, then waits on stdin for its nonce, and ``take`` hands the oldest to the
next fresh worker start, which writes the request and sends the nonce. So the imports run while ncu
profiles the original or the last winner, or while the rewriter proposes, not in front of the
verification.

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
    """The spares, oldest first; kept started while some ``ahead`` block is open (blocks may nest or
    overlap: the last one's command and size hold)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.open = 0
        self.spares: list[Spare] = []
        self.size = 0
        self.start: Callable[[], Spare | None] | None = None
        self.counts = Counts()


_POOL = _Pool()
SPARES = 2
"""Workers kept started: an optimize run times the original and then, a second or two later, starts its
first iteration's worker; both can find one ready (started while ncu profiled the original)."""


def enabled() -> bool:
    return os.environ.get(STANDBY_ENV, "1").strip() != "0"


def counts() -> Counts:
    """This process's counts so far (a copy)."""
    with _POOL.lock:
        c = _POOL.counts
        return Counts(c.started, c.taken, c.missed, c.discarded)


@contextmanager
def ahead(
    command: Command, new_work: Callable[[], Path], preload: tuple[str, ...], spares: int = SPARES
) -> Iterator[None]:
    """Keep ``spares`` workers started ahead while inside (``command``: what a fresh worker gets;
    ``new_work``: a new worker folder; ``preload``: the modules it imports before its request exists)."""
    if not enabled() or spares < 1:
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
        _POOL.start, _POOL.size = start, spares
    _refill()
    try:
        yield
    finally:
        with _POOL.lock:
            _POOL.open -= 1
            left, _POOL.spares = (_POOL.spares, []) if _POOL.open == 0 else ([], _POOL.spares)
            if _POOL.open == 0:
                _POOL.start = None
        for spare in left:
            _discard(spare)


def take(command: Command) -> Spare | None:
    """The oldest spare that is exactly what a fresh worker would be now (``command``) and still running
    (others are discarded); new ones are started in place of those gone while an ``ahead`` block is open."""
    chosen = None
    while chosen is None:
        with _POOL.lock:
            spare = _POOL.spares.pop(0) if _POOL.spares else None
        if spare is None:
            break
        if spare.process.alive and (spare.argv, spare.env) == command(spare.work):
            chosen = spare
        else:
            _discard(spare)
    with _POOL.lock:
        if chosen is not None:
            _POOL.counts.taken += 1
        else:
            _POOL.counts.missed += 1
    _refill()
    return chosen


def _refill() -> None:
    """Start spares until an open ``ahead`` block's size is reached."""
    while True:
        with _POOL.lock:
            start = _POOL.start if _POOL.open and len(_POOL.spares) < _POOL.size else None
        if start is None:
            return
        spare = start()
        if spare is None:
            return
        with _POOL.lock:
            if _POOL.open and len(_POOL.spares) < _POOL.size:
                _POOL.spares.append(spare)
                _POOL.counts.started += 1
                continue
        # the block closed, or another thread filled the pool meanwhile
        spare.process.cancel()
        shutil.rmtree(spare.work, ignore_errors=True)
        return


def _discard(spare: Spare) -> None:
    spare.process.cancel()
    shutil.rmtree(spare.work, ignore_errors=True)
    with _POOL.lock:
        _POOL.counts.discarded += 1
