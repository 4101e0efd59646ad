"""Which comparisons hold at a point of a kernel, and which names it declares or writes (``_index_range``'s).

``guards(node, kernel)`` walks up from ``node``: an enclosing ``if`` gives its condition (a conjunction
when ``node`` is in the then-branch, a negated disjunction in the else-branch), an enclosing loop its
condition for the body, and an ``if (...) return;`` / ``continue;`` earlier in an enclosing block the
negation of its condition. Only comparisons of a name with an expression are kept; anything else gives
nothing (never a wrong comparison).
"""

from __future__ import annotations

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._chunk_syntax import ident, operator

_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
_NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}


def params(kernel: Node) -> set[str]:
    return {name for name, _, _ in _cuda.kernel_params(kernel)}


def declared_names(kernel: Node) -> set[str]:
    """Every local declared in the body (with or without an initialiser)."""
    body = kernel.child_by_field_name("body") or kernel
    out = set()
    for n in _cuda.walk(body):
        if n.type == "init_declarator":
            n = n.child_by_field_name("declarator") or n
        if (
            n.type == "identifier"
            and n.parent is not None
            and n.parent.type in ("declaration", "init_declarator")
        ):
            if n.parent.type == "declaration" or n.parent.child_by_field_name("declarator") == n:
                out.add(_cuda.text(n))
    return out


def writes(scope: Node) -> list[Node]:
    out = []
    for n in _cuda.walk(scope):
        if n.type == "assignment_expression":
            out.append(n.child_by_field_name("left"))
        elif n.type == "update_expression":
            out.append(n.child_by_field_name("argument"))
    return [t for t in out if t is not None]


def guards(node: Node, kernel: Node) -> list[tuple[str, str, Node]]:
    """(name, '<', '<=', '>' or '>=', bound) for every comparison that holds at ``node``."""
    out: list[tuple[str, str, Node]] = []
    child, parent = node, node.parent
    while parent is not None and parent.id != kernel.id:
        if parent.type == "if_statement":
            if child == parent.child_by_field_name("consequence"):
                out += _atoms(parent.child_by_field_name("condition"), True)
            elif child == parent.child_by_field_name("alternative"):
                out += _atoms(parent.child_by_field_name("condition"), False)
        elif parent.type in ("for_statement", "while_statement") and child == parent.child_by_field_name(
            "body"
        ):
            out += _atoms(parent.child_by_field_name("condition"), True)
        elif parent.type == "compound_statement":
            for earlier in parent.named_children:
                if earlier.start_byte >= child.start_byte:
                    break
                if earlier.type == "if_statement" and exits(earlier):
                    out += _atoms(earlier.child_by_field_name("condition"), False)
        child, parent = parent, parent.parent
    return out


def exits(stmt: Node) -> bool:
    """``if (c) return;`` / ``continue;`` (braces allowed), no else."""
    if stmt.type != "if_statement" or stmt.child_by_field_name("alternative") is not None:
        return False
    body = stmt.child_by_field_name("consequence")
    if body is not None and body.type == "compound_statement" and len(body.named_children) == 1:
        body = body.named_children[0]
    return body is not None and body.type in ("return_statement", "continue_statement")


def _atoms(cond: Node | None, holds: bool) -> list[tuple[str, str, Node]]:
    """Comparisons ``name <op> bound`` that follow from ``cond`` being ``holds``: a conjunction when it
    holds, a negated disjunction when it does not; anything else gives nothing (never a wrong one)."""
    if cond is None:
        return []
    cond = _cuda.strip(cond)
    if cond.type == "condition_clause":
        inner = cond.child_by_field_name("value")
        return _atoms(inner, holds) if inner is not None else []
    if cond.type != "binary_expression":
        return []
    op = operator(cond)
    left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
    if op in ("&&", "||"):
        if (op == "&&") != holds:
            return []
        return _atoms(left, holds) + _atoms(right, holds)
    if op not in _FLIP or left is None or right is None:
        return []
    op = op if holds else _NEGATE[op]
    out = []
    if (name := ident(left)) is not None:
        out.append((name, op, right))
    if (name := ident(right)) is not None:
        out.append((name, _FLIP[op], left))
    return out
