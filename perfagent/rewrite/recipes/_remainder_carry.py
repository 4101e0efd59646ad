"""modulo-to-select's second form: ``i % D`` of a loop counter becomes a remainder carried by the loop.

A grid-stride loop ``for (T i = start; i < N; i += step)`` that reads ``i % D`` (the column of a flat
cell id) divides once per element. The remainder of the next element is the remainder of this one plus
``step % D``, wrapped once: ``r' = r >= D - s ? r - (D - s) : r + s`` with ``r, s < D`` (written so that
nothing overflows). So the rewrite computes ``start % D`` and ``step % D`` once before the loop (only
when ``D > 0``: the original divides only inside the loop), updates the remainder in the loop's update
next to ``i += step``, and reads it where ``i % D`` was.

Precondition: ``i`` is declared by the ``for`` and written only by its update ``i += step`` (or
``++i``), with ``start`` and ``step`` provably ``>= 0`` and ``step`` made of sizes and ``blockDim`` /
``gridDim`` only (the same every iteration); ``D`` a size. Where ``D >= 1`` is not proven, the read is
``D > 0 ? r : i % D`` (a negative divisor keeps the original remainder; the test is uniform). Like the
rest of the index algebra it assumes the counter does not wrap past its type's end while the loop runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._chunk_syntax import ident, operator
from perfagent.rewrite.recipes._index_range import Point, Ranges
from perfagent.rewrite.recipes._tree import Edit

_NAME = "perfagent_rem"


@dataclass(frozen=True)
class Carry:
    node: Node
    """The ``i % D`` it replaces."""
    loop: Node
    counter_type: str
    start: str
    step: str
    divisor: str
    proven: bool
    """``D >= 1`` is proven where the ``%`` is; else the read keeps ``i % D`` for ``D <= 0`` (a run-time test)."""


def carry_for(ranges: Ranges, point: Point, node: Node) -> Carry | None:
    """The carried remainder for ``node`` (``i % D``), or None when the form does not hold."""
    counter, divisor = node.child_by_field_name("left"), node.child_by_field_name("right")
    name = ident(counter)
    if counter is None or name is None or divisor is None or name not in ranges.counters:
        return None
    decl = ranges.counters[name]
    loop = decl.parent.parent if decl.parent is not None else None
    start = decl.child_by_field_name("value")
    if loop is None or start is None or not point.at_least_zero(_cuda.strip(counter)):
        return None
    step = _step(loop)
    if step is None or not point.at_least_zero(step) or not _invariant(step, ranges):
        return None
    d = point.exact(divisor)
    if d is None or not point.at_least_zero(start):
        return None
    typ = _cuda.element_type(decl.parent) if decl.parent is not None else ""
    proven = point.facts.positive(d)
    return Carry(node, loop, typ, _cuda.text(start), _cuda.text(step), _cuda.text(divisor), proven)


def _step(loop: Node) -> Node | None:
    update = loop.child_by_field_name("update")
    if update is not None and update.type == "assignment_expression" and operator(update) == "+=":
        return update.child_by_field_name("right")
    return None


def _invariant(step: Node, ranges: Ranges) -> bool:
    """Sizes, literals and blockDim / gridDim only: the same value every iteration."""
    for n in _cuda.walk(step):
        axis = _cuda.builtin_axis(n)
        if axis is not None and axis[0] not in ("blockDim", "gridDim"):
            return False
        if n.type == "identifier" and n.parent is not None and n.parent.type != "field_expression":
            if _cuda.text(n) not in ranges.sizes:
                return False
    return True


def edits(carries: list[Carry]) -> list[Edit]:
    """Declarations before each loop (in a new block), the update, and the reads."""
    out: list[Edit] = []
    loops: dict[int, list[tuple[int, Carry]]] = {}
    for k, c in enumerate(carries):
        loops.setdefault(c.loop.id, []).append((k, c))
    for group in loops.values():
        loop = group[0][1].loop
        update = loop.child_by_field_name("update")
        assert update is not None
        decls, updates = [], []
        for k, c in group:
            r, s, d = f"{_NAME}{k}", f"{_NAME}{k}_step", f"({c.divisor})"
            typ = f"decltype(({c.counter_type})0 % {d})"
            decls.append(
                f"{typ} {r} = {d} > 0 ? ({c.start}) % {d} : 0;  // modulo-to-select: i % D carried by the loop\n"
                f"    const {typ} {s} = {d} > 0 ? ({c.step}) % {d} : 0;\n    "
            )
            updates.append(f", {r} = {r} >= {d} - {s} ? {r} - ({d} - {s}) : {r} + {s}")
            read = r if c.proven else f"({d} > 0 ? {r} : {_cuda.text(c.node)})"
            out.append(Edit(c.node.start_byte, c.node.end_byte, read))
        out.append(Edit(loop.start_byte, loop.start_byte, "{\n    " + "".join(decls)))
        out.append(Edit(update.end_byte, update.end_byte, "".join(updates)))
        out.append(Edit(loop.end_byte, loop.end_byte, "\n    }"))
    return out
