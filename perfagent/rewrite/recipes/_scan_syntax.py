"""cooperative-scan's syntax: the running-value update of a scan, the counted loop's counter, step and
direction, and the identity and combination of each associative operator (read by ``_scan_analysis``, the
analysis, and ``_scan_emit``, the rewrite)."""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._coop_row_syntax import reduction, unwrap


@dataclass(frozen=True)
class Update:
    """One running-value update: the accumulator, how it combines, the value it takes in."""

    acc: str
    combine: str
    contribution: str
    acc_nodes: list[Node]


_MAX_LIKE = {"fmaxf", "max", "fmax"}


def scan_update(expr: Node) -> Update | None:
    """``acc += e``, ``acc -= e``, ``acc *= e``, ``acc++``/``acc--``, ``acc = acc + e`` (``* e``, either order)
    or ``acc = fmaxf(acc, e)`` (any max/min, either order), with ``e`` free of ``acc``; None otherwise."""
    if expr.type == "update_expression":
        arg, op = expr.child_by_field_name("argument"), expr.child_by_field_name("operator")
        if arg is None or op is None or arg.type != "identifier":
            return None
        return Update(_cuda.text(arg), "+", "1" if _cuda.text(op) == "++" else "-1", [arg])
    if expr.type != "assignment_expression":
        return None
    left, right, op = (expr.child_by_field_name(f) for f in ("left", "right", "operator"))
    if left is None or right is None or op is None or left.type != "identifier":
        return None
    acc, o = _cuda.text(left), _cuda.text(op)
    if o in ("+=", "-=", "*="):
        if acc in _cuda.identifiers_in(right):
            return None
        value = f"({_cuda.text(right)})"
        return Update(acc, "*" if o == "*=" else "+", f"-{value}" if o == "-=" else value, [left])
    if o != "=":
        return None
    red = reduction(expr)  # acc = acc + e, e + acc, fmaxf(acc, e), ...
    body = unwrap(right)
    if red is not None:
        ids = {n.id for n in red[2]}
        if red[1] == "+":
            sides = [body.child_by_field_name("left"), body.child_by_field_name("right")]
        else:
            args = body.child_by_field_name("arguments")
            sides = [a for a in args.named_children if a.type != "comment"] if args is not None else []
        other = next((x for x in sides if x is not None and x.id not in ids), None)
        return Update(acc, red[1], f"({_cuda.text(other)})", red[2]) if other is not None else None
    if body.type == "binary_expression" and _cuda.text(body.child_by_field_name("operator") or body) == "*":
        a, b = body.child_by_field_name("left"), body.child_by_field_name("right")
        for mine, other in ((a, b), (b, a)):
            if (
                mine is not None
                and other is not None
                and mine.type == "identifier"
                and _cuda.text(mine) == acc
                and acc not in _cuda.identifiers_in(other)
            ):
                return Update(acc, "*", f"({_cuda.text(other)})", [left, mine])
    return None


def counter_and_step(loop: Node) -> tuple[str, Node, int] | str:
    """The loop's counter, its start and its step (+1 or -1)."""
    init, update = loop.child_by_field_name("initializer"), loop.child_by_field_name("update")
    if init is None or update is None:
        return f"the loop on line {_cuda.line_of(loop)} has no counter initialiser or update"
    decl = next((n for n in _cuda.walk(init) if n.type == "init_declarator"), None)
    name_node = decl.child_by_field_name("declarator") if decl is not None else None
    start = decl.child_by_field_name("value") if decl is not None else None
    if name_node is None or start is None:
        return f"the loop on line {_cuda.line_of(loop)} does not declare its counter with a start value"
    name = _cuda.text(name_node)
    step = _cuda.text(update).replace(" ", "")
    if step in (f"{name}++", f"++{name}", f"{name}+=1", f"{name}={name}+1"):
        return name, start, 1
    if step in (f"{name}--", f"--{name}", f"{name}-=1", f"{name}={name}-1"):
        return name, start, -1
    return f"the loop on line {_cuda.line_of(loop)} does not step by one ({_cuda.text(update)})"


def direction_ok(loop: Node, var: str, step: int) -> str | None:
    """Why the condition is not the counter compared with a bound free of it, in the direction it moves."""
    cond = loop.child_by_field_name("condition")
    cond = unwrap(cond) if cond is not None else None
    where = f"the loop on line {_cuda.line_of(loop)}"
    if cond is None or cond.type != "binary_expression":
        return f"{where} runs while {_cuda.text(cond) if cond is not None else 'nothing'}: not a comparison"
    op, left, right = (cond.child_by_field_name(f) for f in ("operator", "left", "right"))
    o = _cuda.text(op) if op is not None else ""
    if left is None or right is None or o not in ("<", "<=", ">", ">="):
        return f"{where} runs while {_cuda.text(cond)}: not a comparison"
    counter_left = _cuda.text(unwrap(left)) == var
    bound = right if counter_left else left
    if not counter_left and _cuda.text(unwrap(right)) != var or var in _cuda.identifiers_in(bound):
        return f"{where} runs while {_cuda.text(cond)}: not {var} compared with a bound free of it"
    upward = (o in ("<", "<=")) == counter_left
    if upward != (step > 0):
        return f"{where} steps {'up' if step > 0 else 'down'} but its condition {_cuda.text(cond)} bounds it the other way"
    return None


def identity(combine: str, typ: str) -> str:
    if combine == "+":
        return f"static_cast<{typ}>(0)"
    if combine == "*":
        return f"static_cast<{typ}>(1)"
    return f"static_cast<{typ}>({'-' if combine in _MAX_LIKE else ''}INFINITY)"


def combined(combine: str, a: str, b: str) -> str:
    return f"{a} {combine} {b}" if combine in ("+", "*") else f"{combine}({a}, {b})"


def reads_memory(node: Node) -> bool:
    return any(n.type == "subscript_expression" for n in _cuda.walk(node))


def mentions(node: Node, name: str) -> list[Node]:
    return [n for n in _cuda.walk(node) if n.type == "identifier" and _cuda.text(n) == name]
