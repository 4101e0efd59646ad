"""perfagent turns SIGINT/SIGTERM/SIGHUP into KeyboardInterrupt, but keeps a signal its user asked to ignore
(``nohup`` ignores SIGHUP; a background job of a non-interactive shell ignores SIGINT)."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

from perfagent.commands.signals import interrupts_as_keyboard_interrupt


@pytest.fixture
def hup_ignored() -> Iterator[None]:
    before = signal.getsignal(signal.SIGHUP)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGHUP, before)


def test_an_ignored_sighup_stays_ignored_and_sigterm_still_interrupts(hup_ignored: None) -> None:
    with interrupts_as_keyboard_interrupt():
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        signal.raise_signal(signal.SIGHUP)  # ignored: nothing happens
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGTERM)
    assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN


def test_the_handlers_are_restored_after_the_command() -> None:
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    with interrupts_as_keyboard_interrupt():
        assert signal.getsignal(signal.SIGTERM) is not before[signal.SIGTERM]
    assert {s: signal.getsignal(s) for s in before} == before
