"""Python parse trees for the Triton recipes: ``ast`` nodes to byte ranges, edits, re-parse check.

``ast`` reports line numbers and UTF-8 byte columns, so every node maps to an exact byte range of the
source; recipes express changes as ``Edit`` ranges (shared with the CUDA helpers) and ``apply_edits``
re-parses and compiles the result before anything is handed back.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence

from perfagent.rewrite.recipes._cuda import Edit, ParseError, splice
from perfagent.workloads.python_ast import parse_module

__all__ = ["Edit", "ParseError", "SourceMap", "apply_edits", "is_triton_jit", "jit_functions", "parse"]


def parse(source: str) -> ast.Module:
    """Parse Python source.

    Raises:
        ParseError: a syntax error (with its line).
    """
    try:
        return parse_module(source)
    except SyntaxError as exc:
        raise ParseError(f"the Python source does not parse (line {exc.lineno}: {exc.msg})") from exc


class SourceMap:
    """Byte offsets of ``ast`` positions in one source."""

    def __init__(self, source: str) -> None:
        self.data = source.encode("utf-8")
        self._starts = [0]
        for i, byte in enumerate(self.data):
            if byte == 0x0A:
                self._starts.append(i + 1)

    def offset(self, lineno: int, col: int) -> int:
        """Byte offset of (1-based line, UTF-8 byte column)."""
        return self._starts[lineno - 1] + col

    def span(self, node: ast.AST) -> tuple[int, int]:
        """[start, end) byte range of an expression or statement."""
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end_line = node.end_lineno  # type: ignore[attr-defined]
        end_col = node.end_col_offset  # type: ignore[attr-defined]
        assert end_line is not None and end_col is not None
        return start, self.offset(end_line, end_col)

    def line_span(self, node: ast.stmt) -> tuple[int, int]:
        """[start of the statement's first line, end of its last line including the newline)."""
        start = self._starts[node.lineno - 1]
        assert node.end_lineno is not None
        end = self._starts[node.end_lineno] if node.end_lineno < len(self._starts) else len(self.data)
        return start, end

    def indent(self, node: ast.stmt) -> str:
        start = self._starts[node.lineno - 1]
        return self.data[start : start + node.col_offset].decode("utf-8")

    def text(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.data[start:end].decode("utf-8")


def apply_edits(source: str, edits: Sequence[Edit]) -> str:
    """Apply non-overlapping edits; the result must parse and compile.

    Raises:
        ValueError: overlapping edits.
        ParseError: the edited source is not valid Python.
    """
    result = splice(source, edits)
    try:
        compile(result, "<candidate>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise ParseError(f"the edited source does not parse (line {exc.lineno}: {exc.msg})") from exc
    return result


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    return ""


def is_triton_jit(decorator: ast.expr) -> bool:
    """``@triton.jit``, ``@jit``, ``@triton.jit(...)``."""
    name = _dotted(decorator)
    return name in ("triton.jit", "jit")


def is_autotune(decorator: ast.expr) -> bool:
    return _dotted(decorator) in ("triton.autotune", "autotune")


def jit_functions(tree: ast.Module) -> Iterator[ast.FunctionDef]:
    """Every ``@triton.jit`` function (at any depth)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any(is_triton_jit(d) for d in node.decorator_list):
            yield node


def constexpr_params(fn: ast.FunctionDef) -> list[str]:
    """Parameters annotated ``tl.constexpr`` / ``triton.language.constexpr`` / ``constexpr``."""
    return [
        arg.arg
        for arg in fn.args.args + fn.args.kwonlyargs
        if arg.annotation is not None and _dotted(arg.annotation).endswith("constexpr")
    ]


def dotted(node: ast.AST) -> str:
    """'a.b.c' for names, attributes and calls of them; '' otherwise."""
    return _dotted(node)


def int_value(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


def assignments(body: list[ast.stmt]) -> dict[str, ast.Assign]:
    """``NAME = value`` statements directly in ``body`` (the last one wins)."""
    found: dict[str, ast.Assign] = {}
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            found[stmt.targets[0].id] = stmt
    return found


def enclosing_function(tree: ast.Module, target: ast.AST) -> ast.FunctionDef | None:
    """The innermost function definition containing ``target``."""
    best: ast.FunctionDef | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any(child is target for child in ast.walk(node)):
            if best is None or (
                node.lineno >= best.lineno and (node.end_lineno or 0) <= (best.end_lineno or 0)
            ):
                best = node
    return best


def launches_of(tree: ast.Module, kernel: str) -> Iterator[ast.Call]:
    """Every ``kernel[grid](...)`` call."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
            if dotted(node.func.value).split(".")[-1] == kernel:
                yield node


def keyword_int_site(tree: ast.Module, call: ast.Call, keyword: str) -> tuple[int, ast.expr, str] | None:
    """(value, node holding the literal, where) of ``keyword=<int>`` in a launch, following a name
    bound to an integer literal in the launching function or at module level; None otherwise."""
    kw = next((k for k in call.keywords if k.arg == keyword), None)
    if kw is None:
        return None
    value = int_value(kw.value)
    if value is not None:
        return value, kw.value, f"{keyword}={value} at line {kw.value.lineno}"
    if isinstance(kw.value, ast.Name):
        fn = enclosing_function(tree, call)
        bound = (assignments(fn.body) if fn is not None else {}).get(kw.value.id) or assignments(
            tree.body
        ).get(kw.value.id)
        if bound is not None:
            literal = int_value(bound.value)
            if literal is not None:
                return literal, bound.value, f"{kw.value.id} = {literal} at line {bound.lineno}"
    return None
