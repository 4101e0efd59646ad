"""How the worker process starts: forked from the warm server by default, a new interpreter under
compute-sanitizer or with ``PERFAGENT_WORKER_START=fresh``; both give the same verdicts.

The adversarial suite (``test_adversarial.py``) runs every cheat through the default (warm) start.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.sandbox import runner
from perfagent.verify import verify

CANDIDATES = Path(__file__).parent / "candidates"


def test_the_warm_start_is_the_default_but_not_under_the_sanitizer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(runner.WORKER_START_ENV, raising=False)
    assert runner.warm_start(sanitizer=False) is True
    assert runner.warm_start(sanitizer=True) is False  # compute-sanitizer must start the process itself
    monkeypatch.setenv(runner.WORKER_START_ENV, "fresh")
    assert runner.warm_start(sanitizer=False) is False


@pytest.mark.parametrize("candidate", ["honest_rowsum_reassoc.py", "cheat_exit.py", "cheat_segfault.py"])
def test_a_fresh_interpreter_and_a_forked_worker_judge_alike(
    monkeypatch: pytest.MonkeyPatch, candidate: str
) -> None:
    problem = CANDIDATES / ("problem_rowsum.py" if "rowsum" in candidate else "problem_add.py")
    verdicts = []
    for start in ("warm", "fresh"):
        monkeypatch.setenv(runner.WORKER_START_ENV, start)
        result = verify(problem, CANDIDATES / candidate, device="cpu", seeds=2, timeout_s=60)
        verdicts.append((result.verdict, sorted(c.name for c in result.checks if not c.passed)))
    assert verdicts[0] == verdicts[1]
    assert verdicts[0][0] == ("pass" if candidate.startswith("honest") else "fail")
