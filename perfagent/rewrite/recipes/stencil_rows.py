"""stencil-rows: a 2-D stencil's threads each compute K cells down a column, reusing the rows they share.

The basic 2-D stencil (PMPP 4th ed. ch. 8; Game of Life, Jacobi, blurs, Laplacians) runs one thread per
cell, often on a 1-D launch over the flattened grid (``r = i / W; c = i % W``), and each thread loads its
whole (2R+1) x (2R+1) or cross-shaped neighbourhood: every input value is loaded by 2R+1 threads of a
column. The textbook fix coarsens the threads along one direction (PMPP ch. 8.5 thread coarsening with
register tiling; Micikevicius 2009): a thread walks K cells down a column and keeps the rows it shares with
the cell above in registers, so each new cell costs one new row of loads; a 2-D launch gives x and y
without a division.

Precondition: ``_stencil_rows`` (a 2-D launch, a guarded flat index, or a grid-stride loop over a flat
index, with the index algebra proven; read-only inputs; nothing cooperates).

The rewrite: block (BX, BY) and grid (ceil(W / BX), ceil(R / (K * BY))) (from the old 2-D grid, or from the
proven width W and row count R of a flat one); the cell's work runs in ``for (t = 0; t < K; ++t)`` with
``y = y0 + t`` (flat forms: ``i = y * W + x``, ``i % W`` and ``i / W`` replaced by ``x`` and ``y``, ``x >=
W`` ends the walk), ``return`` becoming ``continue``. Each paired read keeps its last (address, value) in
registers and, for the next cell, takes the value of its partner read of the row before when the addresses
are equal, compared at run time, and loads otherwise. The input is never written by the kernel, so a value
kept for an address is the value a load would return: the pairing (``_stencil_pair``) is a guess that
decides how many loads are saved, never what is computed. Results are bit-identical (same expressions over
the same values, in the same order).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda, _launch
from perfagent.rewrite.recipes._stencil_pair import pair
from perfagent.rewrite.recipes._stencil_rows import Cell, analyse
from perfagent.rewrite.recipes._thread_index import Rewrites, put, render
from perfagent.rewrite.recipes.framework import CudaRecipe, Edit, Source, Variant, register
from perfagent.rewrite.recipes.modulo_to_select import top_level
from perfagent.workloads.launch_spec import LaunchOverride

NAME = "stencil-rows"
P = "perfagent_sr_"
FETCH = "perfagent_row_fetch"
GEOMETRIES = ((32, 8, 4), (32, 8, 8), (64, 4, 4), (32, 4, 16))
"""(block x, block y, cells per thread): 32 x 8 with 4 and 8 rows per thread first (a warp reads whole
row pieces; enough blocks for an H100/H200 from 1024^2 cells up), a wider block, a longer walk."""
_NONE = "(-0x7fffffffffffffffLL - 1)"
"""No address yet (an index no read can have)."""

_FETCH_TEXT = f"""// stencil-rows: a read of an input the kernel never writes; the value kept for the same address (the
// partner read of the row before) is reused, compared at run time, so no load is repeated and none is wrong
template <typename T, typename I>
__device__ __forceinline__ T {FETCH}(const T *p, I idx, long long prev_at, T prev, long long &at, T &val)
{{
    at = (long long)idx;
    val = at == prev_at ? prev : p[idx];
    return val;
}}

"""


@dataclass(frozen=True)
class _Plan:
    cell: Cell
    grid: tuple[str, str] | None
    """(width, rows) in the launch spec's terms (flat forms), None for a 2-D launch."""


def _depths(cell: Cell) -> dict[int, int]:
    """Kept site -> how many rows of its (address, value) it keeps: 1 for the paired reads, d + 1 for a
    read another one repeats d rows on."""
    out = dict.fromkeys(cell.partner, 1)
    for q, d in cell.partner.values():
        out[q] = max(out.get(q, 1), d + 1)
    return out


def _slot(k: int, j: int) -> tuple[str, str]:
    return f"{P}a{k}_{j}", f"{P}v{k}_{j}"


def _rewrites(cell: Cell) -> Rewrites:
    rewrites: Rewrites = {nid: put(text) for nid, text in cell.subs.items()}
    for k in _depths(cell):
        site = cell.sites[k]
        # a read with no partner passes its own register as the never-taken "value of the row before"
        prev = _slot(*cell.partner[k]) if k in cell.partner else (_NONE, _slot(k, 0)[1])
        index = _cuda.text(site.index)
        at, val = _slot(k, 0)
        rewrites[site.node.id] = put(f"{FETCH}({site.array}, {index}, {prev[0]}, {prev[1]}, {at}, {val})")
    return rewrites


def _window(cell: Cell, pad: str) -> tuple[str, str]:
    """(declarations before the walk, the history shift at the top of each step)."""
    depths = _depths(cell)
    decls = "".join(
        f"{pad}long long {_slot(k, j)[0]} = {_NONE};\n{pad}{cell.sites[k].element} {_slot(k, j)[1]}{{}};\n"
        for k, n in sorted(depths.items())
        for j in range(n)
    )
    shift = "".join(
        f"{pad}    {_slot(k, j)[0]} = {_slot(k, j - 1)[0]}; {_slot(k, j)[1]} = {_slot(k, j - 1)[1]};\n"
        for k, n in sorted(depths.items())
        for j in range(n - 1, 0, -1)
    )
    return decls, shift


def _coordinates(cell: Cell, cells: int, pad: str) -> tuple[str, str]:
    """(the walk's set-up, the cell's coordinates at the top of each step)."""
    y0 = f"{pad}const unsigned int {P}y0 = (blockIdx.y * blockDim.y + threadIdx.y) * {cells}u;\n"
    if cell.row is not None:
        y = cell.row
        return y0, f"{pad}    {y.type} {y.name} = ({y.type})({P}y0 + {P}t);\n"
    t, w = cell.flat_type, _operand(cell.width)
    setup = f"{pad}const {t} {P}x = blockIdx.x * blockDim.x + threadIdx.x;\n" + y0
    step = (
        f"{pad}    const {t} {P}y = ({t})({P}y0 + {P}t);\n"
        f"{pad}    if ({P}x >= {w}) continue;  // past the last column: no cell of this walk\n"
        f"{pad}    const {t} {cell.flat_name} = {P}y * {w} + {P}x;\n"
    )
    if cell.bound is not None:  # the grid-stride loop's own test
        step += f"{pad}    if ({cell.flat_name} >= {_operand(cell.bound)}) continue;\n"
    return setup, step


def _operand(node: Node | None) -> str:
    """``node``'s text as an operand of ``*`` or ``>=`` (bare names stay bare: the range prover of
    modulo-to-select reads ``i >= N`` guards, not ``i >= (N)``)."""
    if node is None:
        return ""
    text = _cuda.text(node)
    return f"({text})" if _cuda.needs_parentheses(node) else text


def emit(cell: Cell, cells: int, pad: str) -> str:
    """The row walk that replaces the cell's work."""
    setup, step = _coordinates(cell, cells, pad)
    decls, snap = _window(cell, pad)
    rewrites = _rewrites(cell)
    work = "".join(f"{pad}    {render(s, rewrites)}\n" for s in cell.stmts)
    return (
        f"// stencil-rows: {cells} cells down a column per thread; the reads shared with the row before come "
        f"from registers\n{setup}{decls}"
        f"#pragma unroll\n"
        f"{pad}for (unsigned int {P}t = 0u; {P}t < {cells}u; ++{P}t) {{\n{snap}{step}{work}{pad}}}\n"
    )


def _grid(src: Source, m: _Plan, bx: int, by: int, cells: int) -> list[str]:
    assert src.launch is not None
    if m.grid is not None:
        width, rows = m.grid
        return [_launch.ceil_div(width, bx), _launch.ceil_div(_launch.ceil_div(rows, cells), by)]
    g, b = src.launch.grid, src.launch.block
    return [
        _launch.ceil_div(_launch.threads_x(g[0], b[0]), bx),
        _launch.ceil_div(_launch.ceil_div(_launch.threads_x(g[1], b[1]), cells), by),
    ]


def _paired(kernel: Node, dims: int) -> Cell | str:
    cell = analyse(kernel, dims)
    if isinstance(cell, str):
        return cell
    partner = pair(kernel, cell)
    if not partner:
        return (
            "no read of a read-only input at row y + 1 repeats a read of row y (or the indices could not be "
            "evaluated): nothing to keep in registers"
        )
    if all(q == r for r, (q, _d) in partner.items()):
        # the same read at the same address row after row is a broadcast operand (a per-column scale),
        # not a neighbourhood: thread-coarsening's plain forms handle it
        return "reads repeat only their own address row after row (a broadcast, not a stencil neighbourhood)"
    return replace(cell, partner=partner)


class _StencilRows(CudaRecipe[_Plan]):
    name = NAME
    transforms = ("thread-coarsening", "register-tiling")
    summary = (
        "2-D stencils (2-D launch, flat index with i / W, i % W, or a grid-stride loop): a 2-D launch whose "
        "threads walk K cells down a column, reads shared with the row before kept in registers; grid and "
        "block re-tuned"
    )
    needs_launch = True
    no_launch = "needs a launch spec: the launch becomes 2-D with K cells per thread"

    def match(self, src: Source) -> _Plan | str:
        assert src.launch is not None
        if P in src.text or FETCH in src.text:
            return f"the source already uses names starting with {P} (or {FETCH})"
        dims = len(src.launch.grid)
        if dims != len(src.launch.block) or dims not in (1, 2):
            return "the launch spec's grid and block are not both 1-D or both 2-D"
        cell = src.on_kernel(lambda k: _paired(k, dims))
        if isinstance(cell, str):
            return cell
        if cell.row is not None:
            return _Plan(cell, None)
        kernel = src.kernel
        assert not isinstance(kernel, str)
        spec = _launch.arg_values(kernel, src.launch)
        width = _launch.in_spec(_cuda.text(cell.width) if cell.width is not None else "", spec)
        rows = _launch.in_spec(_form_text(cell.rows), spec)
        if width is None or rows is None:
            return "the grid's width or row count has no value in the launch spec's arguments"
        return _Plan(cell, (width, rows))

    def plan(self, src: Source, m: _Plan) -> list[Variant]:
        kernel = src.kernel
        assert not isinstance(kernel, str)
        pad = " " * _column(src, m.cell.start)
        helper = (
            []
            if FETCH + "(" in src.text
            else [Edit(top_level(kernel).start_byte, top_level(kernel).start_byte, _FETCH_TEXT)]
        )
        kept = len(m.cell.partner)
        out = []
        for bx, by, cells in GEOMETRIES:
            out.append(
                Variant(
                    edits=[*helper, Edit(m.cell.start, m.cell.end, emit(m.cell, cells, pad))],
                    description=(
                        f"stencil rows ({m.cell.form}): ({bx}, {by}) blocks, {cells} cells down a column per "
                        f"thread; {kept} of {len(m.cell.sites)} reads take the row before's value when the "
                        "address repeats (compared at run time); same arithmetic, bit-identical"
                    ),
                    parameters={"block_x": bx, "block_y": by, "cells_per_thread": cells},
                    launch=LaunchOverride(grid=_grid(src, m, bx, by, cells), block=[bx, by]),
                )
            )
        return out


def _column(src: Source, offset: int) -> int:
    data = src.text.encode("utf-8")
    return offset - _cuda.line_start(data, offset)


def _form_text(form: dict[tuple[str, ...], int]) -> str:
    terms = [" * ".join([str(c)] * (c != 1) + list(m)) or str(c) for m, c in sorted(form.items())]
    return " + ".join(terms) if terms else "0"


RECIPE = register(_StencilRows())
applies, propose = RECIPE.applies, RECIPE.propose
