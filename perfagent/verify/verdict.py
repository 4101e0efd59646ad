"""From checks to a verdict: fail beats inconclusive beats pass."""

from __future__ import annotations

from collections.abc import Sequence

from perfagent.verify.models import Check, Verdict


def decide(checks: Sequence[Check]) -> tuple[Verdict, str]:
    """The verdict and a one-line reason.

    - any failed ``error`` check → ``fail`` (reason: the first one and how many);
    - else any failed ``inconclusive`` check → ``inconclusive`` (the reference cannot discriminate);
    - else, with at least one passing error check → ``pass``;
    - no checks at all → ``inconclusive`` (nothing was verified).
    """
    failed = [c for c in checks if not c.passed and c.severity == "error"]
    if failed:
        more = (
            f" (+{len(failed) - 1} more failed check{'s' if len(failed) > 2 else ''})"
            if len(failed) > 1
            else ""
        )
        return "fail", f"{failed[0].name}: {_first_line(failed[0].detail)}{more}"
    weak = [c for c in checks if not c.passed and c.severity == "inconclusive"]
    if weak:
        return "inconclusive", f"{weak[0].name}: {_first_line(weak[0].detail)}"
    if not any(c.severity == "error" for c in checks):
        return "inconclusive", "nothing was checked"
    return "pass", "every check passed"


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "failed"
