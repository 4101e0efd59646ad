"""stencil-rows' analysis: a 2-D stencil whose threads each compute one cell, and where its cell is.

Three forms of one thread per cell are recognised (refused with the reason, and the line where there is
one, otherwise):

- **2-D launch**: top-level ``T x = blockIdx.x * blockDim.x + threadIdx.x`` and ``T y = ... .y ...``;
  the statements after ``y``'s declaration are the cell's work (early exits ``return``);
- **flat index**: a 1-D launch, ``T i = blockIdx.x * blockDim.x + threadIdx.x`` and a guard
  ``if (i >= N) return;`` / ``if (i < N) {...}``, the cell's column and row recovered as ``i % W`` and
  ``i / W`` (either or both);
- **grid-stride loop**: ``for (T i = <that>; i < N; i += blockDim.x * gridDim.x) { ... }`` as the last
  statement, with ``i % W`` / ``i / W`` inside.

For the flat forms the index algebra is proven on polynomials (``_poly``, ``_affine``): every ``%`` and
``/`` of ``i`` is by the same ``W`` (a kernel argument), and ``N`` is ``W`` times a row count ``R``
(``worldSize = worldWidth * worldHeight``), so cell ``(x, y)`` with ``x < W`` is ``i = y * W + x``, and
``i % W == x``, ``i / W == y``. In every form the thread coordinates appear only in those declarations,
nothing cooperates (no barrier, shared memory, shuffle), a ``return`` is not inside a loop of the work (it
becomes ``continue``), and ``i`` / ``y`` is never assigned.

The reads worth keeping are those of a read-only pointer argument (only read through subscripts): one
that is also written is refused (the output aliases the input: a kept value could be stale), and so is a
read whose index reads memory (the neighbourhood is data-dependent). Reads inside a loop of the work are
left as they are. ``_stencil_pair`` then guesses which read of row ``y + 1`` repeats which read of row
``y``; with no such pair there is nothing to keep and the kernel is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from tree_sitter import Node

from perfagent.rewrite.recipes import _affine, _cuda, _poly, _thread_index
from perfagent.rewrite.recipes._coop_row_syntax import is_written, subscript_index
from perfagent.rewrite.recipes._thread_index import GlobalIndex
from perfagent.rewrite.recipes._variant import at
from perfagent.rewrite.recipes._zmarch import callee_uses_threads, definitions, read_only

_LOOPS = ("for_statement", "while_statement", "do_statement", "for_range_loop", "switch_statement")
_PURE_CALLS = ("min", "max", "umin", "umax", "abs")


@dataclass(frozen=True)
class Site:
    """One read of a read-only argument in the cell's work."""

    node: Node
    array: str
    element: str
    index: Node


@dataclass(frozen=True)
class Cell:
    """Where the cell is, what runs per cell, and the reads to keep."""

    form: str
    """'2-D launch', 'flat index' or 'grid-stride loop'."""
    start: int
    end: int
    """Byte range the row loop replaces."""
    stmts: list[Node]
    """The cell's work, in order (comments included)."""
    flat: GlobalIndex | None
    """The flat index (flat forms)."""
    flat_name: str
    flat_type: str
    width: Node | None
    """W (flat forms)."""
    rows: _affine.FormDict
    """N / W (flat forms)."""
    row: GlobalIndex | None
    """y (2-D launch)."""
    bound: Node | None
    """N of a grid-stride loop's ``i < N`` (the loop's test becomes a ``continue``)."""
    subs: dict[int, str] = field(default_factory=dict)
    """Node id -> replacement text (``i % W``, ``i / W``, ``return``)."""
    sites: list[Site] = field(default_factory=list)
    partner: dict[int, tuple[int, int]] = field(default_factory=dict)
    """Site r -> (site q, d): r is guessed to repeat the address q read d rows before."""


def _builtin_uses_outside(kernel: Node, allowed: list[Node]) -> str | None:
    """Why a thread built-in is used outside the ``allowed`` nodes (the coordinate declarations)."""
    spans = [(n.start_byte, n.end_byte) for n in allowed]
    for name in _cuda.BUILTINS:
        for axis in "xyz":
            for use in _thread_index.builtin_uses(kernel, name, axis):
                if not any(a <= use.start_byte and use.end_byte <= b for a, b in spans):
                    return at(
                        use, f"{name}.{axis} outside the cell's coordinates: the block cannot be reshaped"
                    )
    return None


def _flow(stmts: list[Node], grid_stride: bool) -> tuple[dict[int, str], str | None]:
    """``return`` -> ``continue`` rewrites, or why the work's control flow cannot run inside a row loop."""
    subs: dict[int, str] = {}
    for stmt in stmts:
        for n in _cuda.walk(stmt):
            if n.type not in ("return_statement", "break_statement", "continue_statement"):
                continue
            looped = any(_within(_cuda.enclosing(n, k), stmts) for k in _LOOPS)
            if n.type == "return_statement":
                if looped:
                    return subs, at(n, "a return inside a loop of the cell's work")
                if grid_stride:
                    return subs, at(
                        n, "a return inside the grid-stride loop ends every later cell of the thread"
                    )
                subs[n.id] = "continue;"
            elif not looped and n.type == "break_statement":
                return subs, at(n, "a break out of the grid-stride loop ends every later cell of the thread")
    return subs, None


def _within(node: Node | None, stmts: list[Node]) -> bool:
    return node is not None and any(
        s.start_byte <= node.start_byte and node.end_byte <= s.end_byte for s in stmts
    )


def _two_d(kernel: Node, body: Node) -> Cell | str:
    indices = {g.axis: g for g in _thread_index.global_indices(body) if g.scale is None}
    if "x" not in indices or "y" not in indices:
        return "a 2-D launch without top-level T x = blockIdx.x * blockDim.x + threadIdx.x and its y twin"
    x, y = indices["x"], indices["y"]
    why = _builtin_uses_outside(kernel, [x.decl, y.decl])
    if why:
        return why
    if _thread_index.assigns(kernel, y.name):
        return at(y.decl, f"{y.name} is assigned after its declaration")
    kids = list(body.named_children)
    for g in (x, y):  # the new grid covers more threads than the old: its spare ones must exit as the old did
        if not any(_thread_index.guard_of(s, g.name) for s in kids):
            return at(
                g.decl, f"no guard bounds {g.name} (if ({g.name} >= N) return; / if ({g.name} < N) ...)"
            )
    stmts = kids[kids.index(y.decl) + 1 :]
    subs, why = _flow(stmts, grid_stride=False)
    if why:
        return why
    return Cell(
        "2-D launch", y.decl.start_byte, body.end_byte - 1, stmts, None, "", "", None, {}, y, None, subs
    )


def _stride_loop(stmt: Node) -> tuple[GlobalIndex, Node, list[Node]] | None:
    """(index, bound N, body statements) of ``for (T i = gid; i < N; i += blockDim.x * gridDim.x) {...}``."""
    if stmt.type != "for_statement":
        return None
    init, cond = stmt.child_by_field_name("initializer"), stmt.child_by_field_name("condition")
    update, body = stmt.child_by_field_name("update"), stmt.child_by_field_name("body")
    g = _thread_index.global_index(init) if init is not None else None
    if g is None or g.axis != "x" or update is None or body is None:
        return None
    bound = _less_than(cond, g.name) if cond is not None else None
    step = "".join(_cuda.text(update).split())
    steps = {f"{g.name}+=blockDim.x*gridDim.x", f"{g.name}+=gridDim.x*blockDim.x"}
    if bound is None or step not in steps or g.scale is not None:
        return None
    kids = list(body.named_children) if body.type == "compound_statement" else [body]
    return g, bound, kids


def _less_than(cond: Node, name: str) -> Node | None:
    """N of the loop condition ``name < N`` (or ``N > name``)."""
    cond = _cuda.strip(cond)
    if cond.type != "binary_expression":
        return None
    left, op, right = (cond.child_by_field_name(f) for f in ("left", "operator", "right"))
    if left is None or op is None or right is None:
        return None
    for var, bound, want in ((left, right, "<"), (right, left, ">")):
        if _cuda.text(op) == want and _cuda.text(_cuda.strip(var)) == name:
            return bound
    return None


def _flat(kernel: Node, body: Node) -> Cell | str:
    kids = list(body.named_children)
    loop = _stride_loop(kids[-1]) if kids else None
    if loop is not None:
        g, bound, stmts = loop
        start, end, form = kids[-1].start_byte, kids[-1].end_byte, "grid-stride loop"
        allowed = [
            c for c in (kids[-1].child_by_field_name(f) for f in ("initializer", "update")) if c is not None
        ]
    else:
        flats = [g for g in _thread_index.global_indices(body) if g.axis == "x" and g.scale is None]
        if len(flats) != 1:
            return "no flat cell index T i = blockIdx.x * blockDim.x + threadIdx.x (nor a grid-stride loop over one)"
        g = flats[0]
        stmts = kids[kids.index(g.decl) + 1 :]
        guards = [gd for s in stmts if (gd := _thread_index.guard_of(s, g.name)) is not None]
        if not guards:
            return at(
                g.decl, f"no guard bounds {g.name} (if ({g.name} >= N) return; / if ({g.name} < N) ...)"
            )
        bound, start, end, allowed, form = (
            guards[0].bound,
            g.decl.start_byte,
            body.end_byte - 1,
            [g.decl],
            "flat index",
        )
    why = _builtin_uses_outside(kernel, allowed) or (
        next(
            (
                at(w, f"{g.name} is assigned in the cell's work")
                for s in stmts
                if (w := _thread_index.assigns(s, g.name))
            ),
            None,
        )
    )
    if why:
        return why
    subs, why = _flow(stmts, grid_stride=form == "grid-stride loop")
    if why:
        return why
    return _width(kernel, g, bound, stmts, subs, (form, start, end))


def _width(
    kernel: Node,
    g: GlobalIndex,
    bound: Node,
    stmts: list[Node],
    subs: dict[int, str],
    where: tuple[str, int, int],
) -> Cell | str:
    """The proof that ``i`` walks a W-wide grid: one divisor W of every ``i % W`` / ``i / W``, N = W * R."""
    peel: list[tuple[Node, str, Node]] = []
    for stmt in stmts:
        for n in _cuda.walk(stmt):
            if n.type != "binary_expression":
                continue
            left, right, op = (n.child_by_field_name(f) for f in ("left", "right", "operator"))
            if left is None or right is None or op is None or _cuda.text(op) not in "%/":
                continue
            if _cuda.strip(left).type == "identifier" and _cuda.text(_cuda.strip(left)) == g.name:
                peel.append((n, _cuda.text(op), right))
    if not peel:
        return at(g.decl, f"the cell's column and row are not recovered as {g.name} % W or {g.name} / W")
    widths = {"".join(_cuda.text(w).split()) for _n, _op, w in peel}
    if len(widths) != 1:
        return at(peel[0][0], f"{g.name} is divided by more than one width ({', '.join(sorted(widths))})")
    w_node = peel[0][2]
    params = {name for name, _t, pointer in _cuda.kernel_params(kernel) if not pointer}
    env = definitions(kernel, g.name)
    w_poly = _poly.poly(w_node, env, frozenset({g.name}))
    n_poly = _poly.poly(bound, env, frozenset({g.name}))
    rows = _affine.quotient(n_poly, w_poly) if w_poly and n_poly else None
    atoms = {a for m in (rows or {}) for a in m} | {a for m in (w_poly or {}) for a in m}
    if rows is None or not atoms <= params:
        return at(
            bound,
            f"the bound {_cuda.text(bound)} is not the width {_cuda.text(w_node)} times a row count of kernel "
            "arguments: the index algebra cannot be proven",
        )
    w_type = next(
        (t for name, t, _p in _cuda.kernel_params(kernel) if name == _cuda.text(_cuda.strip(w_node))), ""
    )
    same = " ".join(word for word in w_type.split() if word != "const") == g.type
    for n, sign, _w in peel:
        coord = "perfagent_sr_x" if sign == "%" else "perfagent_sr_y"
        # i % W has i's type when W's is the same; otherwise the conversions of the % are kept
        subs[n.id] = coord if same else f"((decltype({_cuda.text(n)})){coord})"
    form, start, end = where
    loop_bound = bound if form == "grid-stride loop" else None
    return Cell(form, start, end, stmts, g, g.name, g.type, w_node, rows, None, loop_bound, subs)


def _pointer_writes(kernel: Node) -> dict[str, Node]:
    """Pointer arguments written through (``a[i] = ...``, ``*a = ...``, ``a[i]++``): the first write."""
    pointers = {name for name, _t, pointer in _cuda.kernel_params(kernel) if pointer}
    out: dict[str, Node] = {}
    for n in _cuda.walk(kernel):
        if n.type == "subscript_expression" and is_written(n):
            arg = n.child_by_field_name("argument")
            name = _cuda.text(arg) if arg is not None else ""
            if name in pointers:
                out.setdefault(name, n)
    return out


def _sites(kernel: Node, cell: Cell) -> list[Site] | str:
    arrays = read_only(kernel)
    written = _pointer_writes(kernel)
    sites: list[Site] = []
    for stmt in cell.stmts:
        for n in _cuda.walk(stmt):
            if n.type != "subscript_expression":
                continue
            arg, index = n.child_by_field_name("argument"), subscript_index(n)
            name = _cuda.text(arg) if arg is not None else ""
            if name in written and not is_written(n):
                return at(
                    written[name],
                    f"{name} is read and written (the output aliases the input): a kept value may be stale",
                )
            if (
                name not in arrays
                or index is None
                or any(_within(_cuda.enclosing(n, k), cell.stmts) for k in _LOOPS)
            ):
                continue
            impure = next((m for m in _cuda.walk(index) if _reads_memory(m)), None)
            if impure is not None and impure.type == "call_expression":
                fn = impure.child_by_field_name("function")
                return at(
                    impure,
                    f"the index of {name} calls {_cuda.text(fn) if fn else 'a function'}: the neighbourhood cannot be proven",
                )
            if impure is not None:
                return at(impure, f"the index of {name} reads memory: the neighbourhood is data-dependent")
            sites.append(Site(n, name, arrays[name], index))
    return sites


def _reads_memory(node: Node) -> bool:
    if node.type in ("subscript_expression", "pointer_expression", "field_expression"):
        return _cuda.builtin_axis(node) is None
    if node.type == "call_expression":
        fn = node.child_by_field_name("function")
        return fn is None or _cuda.text(fn).split("::")[-1] not in _PURE_CALLS
    return False


def analyse(kernel: Node, dims: int) -> Cell | str:
    """The row-loop shape of ``kernel`` under a ``dims``-D launch, or why it is not one."""
    body = kernel.child_by_field_name("body")
    if body is None:
        return "the kernel has no body"
    why = _thread_index.cooperation(kernel) or callee_uses_threads(kernel)
    if why:
        return why
    cell = _two_d(kernel, body) if dims == 2 else _flat(kernel, body)
    if isinstance(cell, str):
        return cell
    sites = _sites(kernel, cell)
    if isinstance(sites, str):
        return sites
    return replace(cell, sites=sites)
