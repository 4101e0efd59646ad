"""Ctrl-C, a closed terminal (SIGHUP) and SIGTERM all end a command the same way: at once, with a line
saying so, through ``KeyboardInterrupt`` (exit 130), so that every ``finally`` runs — worker processes
are stopped and temporary folders (``/tmp/perfagent-worker-*``, ``/tmp/perfagent-forked-*``) removed.

Python's default for SIGTERM and SIGHUP is to die on the spot, skipping all of that.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


def _interrupt(signum: int, _frame: FrameType | None) -> None:
    try:
        name = signal.Signals(signum).name
        print(f"perfagent: {name} — stopping (finished work is kept) …", file=sys.stderr, flush=True)
    except OSError:  # the terminal is gone (SIGHUP): nothing to tell
        pass
    raise KeyboardInterrupt


@contextmanager
def interrupts_as_keyboard_interrupt() -> Iterator[None]:
    """Within the block, SIGINT/SIGTERM/SIGHUP raise ``KeyboardInterrupt`` in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread (e.g. main() called from a test thread)
        return
    previous = {s: signal.getsignal(s) for s in _SIGNALS}
    for s in _SIGNALS:
        if previous[s] is signal.SIG_IGN:  # e.g. nohup: the user asked for SIGHUP to be ignored
            continue
        signal.signal(s, _interrupt)
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
