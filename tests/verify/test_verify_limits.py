"""The time limits a verification worker gets: compute-sanitizer's memcheck widens them (and says so)."""

from __future__ import annotations

from perfagent.verify.api import _limits


def test_the_sanitizer_widens_the_call_and_compile_limits_and_says_so() -> None:
    call_s, compile_s, notes = _limits(60.0, 600.0, sanitizer=True)
    assert (call_s, compile_s) == (1200.0, 1800.0)
    assert notes == ["compute-sanitizer memcheck: per-call time limits were multiplied by 20"]


def test_without_the_sanitizer_the_limits_are_the_ones_asked_for() -> None:
    assert _limits(7.5, 90.0, sanitizer=False) == (7.5, 90.0, [])
