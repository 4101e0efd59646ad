"""The cooperative-row analysis' memory pass: every subscript of the kernel, whose buffer, written or read,
in which loop, at which index (see ``_coop_row_analysis.Analysis``).

A buffer stored in the loops must be reached at one index pattern, in loops of one shape, so that each lane
owns its elements; a buffer stored outside the loops is stored by lane 0 alone (``Plan.scalar_stores``).
"""

from __future__ import annotations

from typing import Protocol

from tree_sitter import Node

from perfagent.rewrite.recipes import _coop_row_atomics, _coop_row_offsets, _cuda
from perfagent.rewrite.recipes._coop_row_nest import check_store_index, shape
from perfagent.rewrite.recipes._coop_row_syntax import (
    Loop,
    Plan,
    Refused,
    ancestors,
    is_written,
    names_read,
    normal_form,
    store_statement,
    subscript_index,
    unwrap,
)


class _Scanned(Protocol):
    """What the memory pass reads of the cooperative-row analysis (and the plan it adds lane 0's stores to)."""

    body: Node
    pointers: dict[str, str]
    alias_values: list[tuple[int, int]]
    assigned: set[str]
    declared: dict[str, int]
    atomics: list[_coop_row_atomics.Site]
    plan: Plan


def check_memory(scan: _Scanned, loops: list[Loop]) -> None:
    """Every subscript: whose buffer, written or read, in which loop, at which index."""
    for buffer, uses in _accesses(scan, loops).items():
        if not any(w for _, _, w, _ in uses):
            continue
        if any(lp is None for _, lp, _, _ in uses):
            _scalar_buffer(scan, buffer, uses)
            continue
        _check_loop_stores(scan, buffer, uses)


def _accesses(scan: _Scanned, loops: list[Loop]) -> dict[str, list[tuple[Node, Loop | None, bool, str]]]:
    """buffer -> its accesses: (subscript, its loop, written, the index's normal form)."""
    by_node = {lp.node.id: lp for lp in loops}
    accesses: dict[str, list[tuple[Node, Loop | None, bool, str]]] = {}
    for n in _cuda.walk(scan.body):
        if n.type == "identifier" and _cuda.text(n) in scan.pointers:
            _bare_pointer(scan, n)
        _pointer_operator(scan, n)
        if n.type != "subscript_expression":
            continue
        base = n.child_by_field_name("argument")
        if base is None or base.type != "identifier" or _cuda.text(base) not in scan.pointers:
            raise Refused(
                f"{_cuda.text(n)} on line {_cuda.line_of(n)}: {_cuda.text(base) if base is not None else '?'} is "
                "neither a pointer parameter nor a row pointer into one"
            )
        if any(s <= n.start_byte < e for s, e in scan.alias_values) or _atomic_target(scan, n):
            continue  # &p[row * n] in a row pointer's value, &p[i] of an atomic: an address, not an access
        loop = next((by_node[a.id] for a in ancestors(n) if a.id in by_node), None)
        index = subscript_index(n)
        if index is None:
            raise Refused(f"{_cuda.text(n)} on line {_cuda.line_of(n)} has no single index")
        pattern = f"{_cuda.text(base)}[{normal_form(index, loop)}]"
        accesses.setdefault(scan.pointers[_cuda.text(base)], []).append((n, loop, is_written(n), pattern))
    return accesses


def _pointer_operator(scan: _Scanned, n: Node) -> None:
    """Refuse ``&x`` (but a row pointer's value or an atomic's target) and ``*p``: only subscripts
    are followed."""
    op = n.child_by_field_name("operator") if n.type == "pointer_expression" else None
    if (
        op is not None
        and _cuda.text(op) == "&"
        and not any(s <= n.start_byte < e for s, e in scan.alias_values)
        and not any(unwrap(a.target).id == n.id for a in scan.atomics)
    ):
        raise Refused(
            f"{_cuda.text(n)} on line {_cuda.line_of(n)} takes an address: what is written through it is unknown"
        )
    if op is not None and _cuda.text(op) == "*":
        raise Refused(
            f"{_cuda.text(n)} on line {_cuda.line_of(n)} dereferences a pointer: only subscripts are followed"
        )


def _check_loop_stores(scan: _Scanned, buffer: str, uses: list[tuple[Node, Loop | None, bool, str]]) -> None:
    """A buffer stored in loops: every access at one index pattern, in loops of one shape, through
    names that mean the same in every pass, so that each lane owns its elements."""
    first, first_loop, _, pattern = uses[0]
    assert first_loop is not None
    for n, lp, _, other in uses:
        assert lp is not None
        for part, scope, what in (
            (n, lp, "the subscript"),
            (lp.start, None, "the start of its loop"),
        ):
            for name in names_read(part, scope):
                if name in scan.assigned or scan.declared.get(name, 0) > 1:
                    raise Refused(
                        f"{buffer} is stored in a loop and {what} {_cuda.text(part)} (line {_cuda.line_of(part)}) "
                        f"uses {name}, which is assigned or declared more than once: the same text "
                        "may name other elements in another pass"
                    )
        if other != pattern:
            apart = (
                _coop_row_offsets.disjoint([u[0] for u in uses], first_loop)
                if lp is first_loop
                else "two passes"
            )
            if apart is not None:
                raise Refused(
                    f"{buffer} is stored in a loop and reached as {_cuda.text(first)} (line {_cuda.line_of(first)}) "
                    f"and {_cuda.text(n)} (line {_cuda.line_of(n)}): lanes would share its elements ({apart})"
                )
        if shape(lp) != shape(first_loop):
            raise Refused(
                f"{buffer} is stored in the loops on lines {_cuda.line_of(first_loop.node)} and "
                f"{_cuda.line_of(lp.node)}, which start at {_cuda.text(first_loop.start)} and "
                f"{_cuda.text(lp.start)}: its elements would change lanes between the passes"
            )
        check_store_index(n, lp)


def _atomic_target(scan: _Scanned, sub: Node) -> bool:
    return any(a.subscript is not None and a.subscript.id == sub.id for a in scan.atomics)


def _scalar_buffer(scan: _Scanned, buffer: str, uses: list[tuple[Node, Loop | None, bool, str]]) -> None:
    for n, lp, _, _ in uses:
        if lp is not None:
            raise Refused(
                f"{buffer} is stored outside the loops and reached in the loop on line {_cuda.line_of(lp.node)}: "
                "lane 0 alone stores it"
            )
        stmt = store_statement(n)
        if stmt is None:
            raise Refused(
                f"{buffer} is stored outside the loops and read on line {_cuda.line_of(n)} outside that store: "
                "lane 0 alone stores it"
            )
        if all(s.id != stmt.id for s in scan.plan.scalar_stores):
            scan.plan.scalar_stores.append(stmt)


def _bare_pointer(scan: _Scanned, ident: Node) -> None:
    parent = ident.parent
    if (
        parent is not None
        and parent.type == "subscript_expression"
        and parent.child_by_field_name("argument") == ident
    ):
        return
    if any(s <= ident.start_byte < e for s, e in scan.alias_values):
        return
    if any(a.subscript is None and a.pointer == _cuda.text(ident) for a in scan.atomics):
        if _coop_row_atomics.in_target(ident, scan.atomics):
            return  # the p of an atomic's p + index
    if parent is not None and parent.type in ("pointer_declarator", "init_declarator"):
        if parent.child_by_field_name("declarator") == ident:
            return
    raise Refused(
        f"the pointer {_cuda.text(ident)} is used on line {_cuda.line_of(ident)} other than by subscript "
        f"({_cuda.text(parent) if parent is not None else ''})"
    )
