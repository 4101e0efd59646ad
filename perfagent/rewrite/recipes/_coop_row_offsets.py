"""cooperative-row: one buffer stored at several offsets of the counter in one pass, proven lane-disjoint.

A row loop ``for (j = s; j < s + T; ++j)`` that stores ``y[e + j]`` and ``y[e + j + D]`` (the two nibbles of a
Q4 byte, the two halves of a rotary embedding: ``out[r * d + j]``, ``out[r * d + j + d / 2]`` for
``j < d / 2``) gives each lane the elements ``e + j`` and ``e + j + D`` of its own ``j``s. Two lanes meet
only if ``j' = j + D`` for two counters of the pass, which needs ``|D| < T``; so when ``|D| >= T`` —
proven on the polynomials of the indices (``_poly``), the difference and the trip count reduced to an
integer with the source's constants, or equal as polynomials (``D = d / 2`` and ``T = d / 2``) — every
lane owns its elements as with one pattern. Anything else stays refused by the caller.
"""

from __future__ import annotations

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda, _poly
from perfagent.rewrite.recipes._coop_row_syntax import Loop, subscript_index


def _constants(node: Node) -> dict[str, _cuda.Constant]:
    root = node
    while root.parent is not None:
        root = root.parent
    return _cuda.constants(_cuda.parse(_cuda.text(root)))


def _value(p: _poly.Poly, env: dict[str, _cuda.Constant]) -> int | None:
    """``p`` as an integer when every atom is a constant of the source, else None."""
    total = 0
    for monomial, coef in p.items():
        term = coef
        for atom in monomial:
            value = _cuda.evaluate(atom, env)
            if value is None:
                return None
            term *= value
        total += term
    return total


def _covers(d: _poly.Poly, trips: _poly.Poly, env: dict[str, _cuda.Constant]) -> bool:
    """``|d| >= trips``: ``d - trips`` or ``-d - trips`` is a non-negative integer."""
    for sign in (1, -1):
        rest = _poly.add({m: sign * c for m, c in d.items()}, trips, -1)
        value = _value(rest, env)
        if value is not None and value >= 0:
            return True
    return False


def disjoint(subscripts: list[Node], loop: Loop) -> str | None:
    """None when the subscripts' indices differ pairwise by at least the pass's trip count; else why not."""
    if len(loop.levels) != 1:
        return "a nest of loops: only one counted loop is checked"
    level = loop.levels[0]
    varying = frozenset({loop.var})
    start, bound = _poly.poly(level.start, {}, varying), _poly.poly(level.bound, {}, varying)
    if start is None or bound is None or loop.var in {a for m in (*start, *bound) for a in m}:
        return "the loop's trip count is not a polynomial of names other than its counter"
    trips = _poly.add(_poly.add(bound, start, -1), _poly.constant(1 if level.inclusive else 0))
    indices = []
    for sub in subscripts:
        index = subscript_index(sub)
        p = _poly.poly(index, {}, varying) if index is not None else None
        if p is None:
            return f"{_cuda.text(sub)} (line {_cuda.line_of(sub)}) is not a polynomial index"
        if p not in indices:
            indices.append(p)
    env = _constants(loop.node)
    for a, first in enumerate(indices):
        for second in indices[a + 1 :]:
            d = _poly.add(second, first, -1)
            if loop.var in {atom for m in d for atom in m}:
                return "the offsets differ in the counter's stride"
            if not _covers(d, trips, env):
                return "the offset between them is not proven at least the loop's trip count"
    return None
