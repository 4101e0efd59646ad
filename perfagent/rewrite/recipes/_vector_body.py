"""vectorize-access: the per-element body, where every ``p[i]`` becomes a lane of a vector.

In the body a pointer parameter appears as ``p[i]`` (a lane of a vector), or, when the body never writes
it, as ``p[<any index>]`` (a gather or broadcast read, ``scale[i % C]``, left a scalar load); ``i`` may
also be read as a value (each lane re-declares it); and nothing depends on which thread runs which
element: no ``__shared__``, no barriers or warp collectives, no
``threadIdx``/``blockIdx``/``blockDim``/``gridDim``, no atomics, no ``return`` / ``goto``, no ``break`` /
``continue`` leaving the body, no address of ``p[i]``, no assignment to a variable declared outside it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._vector_shape import Pointer, one_line, statements, strip

# Calls whose result depends on which threads run together: barriers, warp collectives, atomics.
COLLECTIVE = re.compile(
    r"^(?:atomic\w*|__sync\w*|__shfl\w*|__ballot\w*|__any\w*|__all\w*|__activemask|__match\w*|__reduce\w*)$"
)
LOOPS = frozenset({"for_statement", "while_statement", "do_statement", "for_range_loop"})
Kind = Literal["read", "write", "update"]
"""How the body uses one ``p[i]``: read only, overwritten by ``=``, or read and written (``+=``, ``++``,
passed to a call that may take it by reference)."""


@dataclass(frozen=True)
class Site:
    node: Node
    """The ``p[i]`` subscript expression."""
    pointer: str
    kind: Kind
    op: Node
    """What reads or writes it: the assignment, update or call (the subscript itself for a plain read)."""


def _leaves_body(jump: Node, body: Node) -> bool:
    """Whether a break/continue targets a loop (or switch) outside ``body``."""
    targets = LOOPS | ({"switch_statement"} if jump.type == "break_statement" else frozenset())
    node = jump.parent
    while node is not None and node != body:
        if node.type in targets:
            return False
        node = node.parent
    return True


def site_kind(sub: Node, pointer: Pointer) -> tuple[Kind, Node] | str:
    """How the body uses ``p[i]``; a field of it (``p[i].x`` of a ``__half2``) counts as part of it."""
    node, parent, partial = sub, sub.parent, False
    while parent is not None and (
        parent.type == "parenthesized_expression"
        or (parent.type == "field_expression" and parent.child_by_field_name("argument") == node)
    ):
        partial = partial or parent.type == "field_expression"
        node, parent = parent, parent.parent
    if parent is None:
        return "read", sub
    if parent.type == "assignment_expression" and parent.child_by_field_name("left") == node:
        op = _cuda.text(parent.child_by_field_name("operator") or parent)
        # Setting one field leaves the others as they were: load the element and store it back.
        return ("write" if op == "=" and not partial else "update"), parent
    if parent.type == "update_expression":
        return "update", parent
    if (
        parent.type == "pointer_expression"
        and _cuda.text(parent.child_by_field_name("operator") or parent) == "&"
    ):
        return f"takes the address of {_cuda.text(node)} at line {_cuda.line_of(sub)}"
    if not pointer.const and (
        parent.type == "argument_list" or (partial and parent.type == "call_expression")
    ):
        # A call may take it by reference (or be a member function) and write it: load and store it.
        return "update", parent.parent if parent.type == "argument_list" and parent.parent else parent
    return "read", sub


def _declared_in(body: Node) -> set[str]:
    """Names the body declares itself (its locals, loop variables included)."""
    names: set[str] = set()
    for node in _cuda.walk(body):
        if node.type not in ("declaration", "for_range_loop"):
            continue
        for declarator in node.children_by_field_name("declarator"):
            while (
                declarator.type != "identifier" and declarator.child_by_field_name("declarator") is not None
            ):
                declarator = declarator.child_by_field_name("declarator") or declarator
            names.add(_cuda.text(declarator))
    return names


def _assigned_root(node: Node) -> Node | None:
    """The variable an assignment or update writes: ``s.f``, ``v[k]``, ``*p``, ``(a)`` -> the identifier."""
    target = node.child_by_field_name("left" if node.type == "assignment_expression" else "argument")
    while target is not None and target.type != "identifier":
        if target.type in ("field_expression", "subscript_expression", "pointer_expression"):
            target = target.child_by_field_name("argument")
        elif target.type == "parenthesized_expression" and target.named_child_count == 1:
            target = target.named_children[0]
        else:
            return None
    return target


def refused_statement(node: Node, body: Node) -> str | None:
    """Why ``node`` (not an identifier) ties the body to its thread or leaves it, if it does."""
    at = f"at line {_cuda.line_of(node)}"
    kind = node.type
    if kind in ("return_statement", "goto_statement"):
        return f"'{one_line(node)}' {at} leaves the per-element body"
    if kind in ("break_statement", "continue_statement") and _leaves_body(node, body):
        return f"'{one_line(node)}' {at} leaves the per-element loop"
    if kind == "declaration" and _cuda.has_storage(node, "__shared__"):
        return f"__shared__ declaration {at}"
    if kind == "call_expression":
        callee = _cuda.text(node.child_by_field_name("function") or node).split("<")[0].strip()
        if COLLECTIVE.match(callee):
            return f"{callee} {at} depends on which threads run which elements"
    return None


def _carried(node: Node, locals_: set[str], pointers: dict[str, Pointer]) -> str | None:
    """Why an assignment or update carries state from one element to the next, if it does."""
    if node.type not in ("assignment_expression", "update_expression"):
        return None
    root = _assigned_root(node)
    name = _cuda.text(root) if root is not None else ""
    if root is None or (name not in locals_ and name not in pointers):
        at = f"at line {_cuda.line_of(node)}"
        return f"'{one_line(node)}' {at} assigns {name or 'something'} declared outside the per-element body"
    return None


def _index_use(node: Node, index: str, pointers: dict[str, Pointer]) -> str | None:
    """Why a use of the index is not ``p[i]`` of a pointer parameter, if it is not."""
    parent = node.parent
    sub = parent.parent if parent is not None and parent.type == "subscript_argument_list" else parent
    arg = sub.child_by_field_name("argument") if sub is not None else None
    if (
        sub is None
        or sub.type != "subscript_expression"
        or parent is None
        or parent.named_child_count != 1
        or arg is None
        or _cuda.text(arg) not in pointers
    ):
        return (
            f"the index {index} is used at line {_cuda.line_of(node)} in '{one_line(sub or node)}', "
            f"not only as p[{index}] of a pointer parameter"
        )
    return None


def _scaled(indices: Node, index: str) -> bool:
    """Whether a subscript multiplies the index (``p[i * F + k]``): a strided read, not a broadcast; its
    fix is the layout (coalesce-access), and vectorising the rest around it gains nothing."""
    for node in _cuda.walk(indices):
        if (
            node.type == "binary_expression"
            and _cuda.text(node.child_by_field_name("operator") or node) == "*"
        ):
            operands = (node.child_by_field_name("left"), node.child_by_field_name("right"))
            if any(o is not None and _cuda.text(strip(o)) == index for o in operands):
                return True
    return False


def _pointer_use(node: Node, index: str, pointer: Pointer) -> Site | str | None:
    """The site of a use of ``pointer``: ``p[i]``, or None for a read ``p[j]`` of another index (a gather)."""
    at = f"at line {_cuda.line_of(node)}"
    sub = node.parent
    indices = sub.child_by_field_name("indices") if sub is not None else None
    subscript = (
        sub is not None and sub.type == "subscript_expression" and sub.child_by_field_name("argument") == node
    )
    if (
        subscript
        and sub is not None
        and indices is not None
        and _cuda.text(indices).replace(" ", "") != f"[{index}]"
        and not _scaled(indices, index)
    ):
        how = site_kind(sub, pointer)
        if not isinstance(how, str) and how[0] == "read":
            return None
    if (
        sub is None
        or not subscript
        or indices is None
        or _cuda.text(indices).replace(" ", "") != f"[{index}]"
    ):
        name = pointer.name
        return (
            f"'{one_line(sub or node)}' {at} is not {name}[{index}] "
            f"(only {name}[{index}] maps onto the lanes of a vector)"
        )
    how = site_kind(sub, pointer)
    if isinstance(how, str):
        return how
    if how[0] != "read" and pointer.const:
        return f"{at} writes {pointer.name}, a pointer to const"
    return Site(sub, pointer.name, how[0], how[1])


def sites(body: Node, index: str, pointers: list[Pointer], dropped: set[str]) -> list[Site] | str:
    """Every ``p[i]`` of the body, or the first thing that ties the body to its thread or index."""
    by_name = {p.name: p for p in pointers}
    locals_ = _declared_in(body)
    found: list[Site] = []
    gathered: dict[str, Node] = {}
    carried: str | None = None
    for node in _cuda.walk(body):
        # State carried from one element to the next (several lanes per thread would change it) is
        # reported last, so that 'z + i is not z[i]' wins for '*(z + i) = ...'.
        carried = carried or _carried(node, locals_, by_name)
        why = refused_statement(node, body)
        if why is not None:
            return why
        if node.type != "identifier":
            continue
        name = _cuda.text(node)
        at = f"at line {_cuda.line_of(node)}"
        if name in _cuda.BUILTINS:
            return f"{name} {at} in the per-element body (the rewrite changes which thread handles which element)"
        if name in dropped and name != index:
            return f"'{name}' {at} is used in the per-element body (the rewrite computes its own index and stride)"
        if name in by_name:
            site = _pointer_use(node, index, by_name[name])
            if isinstance(site, str):
                return site
            if site is None:
                gathered.setdefault(name, node)
            else:
                found.append(site)
    if carried is not None:
        return carried
    loop = looping(body)
    if gathered and loop is not None:
        first = min(gathered.values(), key=lambda n: n.start_byte)
        return (
            f"{_cuda.text(first.parent or first)} is read at another index than {index} (line {_cuda.line_of(first)}) inside a "
            f"body that loops (line {_cuda.line_of(loop)}): a row-per-thread kernel, not element-wise"
        )
    for site in found:
        if site.kind != "read" and site.pointer in gathered:
            at = f"at line {_cuda.line_of(gathered[site.pointer])}"
            return (
                f"{site.pointer} is written as {site.pointer}[{index}] and read at another index {at}: "
                f"the lanes would reorder them"
            )
    if not found:
        return "the per-element body accesses no pointer parameter as p[i]"
    return found


def looping(body: Node) -> Node | None:
    """The first loop inside the per-element body, if any."""
    return next((n for n in _cuda.walk(body) if n.type in LOOPS), None)


def index_as_value(body: Node, index: str, pointers: list[Pointer]) -> bool:
    """Whether the body reads the index other than as ``p[i]`` (``i % C``, ``x[i + 1]``, ``(float)i``)."""
    by_name = {p.name: p for p in pointers}
    return any(
        node.type == "identifier"
        and _cuda.text(node) == index
        and _index_use(node, index, by_name) is not None
        for node in _cuda.walk(body)
    )


def _within(node: Node, outer: Node) -> bool:
    return outer.start_byte <= node.start_byte and node.end_byte <= outer.end_byte


def order_sensitive(a: Site, b: Site, body: Node) -> bool:
    """Whether write ``a`` and access ``b`` of another array give other results if both arrays are one buffer.

    The vector path loads every array before the lanes and stores after them, so a read of one array
    that follows a write of another (or a second write) would see the old value if the two were the
    same buffer. A read inside the right-hand side of the write comes first in the scalar code too.
    """
    if b.kind != "read":
        return True  # two writes: the later store wins
    loop = a.op.parent
    while loop is not None and _within(loop, body):
        if loop.type in LOOPS and _within(b.node, loop):
            return True  # a loop in the body (or the body itself) repeats both: the read may follow a write
        loop = loop.parent
    right = a.op.child_by_field_name("right") if a.op.type == "assignment_expression" else None
    if right is not None and _within(b.node, right):
        return False
    return b.node.end_byte > a.op.start_byte


def written_everywhere(body: Node, pointer: str) -> bool:
    """Whether a top-level ``p[i] = ...;`` sets every lane (then the array need not be loaded first)."""
    stmts = [body] if body.type != "compound_statement" else statements(body)
    for stmt in stmts:
        expr = stmt.named_children[0] if stmt.type == "expression_statement" and stmt.named_children else None
        left = expr.child_by_field_name("left") if expr is not None else None
        op = expr.child_by_field_name("operator") if expr is not None else None
        if (
            expr is not None
            and expr.type == "assignment_expression"
            and left is not None
            and op is not None
            and _cuda.text(op) == "="
            and left.type == "subscript_expression"
            and _cuda.text(left.child_by_field_name("argument") or left) == pointer
        ):
            return True
    return False
