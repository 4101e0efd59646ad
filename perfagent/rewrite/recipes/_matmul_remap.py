"""Thread maps the matmul recipes do not read directly, rewritten into the one they do.

smem-tiling and register-tiling match a nest whose row and column come from the y and x thread
coordinates (``_matmul_nest``), optionally one 2-D problem per ``blockIdx.z`` (``_matmul_batch``). Two
other thread maps are common in one-thread-per-output kernels (KernelBench ``load_inline`` solutions,
ports of ``torch.bmm`` / ``torch.matmul``):

- a **flat 1-D index** decoded with ``/`` and ``%`` into (batch,) row and column (``_matmul_decode``),
  guarded by ``if (i < E)``, ``if (i >= E) return;``, a guard on the decoded row and column, or a
  grid-stride loop ``for (i = ...; i < E; i += blockDim.x * gridDim.x)``;
- a **3-D thread map** with one coordinate per axis (``n`` on x, ``m`` on y, ``l`` on z, any order)
  under ``if (n < N && m < M && l < L)``, the output column being the coordinate of unit stride in the
  store and the batch the one of stride rows x columns.

``normalise`` rewrites either into the canonical form, same names, same statements::

    const T b = blockIdx.z;                                      // batched only
    T row = blockIdx.y * blockDim.y + threadIdx.y;
    T col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < R && col < C) { <the per-output statements, the flat index as b*(R*C) + row*C + col> }

with a launch of (16, 16) blocks covering C x R (x batches on grid z), and the matmul recipes match
and plan on that. Their candidates set grid and block in full, so the candidate's launch replaces the
original 1-D or 3-D one (in a ``load_inline`` wrapper, its ``<<<...>>>``). Every output element is
computed by exactly one thread of the new map, with the statements the original ran for it.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda, _matmul_decode, _poly
from perfagent.rewrite.recipes._flat_shape import (
    FlatShape,
    decoded_digits,
    flat_shape,
    guard_bounds,
    mono_text,
    spec_of,
    statements,
    then_of,
)
from perfagent.rewrite.recipes._poly import Poly
from perfagent.rewrite.recipes._thread_index import global_indices, render
from perfagent.rewrite.recipes._variant import Source
from perfagent.workloads.launch_spec import Expr

__all__ = ["Remapped", "normalise"]

_BLOCK = 16
"""The edge of the normalised launch's block (the recipes set their own; this one is only analysed)."""


@dataclass(frozen=True)
class Remapped:
    source: Source
    """The kernel with the canonical thread map, and a launch that covers its outputs."""
    form: str
    """What the original thread map was (for the candidate's description)."""


@dataclass(frozen=True)
class _Coords:
    batch: str | None
    row: str
    col: str
    types: dict[str, str]
    rows: Poly
    cols: Poly
    batches: Poly | None
    inner: str
    """The per-output statements, already rewritten."""
    form: str


def _flat_coords(shape: FlatShape) -> _Coords | str | None:
    decoded = decoded_digits(shape)
    if isinstance(decoded, str):
        return decoded
    found, types, rest = decoded
    if not found:
        return None  # nothing decoded: a per-item kernel, not an output grid (other recipes' business)
    total: Poly | None
    if shape.total is not None:
        total = _poly.poly(shape.total, {}, frozenset({shape.flat, *found}))
    else:
        assert shape.guard is not None
        bounds = guard_bounds(shape.guard, set(found))
        if isinstance(bounds, str):
            return bounds
        polys = {n: _poly.poly(b, {}, frozenset(found)) for n, b in bounds.items()}
        col = [n for n, d in found.items() if d.low == _matmul_decode.ONE and d.high == polys[n]]
        row = [n for n in found if n not in col]
        bound = polys[row[0]] if len(col) == 1 and len(row) == 1 else None
        col_bound = polys[col[0]] if col else None
        total = _poly.mul(bound, col_bound) if bound is not None and col_bound is not None else None
    if total is None:
        return "the flat index's bound is not a product of the kernel's sizes"
    picked = _matmul_decode.digits(found, total)
    if isinstance(picked, str):
        return picked
    if picked.col not in types or picked.row not in types:
        return "the row or column is not declared"
    cols, rows = mono_text(picked.cols), mono_text(picked.rows)
    assert cols is not None and rows is not None
    lead = f"{picked.batch} * ({rows} * {cols}) + " if picked.batch else ""
    linear = f"{lead}{picked.row} * {cols} + {picked.col}"
    uses = {
        n.id for s in rest for n in _cuda.walk(s) if n.type == "identifier" and _cuda.text(n) == shape.flat
    }

    def flat_use(node: Node) -> str:
        parent = node.parent
        whole = parent is not None and parent.type == "subscript_argument_list"
        return linear if whole else f"({linear})"

    inner = "\n".join(render(s, dict.fromkeys(uses, flat_use)) for s in rest)
    return _Coords(
        picked.batch,
        picked.row,
        picked.col,
        types,
        picked.rows,
        picked.cols,
        picked.batches,
        inner,
        shape.form,
    )


# ------------------------------------------------------------------------------------------ 3-D thread map


def _axes_coords(body: Node) -> _Coords | str | None:
    """The 3-D map: one global index per axis, then ``if (every index < its bound) {...}``."""
    indices = global_indices(body)
    stmts = statements(body)
    if sorted(g.axis for g in indices) != ["x", "y", "z"]:
        return None
    if len(stmts) != 4 or stmts[-1].type != "if_statement" or stmts[-1].child_by_field_name("alternative"):
        return "the 3-D thread map is not followed by one bounds check holding the work"
    names = {g.name for g in indices}
    bounds = guard_bounds(stmts[-1], names)
    if isinstance(bounds, str):
        return bounds
    inner = statements(then_of(stmts[-1]))
    polys = {n: _poly.poly(b, {}, frozenset(names)) for n, b in bounds.items()}
    stores = [
        t
        for s in inner
        for n in _cuda.walk(s)
        if n.type == "assignment_expression"
        and (t := _cuda.strip(n.child_by_field_name("left") or n)).type == "subscript_expression"
    ]
    index = stores[0].child_by_field_name("indices") if len(stores) == 1 else None
    store = _poly.poly(index.named_children[0], {}, frozenset()) if index and index.named_children else None
    if store is None or any(p is None for p in polys.values()):
        return "the 3-D thread map's store is not one affine subscript over its coordinates"
    strides: dict[str, Poly] = {}
    for name in names:
        split = _poly.linear_in(store, name)
        if split is None:
            return f"the store's subscript is not linear in {name}"
        strides[name] = split[0]
    col = [n for n in names if strides[n] == _matmul_decode.ONE]
    row = [n for n in names if col and strides[n] == polys[col[0]]]
    batch = [n for n in names if n not in col + row]
    if len(col) != 1 or len(row) != 1 or len(batch) != 1:
        return "the store's strides do not order the 3-D coordinates as batch, row, column"
    rows, cols = polys[row[0]], polys[col[0]]
    assert rows is not None and cols is not None
    if strides[batch[0]] != _poly.mul(rows, cols):
        return "the batch coordinate's stride in the store is not rows x columns"
    types = {g.name: g.type for g in indices}
    text = "\n".join(_cuda.text(s) for s in inner)
    return _Coords(batch[0], row[0], col[0], types, rows, cols, polys[batch[0]], text, "a 3-D thread map")


# ------------------------------------------------------------------------------------------ the rewrite


def _body_text(c: _Coords, rows: str, cols: str) -> str:
    inner = c.inner.replace("\n", "\n        ")
    lead = f"    const {c.types[c.batch]} {c.batch} = blockIdx.z;\n" if c.batch else ""
    return (
        "{\n"
        + lead
        + f"    {c.types[c.row]} {c.row} = blockIdx.y * blockDim.y + threadIdx.y;\n"
        + f"    {c.types[c.col]} {c.col} = blockIdx.x * blockDim.x + threadIdx.x;\n"
        + f"    if ({c.row} < {rows} && {c.col} < {cols}) {{\n        {inner}\n    }}\n}}"
    )


def normalise(src: Source) -> Remapped | str | None:
    """The kernel with the canonical thread map (module docstring), why a flat or 3-D kernel cannot be
    given one, or None: neither a 1-D flat nor a 3-D thread map."""
    found = src.kernel_body
    if isinstance(found, str) or src.launch is None:
        return None
    kernel, body = found
    coords = _axes_coords(body)
    if coords is None:
        shape = flat_shape(body)
        loops = any(n.type == "for_statement" for n in _cuda.walk(body))
        if shape is None or isinstance(shape, str) or not loops:
            return None  # no flat index with a loop over k: not a matmul's map (other recipes' business)
        coords = _flat_coords(shape)
    if coords is None:
        return None
    if isinstance(coords, str):
        return coords
    params = [p[0] for p in _cuda.kernel_params(kernel)]
    rows, cols = spec_of(coords.rows, src, params), spec_of(coords.cols, src, params)
    batches = spec_of(coords.batches, src, params) if coords.batches is not None else None
    rows_text, cols_text = mono_text(coords.rows), mono_text(coords.cols)
    if rows is None or cols is None or rows_text is None or cols_text is None:
        return "the output's rows or columns are not sizes the launch can name"
    if coords.batches is not None and batches is None:
        return "the batch count is not a size the launch can name"
    text = _cuda.apply_edits(
        src.text, [_cuda.Edit(body.start_byte, body.end_byte, _body_text(coords, rows_text, cols_text))]
    )
    grid: list[Expr] = [f"ceil_div({cols}, {_BLOCK})", f"ceil_div({rows}, {_BLOCK})"]
    block: list[Expr] = [_BLOCK, _BLOCK]
    if batches is not None:
        grid, block = [*grid, batches], [*block, 1]
    launch = src.launch.model_copy(update={"grid": grid, "block": block})
    request = src.request.model_copy(update={"source": text, "launch": launch})
    return Remapped(Source(request), coords.form)
