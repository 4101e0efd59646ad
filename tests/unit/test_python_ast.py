"""perfagent parses Python one thread at a time (perfagent/workloads/python_ast.py).

CPython 3.11's AST constructor keeps its recursion depth in interpreter-wide state: two threads parsing
at once can fail with ``SystemError: AST constructor recursion depth mismatch`` (python/cpython#106905).
CI hit it once in tests/verify/test_adversarial.py, whose verifications run in a thread pool, as an
optimize iteration's do with ``--verify-jobs``. The race itself is rare, so the test makes it visible:
``ast.parse`` is replaced by a slow stand-in that records how many calls overlap.
"""

from __future__ import annotations

import ast
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from perfagent.workloads import python_ast
from perfagent.workloads.expr import evaluate_int
from perfagent.workloads.kernelbench import inspect_python

ROOT = Path(__file__).resolve().parents[2]


class _Overlap:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.inside = 0
        self.most = 0


@pytest.fixture
def overlap(monkeypatch: pytest.MonkeyPatch) -> _Overlap:
    seen = _Overlap()
    real = ast.parse

    def slow_parse(*args: Any, **kwargs: Any) -> Any:
        with seen.lock:
            seen.inside += 1
            seen.most = max(seen.most, seen.inside)
        try:
            time.sleep(0.005)  # long enough for another thread to enter if nothing stops it
            return real(*args, **kwargs)
        finally:
            with seen.lock:
                seen.inside -= 1

    monkeypatch.setattr(ast, "parse", slow_parse)
    return seen


def test_kernelbench_sources_are_parsed_one_thread_at_a_time(overlap: _Overlap) -> None:
    path = ROOT / "examples" / "kernelbench" / "01_vector_add_triton.py"
    with ThreadPoolExecutor(max_workers=8) as pool:
        infos = list(pool.map(lambda _: inspect_python(path), range(32)))
    assert all(i.backend == "triton" for i in infos)
    assert overlap.most == 1


def test_launch_expressions_are_parsed_one_thread_at_a_time(overlap: _Overlap) -> None:
    with ThreadPoolExecutor(max_workers=8) as pool:
        values = list(pool.map(lambda n: evaluate_int("ceil_div(n, 256)", {"n": n}), range(1, 33)))
    assert values == [1] * 32
    assert overlap.most == 1


def test_the_helpers_parse_as_ast_does() -> None:
    assert ast.dump(python_ast.parse_module("x = 1\n")) == ast.dump(ast.parse("x = 1\n"))
    assert ast.dump(python_ast.parse_expression("a + 1")) == ast.dump(ast.parse("a + 1", mode="eval"))
    with pytest.raises(SyntaxError):
        python_ast.parse_module("def (")
