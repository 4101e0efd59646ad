"""The launch-spec expression evaluator: arithmetic only, never eval."""

from __future__ import annotations

import pytest

from perfagent.workloads.expr import ExpressionError, evaluate, evaluate_int, names_in


@pytest.mark.parametrize(
    ("expr", "names", "expected"),
    [
        ("1 + 2 * 3", {}, 7),
        ("N // 8", {"N": 100}, 12),
        ("N / 8", {"N": 100}, 12.5),
        ("ceil_div(N, 32)", {"N": 1000}, 32),
        ("cdiv(N, 32)", {"N": 1024}, 32),
        ("max(1, min(M, 64))", {"M": 100}, 64),
        ("2 ** 10", {}, 1024),
        ("-(N % 7)", {"N": 10}, -3),
        ("int(N / 3)", {"N": 10}, 3),
        ("abs(-4)", {}, 4),
        ("2 * M * N * 4", {"M": 8192, "N": 8192}, 536870912),
        (42, {}, 42),
        (2.5, {}, 2.5),
    ],
)
def test_evaluates(expr: str | int | float, names: dict[str, int], expected: float) -> None:
    assert evaluate(expr, names) == expected


@pytest.mark.parametrize(
    "expr",
    [
        "__import__('os').system('true')",
        "open('x')",
        "N.bit_length()",
        "[1, 2]",
        "lambda: 1",
        "N if N else 1",
        "'text'",
        "2 ** 100000",
        "1 / 0",
        "ceil_div(4, 0)",
        "ceil_div(4)",
        "min()",
        "max(N, key=1)",
        "N < 3",
        "",
        "1 +",
        "True",
        "x" * 600,
    ],
)
def test_refuses(expr: str) -> None:
    with pytest.raises(ExpressionError):
        evaluate(expr, {"N": 3})


def test_unknown_name_lists_known_ones() -> None:
    with pytest.raises(ExpressionError, match="unknown name 'K'.*known: M, N"):
        evaluate("K * 2", {"M": 1, "N": 2})


def test_evaluate_int() -> None:
    assert evaluate_int("N / 2", {"N": 8}) == 4
    with pytest.raises(ExpressionError, match="not a whole number"):
        evaluate_int("N / 3", {"N": 8}, what="grid")


def test_names_in() -> None:
    assert names_in("ceil_div(width, TILE) * height") == {"width", "TILE", "height"}
    assert names_in(7) == set()
