"""cooperative-row over items whose passes update memory with atomics (scatter-add, index_add, segment sums).

A thread per item that walks a row of features and adds each one atomically into an output row
(``for (f = 0; f < F; ++f) atomicAdd(&agg[dst * F + f], feat[src * F + f])``: a GNN aggregation, a
COO SpMM, ``index_add``) makes the 32 lanes of a warp touch 32 rows on every iteration. Sharing the item
among lanes, as for a map pass, makes the loads and the atomics coalesced; the atomics stay per element
(no reduction across lanes is needed: each lane adds its own elements).

What is proven here, on top of the cooperative-row analysis (the caller raises ``Refused`` with the line):

- every atomic of the kernel is a statement (its old value unused) of a commutative, associative update
  (``atomicAdd``, ``atomicSub``, ``atomicMax``, ``atomicMin``, ``atomicAnd``, ``atomicOr``,
  ``atomicXor``: a serial order and any other give the same memory), whose address is ``&P[index]`` or
  ``P + index`` with ``P`` a pointer parameter or a row pointer into one;
- a buffer updated atomically is reached by nothing but atomics of one function (another thread's
  update may land between any two of them in the original too, so no plain read or store of it has a
  defined value, and two different updates of one element do not commute);
- inside a pass, the address is ``offset + i`` (unit stride in the pass's counter, the offset free of
  names an iteration reassigns, of names assigned or declared twice, and, in a nest, of outer counters
  outside a product with the inner bound): the lanes sharing one item update distinct elements, so
  splitting the iterations among them changes no element's set of updates, only who makes them;
- outside the passes, an atomic is made once per item, by the sharer that stores the scalars (lane 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._coop_row_nest import outer_counter_why
from perfagent.rewrite.recipes._coop_row_syntax import (
    Loop,
    Refused,
    inside,
    names_read,
    subscript_index,
    unit_stride,
    unwrap,
)

COMMUTATIVE = frozenset(
    {"atomicAdd", "atomicSub", "atomicMax", "atomicMin", "atomicAnd", "atomicOr", "atomicXor"}
)
"""Atomics whose updates of one element give the same result in any order (float sums: up to rounding)."""


class _Checked(Protocol):
    """What ``place`` reads of the cooperative-row analysis."""

    body: Node
    pointers: dict[str, str]
    assigned: set[str]
    declared: dict[str, int]


@dataclass(frozen=True)
class Site:
    """One ``atomicOp(address, value);`` statement."""

    statement: Node
    function: str
    pointer: str
    """The pointer the address is rooted at (a parameter or a row pointer)."""
    index: Node
    """What varies along the buffer: the subscript of ``&P[i]``, or the whole ``P + i`` (``P`` is part of
    the offset, which is all the unit-stride proof needs)."""
    target: Node
    """The address argument: computed, not read (its span is exempt from the memory-access checks)."""
    subscript: Node | None
    """The ``P[i]`` of ``&P[i]`` (None for ``P + i``)."""


def _callee(call: Node) -> str:
    fn = call.child_by_field_name("function")
    return _cuda.text(fn) if fn is not None else ""


def _site(call: Node, pointers: dict[str, str]) -> Site:
    name, line = _callee(call), _cuda.line_of(call)
    if name not in COMMUTATIVE:
        raise Refused(
            f"{name} on line {line} is not a commutative atomic ({', '.join(sorted(COMMUTATIVE))}): "
            "the order of its updates matters"
        )
    statement = call.parent
    if statement is None or statement.type != "expression_statement":
        raise Refused(
            f"the result (the old value) of {name} on line {line} is used: the update order would show"
        )
    args = _cuda.call_args(call)
    if len(args) != 2:
        raise Refused(f"{name} on line {line} does not take (address, value)")
    target = unwrap(args[0])
    if target.type == "pointer_expression" and _cuda.text(target).startswith("&"):
        inner = unwrap(target.child_by_field_name("argument") or target)
        base = inner.child_by_field_name("argument") if inner.type == "subscript_expression" else None
        index = subscript_index(inner) if base is not None else None
        if base is not None and index is not None and _cuda.text(base) in pointers:
            return Site(statement, name, _cuda.text(base), index, args[0], inner)
    if (
        target.type == "binary_expression"
        and _cuda.text(target.child_by_field_name("operator") or target) == "+"
    ):
        roots = [n for n in _cuda.walk(target) if n.type == "identifier" and _cuda.text(n) in pointers]
        if len(roots) == 1 and _plus_chain(roots[0], target):
            return Site(statement, name, _cuda.text(roots[0]), target, args[0], None)
    raise Refused(
        f"{name} on line {line} updates {_cuda.text(args[0])}: not &p[index] or p + index of a pointer parameter"
    )


def _plus_chain(ident: Node, root: Node) -> bool:
    """``ident`` is a term of the sum ``root`` (reached through ``+`` and parentheses only)."""
    node = ident
    while node.id != root.id:
        parent = node.parent
        if parent is None:
            return False
        if parent.type == "binary_expression":
            if _cuda.text(parent.child_by_field_name("operator") or parent) != "+":
                return False
        elif parent.type != "parenthesized_expression":
            return False
        node = parent
    return True


def sites(body: Node, pointers: dict[str, str]) -> list[Site]:
    """Every atomic of the kernel body as a ``Site`` (``pointers``: name -> the parameter it points into)."""
    return [
        _site(n, pointers)
        for n in _cuda.walk(body)
        if n.type == "call_expression" and _callee(n).startswith("atomic")
    ]


def in_target(node: Node, found: list[Site]) -> bool:
    """Whether ``node`` lies inside an atomic's address argument."""
    return any(s.target.start_byte <= node.start_byte < s.target.end_byte for s in found)


def check_buffers(body: Node, found: list[Site], pointers: dict[str, str]) -> None:
    """Each atomically updated buffer is reached by atomics of one function only."""
    functions: dict[str, Site] = {}
    for site in found:
        buffer = pointers[site.pointer]
        first = functions.setdefault(buffer, site)
        if first.function != site.function:
            raise Refused(
                f"{buffer} takes {first.function} (line {_cuda.line_of(first.statement)}) and {site.function} "
                f"(line {_cuda.line_of(site.statement)}): updates of two kinds do not commute"
            )
    own = {s.subscript.id for s in found if s.subscript is not None}
    for n in _cuda.walk(body):
        base = n.child_by_field_name("argument") if n.type == "subscript_expression" else None
        buffer = pointers.get(_cuda.text(base), "") if base is not None else ""
        if buffer in functions and n.id not in own:
            raise Refused(
                f"{buffer} is updated atomically (line {_cuda.line_of(functions[buffer].statement)}) and reached as "
                f"{_cuda.text(n)} on line {_cuda.line_of(n)}: another item's update may land between them"
            )


def check_in_loop(site: Site, loop: Loop, assigned: set[str], declared: dict[str, int]) -> None:
    """The lanes sharing one item update distinct elements at ``site`` (``assigned``, ``declared``: the
    names the kernel assigns, and how often it declares each)."""
    where = f"{_cuda.text(site.target)} on line {_cuda.line_of(site.statement)}"
    if not unit_stride(site.index, loop):
        raise Refused(
            f"{where} is updated atomically in the loop on line {_cuda.line_of(loop.node)} but its address is not "
            f"offset + {loop.var}: lanes of one item could update the same element"
        )
    for name in names_read(site.index, loop) - {site.pointer}:
        if name in loop.privates or name in assigned or declared.get(name, 0) > 1:
            raise Refused(
                f"{where} is reached through {name}, which is reassigned or declared more than once: lanes could "
                "update the same element"
            )
    why = outer_counter_why(site.index, loop, loop.locals)
    if why is not None:
        raise Refused(why)


def place(found: list[Site], loops: list[Loop], analysis: _Checked) -> list[Node]:
    """Check every site against the pass it is in; the statements of those outside the passes (lane 0's)."""
    check_buffers(analysis.body, found, analysis.pointers)
    scalar: list[Node] = []
    for site in found:
        loop = next((lp for lp in loops if inside(site.statement, lp.node)), None)
        if loop is None:
            scalar.append(site.statement)
        else:
            check_in_loop(site, loop, analysis.assigned, analysis.declared)
    return scalar
