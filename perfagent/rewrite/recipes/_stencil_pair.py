"""stencil-rows' guess of which read of a later row repeats which read of an earlier one.

The guess is made by evaluating every read's index (``_stencil_eval``) at a few interior sample cells,
the kernel's integer arguments set to distinct sizes: read ``r`` of row ``y + d`` is paired with the read
``q`` of row ``y`` that has the same address at every sample. It needs no proof: the rewrite compares the
addresses at run time and loads when they differ, so a wrong guess costs a load, never a value.
"""

from __future__ import annotations

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda, _stencil_eval, _thread_index
from perfagent.rewrite.recipes._stencil_rows import Cell

_SIZES = (53, 59, 61, 67, 71, 73, 79, 83, 89, 97)
"""Sample values of the kernel's integer arguments (distinct primes: interior cells of any stencil)."""
_SAMPLES = ((7, 9), (13, 17), (5, 30))
"""(x, y) sample cells at which the pairing is guessed (each against its rows y + 1 ... y + MAX_DISTANCE)."""
MAX_DISTANCE = 4
"""Rows back a kept read may be found (2R for a radius-2 cross)."""


def _addresses(kernel: Node, cell: Cell, x: int, y: int) -> list[int | None]:
    """Every site's index at cell (x, y), the kernel's integer arguments set to sample sizes."""
    ints = [
        n
        for n, t, p in _cuda.kernel_params(kernel)
        if not p and not any(w in t for w in ("float", "double", "half", "bool"))
    ]
    env: dict[str, int] = dict(zip(ints, _SIZES, strict=False))
    if cell.row is not None:
        xs = [
            g
            for g in _thread_index.global_indices(kernel.child_by_field_name("body") or kernel)
            if g.axis == "x"
        ]
        env.update({xs[0].name: x, cell.row.name: y} if xs else {})
    else:
        width = _stencil_eval.value(cell.width, env) if cell.width is not None else None
        if width is None:
            return [None] * len(cell.sites)
        env.update({cell.flat_name: y * width + x, "perfagent_sr_x": x, "perfagent_sr_y": y})
    body = kernel.child_by_field_name("body")
    before = [s for s in (body.named_children if body is not None else []) if s.end_byte <= cell.start]
    _stencil_eval.bind_locals(
        before + cell.stmts, env, lambda name: _thread_index.assigns(kernel, name) is not None
    )
    return [_stencil_eval.value(s.index, env) for s in cell.sites]


def _conditions(node: Node) -> int:
    """How many ``if``s and ``?:`` the read sits under (a read made on fewer paths is a poorer partner)."""
    count, parent = 0, node.parent
    while parent is not None and parent.type != "function_definition":
        count += parent.type in ("if_statement", "conditional_expression")
        parent = parent.parent
    return count


def pair(kernel: Node, cell: Cell) -> dict[int, tuple[int, int]]:
    """Site r -> (site q, d): r at row y + d has q's address at row y at every sample (the guess). The
    read made on the most paths wins (the interior read, not the border copy's), then the nearest row (a
    radius-R column repeats a read 2R rows on)."""
    rows = {
        (x, y + d): _addresses(kernel, cell, x, y + d) for x, y in _SAMPLES for d in range(MAX_DISTANCE + 1)
    }
    out: dict[int, tuple[int, int]] = {}
    for r, site in enumerate(cell.sites):
        same = [
            (_conditions(other.node), d, q)
            for d in range(1, MAX_DISTANCE + 1)
            for q, other in enumerate(cell.sites)
            if other.array == site.array
            and all((a := rows[(x, y)][q]) is not None and a == rows[(x, y + d)][r] for x, y in _SAMPLES)
        ]
        if same:
            _c, d, q = min(same)
            out[r] = (q, d)
    return out
