"""A small, safe arithmetic evaluator for launch-spec expressions (shapes, grid, block, sizes).

Launch specs say things like ``grid = ["ceil_div(N, 32)", "M // 8"]``. Those strings come from
files a user (or a rewriter) wrote, so they are never handed to ``eval``: they are parsed with
``ast`` and only numbers, names bound by the caller, ``+ - * / // % **``, unary ``+``/``-``,
parentheses and the calls ``min``, ``max``, ``ceil_div`` (alias ``cdiv``), ``int`` and ``abs``
are accepted. Anything else is an ``ExpressionError`` naming what was refused.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping

from perfagent.workloads.python_ast import parse_expression

Number = int | float

_MAX_EXPONENT = 64
_MAX_MAGNITUDE = 2**63
_MAX_LENGTH = 500


class ExpressionError(ValueError):
    """An expression is malformed, uses something not allowed, or names an unknown variable."""


def _ceil_div(a: Number, b: Number) -> int:
    if b == 0:
        raise ExpressionError("ceil_div by zero")
    return int(-(-a // b))


_FUNCTIONS: dict[str, Callable[..., Number]] = {
    "min": min,
    "max": max,
    "ceil_div": _ceil_div,
    "cdiv": _ceil_div,
    "int": int,
    "abs": abs,
}


def evaluate(expression: str | int | float, names: Mapping[str, Number] | None = None) -> Number:
    """Evaluate ``expression`` with ``names`` bound.

    Args:
        expression: an expression string, or a number (returned unchanged).
        names: variables the expression may use (launch-spec params, defines, device attributes).

    Returns:
        The value: an ``int`` when every operation stays integral (``/`` always gives a float).

    Raises:
        ExpressionError: syntax error, a construct outside the allowed set, an unknown name,
            division by zero, or a result too large to be a size.
    """
    if isinstance(expression, bool):
        raise ExpressionError("booleans are not numbers here")
    if isinstance(expression, int | float):
        return expression
    text = expression.strip()
    if not text:
        raise ExpressionError("empty expression")
    if len(text) > _MAX_LENGTH:
        raise ExpressionError(f"expression longer than {_MAX_LENGTH} characters")
    try:
        tree = parse_expression(text)
    except SyntaxError as exc:
        raise ExpressionError(f"cannot parse {text!r}: {exc.msg}") from None
    return _Evaluator(dict(names or {}), text).visit(tree.body)


def evaluate_int(
    expression: str | int | float, names: Mapping[str, Number] | None = None, *, what: str = "value"
) -> int:
    """``evaluate`` and require an integral result (floats like ``4.0`` are accepted).

    Raises:
        ExpressionError: as ``evaluate``, or the result is not a whole number.
    """
    value = evaluate(expression, names)
    if isinstance(value, float):
        if not math.isfinite(value) or value != int(value):
            raise ExpressionError(f"{what} {expression!r} = {value} is not a whole number")
        value = int(value)
    return value


def names_in(expression: str | int | float) -> set[str]:
    """The variable names an expression refers to (function names excluded)."""
    if not isinstance(expression, str):
        return set()
    try:
        tree = parse_expression(expression.strip())
    except SyntaxError:
        return set()
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - called


class _Evaluator:
    def __init__(self, names: dict[str, Number], text: str) -> None:
        self.names = names
        self.text = text

    def visit(self, node: ast.AST) -> Number:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, int | float):
                raise ExpressionError(f"only numbers are allowed, got {node.value!r} in {self.text!r}")
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in self.names:
                known = ", ".join(sorted(self.names)) or "none"
                raise ExpressionError(f"unknown name {node.id!r} in {self.text!r} (known: {known})")
            return self.names[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            value = self.visit(node.operand)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.BinOp):
            return self._binop(node)
        if isinstance(node, ast.Call):
            return self._call(node)
        raise ExpressionError(f"{type(node).__name__} is not allowed in {self.text!r}")

    def _binop(self, node: ast.BinOp) -> Number:
        left, right = self.visit(node.left), self.visit(node.right)
        op = node.op
        try:
            if isinstance(op, ast.Add):
                result: Number = left + right
            elif isinstance(op, ast.Sub):
                result = left - right
            elif isinstance(op, ast.Mult):
                result = left * right
            elif isinstance(op, ast.Div):
                result = left / right
            elif isinstance(op, ast.FloorDiv):
                result = left // right
            elif isinstance(op, ast.Mod):
                result = left % right
            elif isinstance(op, ast.Pow):
                if abs(right) > _MAX_EXPONENT:
                    raise ExpressionError(f"exponent {right} too large in {self.text!r}")
                result = left**right
            else:
                raise ExpressionError(f"operator {type(op).__name__} is not allowed in {self.text!r}")
        except ZeroDivisionError:
            raise ExpressionError(f"division by zero in {self.text!r}") from None
        if isinstance(result, complex):
            raise ExpressionError(f"complex result in {self.text!r}")
        if abs(result) > _MAX_MAGNITUDE:
            raise ExpressionError(f"value too large in {self.text!r}")
        return result

    def _call(self, node: ast.Call) -> Number:
        if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCTIONS:
            allowed = ", ".join(sorted(_FUNCTIONS))
            raise ExpressionError(f"only the functions {allowed} may be called in {self.text!r}")
        if node.keywords:
            raise ExpressionError(f"keyword arguments are not allowed in {self.text!r}")
        args = [self.visit(a) for a in node.args]
        name = node.func.id
        expected = {"ceil_div": 2, "cdiv": 2, "int": 1, "abs": 1}.get(name)
        if expected is not None and len(args) != expected:
            raise ExpressionError(f"{name}() takes {expected} arguments in {self.text!r}")
        if name in ("min", "max") and not args:
            raise ExpressionError(f"{name}() needs arguments in {self.text!r}")
        return _FUNCTIONS[name](*args)
