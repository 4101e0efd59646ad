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
from perfagent.rewrite.recipes._matmul_decode import Digit
from perfagent.rewrite.recipes._poly import Poly
from perfagent.rewrite.recipes._thread_index import GlobalIndex, global_index, global_indices, guard_of, render
from perfagent.rewrite.recipes._variant import Source
from perfagent.workloads.launch_spec import Expr

__all__ = ["FlatShape", "Remapped", "decoded_digits", "flat_shape", "mono_text", "normalise", "spec_of", "statements"]

_BLOCK = 16
"""The edge of the normalised launch's block (the recipes set their own; this one is only analysed)."""
_EXITS = ("return_statement", "break_statement", "continue_statement", "goto_statement")


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


def statements(node: Node) -> list[Node]:
    kids = node.named_children if node.type == "compound_statement" else [node]
    return [k for k in kids if k.type != "comment"]


def mono_text(p: Poly) -> str | None:
    """C text of a monomial (``M * N``), None for anything else."""
    if _matmul_decode.quotient(p, _matmul_decode.ONE) is None:
        return None
    ((atoms, coeff),) = p.items()
    parts = ([str(coeff)] if coeff != 1 or not atoms else []) + list(atoms)
    return " * ".join(parts)


def spec_of(p: Poly, src: Source, params: list[str]) -> Expr | None:
    """A monomial of kernel parameters and constants as a launch-spec expression."""
    assert src.launch is not None
    if _matmul_decode.quotient(p, _matmul_decode.ONE) is None or len(params) != len(src.launch.args):
        return None
    ((atoms, coeff),) = p.items()
    consts = _cuda.int_constants(src.constants)
    parts: list[str] = [str(coeff)] if coeff != 1 else []
    for atom in atoms:
        if atom in params:
            arg = src.launch.args[params.index(atom)].value
            if arg is None:
                return None
            parts.append(f"({arg})")
        elif atom in consts:
            parts.append(str(consts[atom]))
        else:
            return None
    return " * ".join(parts) if parts else 1


def _declared(stmt: Node) -> tuple[str, Node, str] | None:
    """(name, value, type) of a one-variable integer declaration ``T v = value;``."""
    inits = [c for c in stmt.named_children if c.type == "init_declarator"] if stmt.type == "declaration" else []
    if len(inits) != 1 or len(list(stmt.children_by_field_name("declarator"))) != 1:
        return None
    ident, val = inits[0].child_by_field_name("declarator"), inits[0].child_by_field_name("value")
    if ident is None or val is None or ident.type != "identifier":
        return None
    return _cuda.text(ident), val, _cuda.element_type(stmt)


# ------------------------------------------------------------------------------------------ flat index


@dataclass(frozen=True)
class FlatShape:
    index: GlobalIndex
    flat: str
    """The name the per-output statements read (the index, or the grid-stride loop's counter)."""
    total: Node | None
    """E of the flat guard; None when the guard is on the decoded row and column."""
    stmts: list[Node]
    """Decodes and per-output statements, in order."""
    guard: Node | None
    """The row/column guard (when ``total`` is None)."""
    form: str


def _grid_step(node: Node, steps: set[str]) -> bool:
    node = _cuda.strip(node)
    if node.type == "identifier":
        return _cuda.text(node) in steps
    builtins = {_cuda.builtin_axis(_cuda.strip(c)) for c in node.named_children}
    return node.type == "binary_expression" and builtins == {("blockDim", "x"), ("gridDim", "x")}


def _loop_shape(loop: Node, index: GlobalIndex, steps: set[str]) -> FlatShape | str:
    """The grid-stride loop ``for (T i = index; i < E; i += step)`` as a flat shape."""
    init, cond, update = (loop.child_by_field_name(f) for f in ("initializer", "condition", "update"))
    decl = _declared(init) if init is not None else None
    if decl is None or cond is None or update is None:
        return "the grid-stride loop does not declare its counter"
    name, start, _ = decl
    if _cuda.text(_cuda.strip(start)) != index.name and _cuda.strip(start).id != index.value.id:
        if _cuda.text(_cuda.strip(start)).replace(" ", "") != _cuda.text(index.value).replace(" ", ""):
            return "the grid-stride loop does not start at the thread's global index"
    right = update.child_by_field_name("right")
    op = update.child_by_field_name("operator")
    bound = cond.child_by_field_name("right") if cond.type == "binary_expression" else None
    left = cond.child_by_field_name("left") if cond.type == "binary_expression" else None
    if (
        update.type != "assignment_expression"
        or op is None
        or _cuda.text(op) != "+="
        or right is None
        or not _grid_step(right, steps)
        or bound is None
        or left is None
        or _cuda.text(_cuda.strip(left)) != name
        or _cuda.text(cond.child_by_field_name("operator") or cond) != "<"
    ):
        return f"line {_cuda.line_of(loop)}: not a grid-stride loop `for (i = index; i < E; i += blockDim.x * gridDim.x)`"
    body = loop.child_by_field_name("body")
    assert body is not None
    return FlatShape(index, name, bound, statements(body), None, "a grid-stride loop over a flat index")


def flat_shape(body: Node) -> FlatShape | str | None:
    """The flat index's guard and per-output statements; None: not a 1-D flat kernel at all."""
    indices = global_indices(body)
    stmts = statements(body)
    init = stmts[-1].child_by_field_name("initializer") if stmts and stmts[-1].type == "for_statement" else None
    looped = global_index(init) if init is not None and not indices else None
    if looped is not None:  # for (int t = blockIdx.x * blockDim.x + threadIdx.x; ...)
        indices, stmts = [looped], [looped.decl, *stmts]
    if len(indices) != 1 or indices[0].axis != "x" or not stmts:
        return None
    index = indices[0]
    at = stmts.index(index.decl)
    before, after = stmts[:at], stmts[at + 1 :]
    if before:
        return f"line {_cuda.line_of(before[0])}: a statement before the flat index"
    steps = {d[0] for s in after[:-1] if (d := _declared(s)) and _grid_step(d[1], set())}
    last = after[-1] if after else None
    if last is not None and last.type == "for_statement":
        if len(after) != 1 + len(steps):
            return f"line {_cuda.line_of(after[0])}: statements beside the grid-stride loop"
        return _loop_shape(last, index, steps)
    for k, stmt in enumerate(after):
        guard = guard_of(stmt, index.name)
        if guard is not None and _cond_terms(guard.stmt) == 1:
            rest = after[k + 1 :] if guard.early_exit else statements(_then(guard.stmt))
            if not guard.early_exit and k != len(after) - 1:
                return f"line {_cuda.line_of(after[k + 1])}: a statement after the bounds check"
            return FlatShape(index, index.name, guard.bound, after[:k] + rest, None, "a flat index")
    if last is not None and last.type == "if_statement" and last.child_by_field_name("alternative") is None:
        return FlatShape(
            index, index.name, None, after[:-1] + statements(_then(last)), last, "a flat index (row/column guard)"
        )
    return "the flat index has no bounds check or grid-stride loop"


def _then(stmt: Node) -> Node:
    then = stmt.child_by_field_name("consequence")
    assert then is not None
    return then


def _cond_terms(stmt: Node) -> int:
    cond = stmt.child_by_field_name("condition")
    text = _cuda.text(cond) if cond is not None else ""
    return 1 + text.count("&&") + text.count("||")


def _guard_bounds(guard: Node, names: set[str]) -> dict[str, Node] | str:
    """name -> bound of ``if (a < A && b < B)`` over exactly ``names`` (why not otherwise)."""
    cond = guard.child_by_field_name("condition")
    inner = cond.named_children[-1] if cond is not None and cond.type == "condition_clause" else cond
    terms: list[Node] = []
    todo = [inner] if inner is not None else []
    while todo:
        node = _cuda.strip(todo.pop())
        if node.type == "binary_expression" and _cuda.text(node.child_by_field_name("operator") or node) == "&&":
            todo += [c for f in ("left", "right") if (c := node.child_by_field_name(f)) is not None]
        else:
            terms.append(node)
    out: dict[str, Node] = {}
    for term in terms:
        left, right = term.child_by_field_name("left"), term.child_by_field_name("right")
        op = _cuda.text(term.child_by_field_name("operator") or term) if term.type == "binary_expression" else ""
        if op != "<" or left is None or right is None or _cuda.text(_cuda.strip(left)) not in names:
            return f"line {_cuda.line_of(term)}: the guard term {_cuda.text(term)} is not `coordinate < bound`"
        out[_cuda.text(_cuda.strip(left))] = right
    if set(out) != names:
        return f"line {_cuda.line_of(guard)}: the guard does not bound every output coordinate"
    return out


def decoded_digits(shape: FlatShape) -> tuple[dict[str, Digit], dict[str, str], list[Node]] | str:
    """The decoded digits (name -> digit), their types, and the other statements (decodes removed)."""
    env: dict[str, Digit] = {}
    types: dict[str, str] = {}
    decode_ids: set[int] = set()
    for stmt in shape.stmts:
        decl = _declared(stmt)
        found = _matmul_decode.value(decl[1], shape.flat, env) if decl is not None else None
        if decl is not None and found is not None:
            env[decl[0]], types[decl[0]] = found, decl[2]
            decode_ids.add(stmt.id)
    rest = [s for s in shape.stmts if s.id not in decode_ids]
    used = {n for s in rest for n in _cuda.identifiers_in(s)}
    if shape.guard is not None:
        used |= _cuda.identifiers_in(shape.guard.child_by_field_name("condition") or shape.guard)
    for stmt in rest:
        for node in _cuda.walk(stmt):
            if node.type in _EXITS:
                return f"line {_cuda.line_of(node)}: {node.type.split('_')[0]} in the per-output statements"
            if node.type in ("assignment_expression", "update_expression"):
                target = node.child_by_field_name("left") or node.child_by_field_name("argument")
                if target is not None and _cuda.text(_cuda.strip(target)) in ({shape.flat} | set(env)):
                    return f"line {_cuda.line_of(node)}: an output coordinate is reassigned"
    return {n: d for n, d in env.items() if n in used}, types, rest


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
        bounds = _guard_bounds(shape.guard, set(found))
        if isinstance(bounds, str):
            return bounds
        polys = {n: _poly.poly(b, {}, frozenset(found)) for n, b in bounds.items()}
        col = [n for n, d in found.items() if d.low == _matmul_decode.ONE and d.high == polys[n]]
        row = [n for n in found if n not in col]
        bound = polys[row[0]] if len(col) == 1 and len(row) == 1 else None
        total = _poly.mul(bound, polys[col[0]]) if bound is not None else None
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
    uses = {n.id for s in rest for n in _cuda.walk(s) if n.type == "identifier" and _cuda.text(n) == shape.flat}

    def flat_use(node: Node) -> str:
        parent = node.parent
        whole = parent is not None and parent.type == "subscript_argument_list"
        return linear if whole else f"({linear})"

    inner = "\n".join(render(s, dict.fromkeys(uses, flat_use)) for s in rest)
    return _Coords(
        picked.batch, picked.row, picked.col, types, picked.rows, picked.cols, picked.batches, inner, shape.form
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
    bounds = _guard_bounds(stmts[-1], names)
    if isinstance(bounds, str):
        return bounds
    inner = statements(_then(stmts[-1]))
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
        if shape is None:
            return None
        coords = shape if isinstance(shape, str) else _flat_coords(shape)
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
