"""The recipes' compile check: each distinct source is compiled once per process, the original and its
candidates compile at once, and what the checks cost is counted (the optimize record's compile-check stage)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from perfagent.rewrite.recipes import _compile_check
from tests.rewrite.helpers import nvcc_or_skip

KERNEL = 'extern "C" __global__ void k(float* x) {{ x[threadIdx.x] = {value}; }}\n'


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    _compile_check.clear_cache()
    yield
    _compile_check.clear_cache()


def test_each_distinct_source_is_compiled_once(monkeypatch: pytest.MonkeyPatch) -> None:
    nvcc_or_skip()
    monkeypatch.setenv(_compile_check.ENV, "nvcc")
    original, good = KERNEL.format(value="1.0f"), KERNEL.format(value="2.0f")
    bad = KERNEL.format(value="undeclared_name")
    before = _compile_check.spent()
    assert _compile_check.compile_error(original, good) is None
    assert _compile_check.compile_error(original, good) is None
    errors = _compile_check.compile_errors(original, [(good, ()), (bad, ()), (bad, ())])
    assert errors[0] is None and errors[1] == errors[2]
    assert errors[1] is not None and errors[1].startswith("nvcc: ") and "undeclared_name" in errors[1]
    after = _compile_check.spent()
    # three distinct sources compiled, every other check answered from them
    assert after.compiles - before.compiles == 3
    assert after.reused - before.reused == 5
    assert after.wait_s > before.wait_s


def test_the_original_and_the_candidates_compile_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both compiles must be running together to pass the barrier: one after the other breaks it."""
    together = threading.Barrier(3, timeout=60)
    seen: list[str] = []

    def compile_in_step(source: str, defines: _compile_check.Defines) -> str | None:
        seen.append(source)
        try:
            together.wait()
        except threading.BrokenBarrierError:
            return "compiled one after the other"
        return None

    monkeypatch.setattr(_compile_check, "compiler", lambda: "nvcc")
    monkeypatch.setattr(_compile_check, "_nvcc", compile_in_step)
    original = KERNEL.format(value="3.0f")
    candidates = [(KERNEL.format(value="4.0f"), ()), (KERNEL.format(value="5.0f"), ())]
    assert _compile_check.compile_errors(original, candidates) == [None, None]
    assert sorted(seen) == sorted([original, *(s for s, _ in candidates)])


def test_no_candidate_is_compiled_once_the_original_is_known_not_to_build(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compiled: list[str] = []

    def original_fails(source: str, defines: _compile_check.Defines) -> str | None:
        compiled.append(source)
        return "error: cannot open torch/extension.h" if "torch" in source else None

    monkeypatch.setattr(_compile_check, "compiler", lambda: "nvcc")
    monkeypatch.setattr(_compile_check, "_nvcc", original_fails)
    original = "#include <torch/extension.h>\n" + KERNEL.format(value="6.0f")
    first = KERNEL.format(value="7.0f")
    assert _compile_check.compile_error(original, first) is None  # no verdict: the environment's fault
    later = [KERNEL.format(value="8.0f"), KERNEL.format(value="9.0f")]
    assert _compile_check.compile_errors(original, [(s, ()) for s in later]) == [None, None]
    assert not set(later) & set(compiled)
    assert compiled.count(original) == 1
