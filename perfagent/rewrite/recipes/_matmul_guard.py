"""Where a naive matmul nest sits in its kernel (``_matmul_nest``): behind a bounds-check ``if``, after an
early return, or unguarded; and the row/column bounds the guard writes."""

from __future__ import annotations

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._cuda import strip
from perfagent.rewrite.recipes._matmul_syntax import (
    Bound,
    KernelScan,
    ident,
    is_return,
    operator_of,
    sides,
    statements,
)


def place(
    loop: Node, body: Node, row: str, col: str, scan: KernelScan
) -> tuple[str, Node | None, list[Node], list[Node], dict[str, Bound]] | str:
    """(guard kind, guard statement, pre, post, bounds) of where the loop sits in the kernel body."""
    top = statements(body)
    holder = loop.parent
    if holder == body:
        idx = top.index(loop)
        returns = [
            i
            for i, s in enumerate(top[:idx])
            if s.type == "if_statement" and is_return(s.child_by_field_name("consequence"))
        ]
        post = top[idx + 1 :]
        if not returns:
            return "none", None, [], post, {}  # what precedes the loop already runs in every thread
        if len(returns) > 1:
            return f"line {_cuda.line_of(top[returns[1]])}: more than one early return before the loop"
        stmt = top[returns[0]]
        if stmt.child_by_field_name("alternative") is not None:
            return f"line {_cuda.line_of(stmt)}: the early-return guard has an else branch"
        cond = stmt.child_by_field_name("condition")
        value = cond.child_by_field_name("value") if cond is not None else None
        if value is None:
            return f"line {_cuda.line_of(stmt)}: the guard has no condition"
        bounds = guard_bounds(value, True, row, col, scan)
        if isinstance(bounds, str):
            return bounds
        return "return", stmt, top[returns[0] + 1 : idx], post, bounds
    if holder is None or holder.type != "compound_statement":
        return f"line {_cuda.line_of(loop)}: the loop is not a statement of a block"
    guard = holder.parent
    if guard is None or guard.type != "if_statement" or guard.parent != body:
        return f"line {_cuda.line_of(loop)}: the loop is nested in something other than one bounds-check `if`"
    if guard.child_by_field_name("alternative") is not None:
        return f"line {_cuda.line_of(guard)}: the bounds check has an else branch"
    if top.index(guard) != len(top) - 1:
        return f"line {_cuda.line_of(guard)}: statements follow the bounds-checked block"
    cond = guard.child_by_field_name("condition")
    value = cond.child_by_field_name("value") if cond is not None else None
    if value is None:
        return f"line {_cuda.line_of(guard)}: the guard has no condition"
    bounds = guard_bounds(value, False, row, col, scan)
    if isinstance(bounds, str):
        return bounds
    inner = statements(holder)
    idx = inner.index(loop)
    return "if", guard, inner[:idx], inner[idx + 1 :], bounds


def guard_bounds(cond: Node, negated: bool, row: str, col: str, scan: KernelScan) -> dict[str, Bound] | str:
    """{row: ..., col: ...} from ``row < M && col < N`` (negated: ``row >= M || col >= N``)."""
    joiner = "||" if negated else "&&"
    parts: list[Node] = []

    def split(n: Node) -> None:
        n = strip(n)
        if n.type == "binary_expression" and operator_of(n) == joiner:
            left, right = sides(n)
            split(left)
            split(right)
        else:
            parts.append(n)

    split(cond)
    found: dict[str, Bound] = {}
    flip = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}
    for p in parts:
        if p.type != "binary_expression" or operator_of(p) not in flip:
            return f"line {_cuda.line_of(p)}: the guard term {_cuda.text(p)} is not a bound on the row or the column"
        left, right = sides(p)
        op = operator_of(p)
        var, bound, lt = (
            (ident(left), right, op) if ident(left) in (row, col) else (ident(right), left, flip[op])
        )
        wanted = ">=" if negated else "<"
        if var not in (row, col) or lt != wanted or var in found:
            return (
                f"line {_cuda.line_of(p)}: the guard term {_cuda.text(p)} is not `{row}/{col} {wanted} bound`"
            )
        if not scan.uniform(bound):
            return f"line {_cuda.line_of(p)}: the bound {_cuda.text(bound)} is not the same in every thread"
        var_text = _cuda.text(left) if ident(left) == var else _cuda.text(right)
        text = (
            f"{var_text} < {_cuda.text(bound)}"
            if (ident(left) == var)
            else f"{_cuda.text(bound)} > {var_text}"
        )
        found[var] = Bound(var=var, text=text, bound=bound)
    if set(found) != {row, col}:
        return f"the guard does not bound both {row} and {col}"
    return found
