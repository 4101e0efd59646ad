"""smem-tiling: stage a naive matmul's operands in shared-memory tiles (TILE x TILE, edge guards).

A naive matmul gives each thread one element of C and walks the shared dimension alone,
``for (k) s += A[row*lda + k] * B[k*ldb + col]``: every operand element is fetched from L1/L2 once per
use, TILE times more often than a tiled kernel fetches it, and when the row comes from threadIdx.x
the loads of A are not even coalesced. The textbook fix (PMPP ch. 5; siboehm kernel 3) has the
block's TILE x TILE threads load one TILE-wide slice of A's rows and of B's columns into shared memory
per step, synchronise, and take the products from there.

Precondition, proven on the parse tree (``_matmul_nest.analyse``; each failure says which and where):
- two variables derive from the thread map as ``blockIdx.a * blockDim.a + threadIdx.a`` (``x`` and
  ``y`` in either role; a constant equal to the launch's block for blockDim), are never reassigned,
  and no other code reads threadIdx/blockIdx/blockDim/gridDim;
- one ``for`` loop, counting from 0 by one while ``k < K`` with K the same in every thread (a
  parameter or a constant); its body is one accumulation ``s += a * b`` (``s = s + a * b``,
  ``s = a * b + s``, ``s = fmaf(a, b, s)``, ``__hmul``/``__hfma`` forms), optionally through
  temporaries ``T a = A[...]``, where ``a`` reads ``A[row * lda + k]`` and ``b`` reads
  ``B[k * ldb + col]`` (``lda``/``ldb`` uniform; through casts and ``__half2float``-style
  conversions, which all map 0 to 0), and ``k`` is used nowhere else;
- A and B hold float, double, __half or __nv_bfloat16 and are never stored to; every store after the
  loop is at ``C[row * ldc + col]`` (an epilogue reading C, alpha, beta or anything else is kept);
- the nest sits under ``if (row < M && col < N) {...}`` (the last statement), after
  ``if (row >= M || col >= N) return;``, or under no guard; what the guard held before the loop is
  declarations that read no memory (hoisted: every thread of a tile must reach the barriers); without
  a guard, M and N are the scalar parameters equal to the launch's coverage of each axis for every
  parameter set of the spec (else the recipe refuses);
- a launch spec (or wrapper launch) with a 2-D grid and block, and every bound expressible in it.

The rewrite: row from the y and column from the x thread coordinates of a TILE x TILE block (so a
warp reads B and writes C along a row), ``__shared__`` tiles of A's and B's element types, a loop over
the shared dimension in TILE steps whose loads write 0 out of range, ``__syncthreads()`` after the
loads and after the products, the original loop body on the tiles (same summation order; padded
terms add exactly 0), then the original guard around the original epilogue. The candidate's launch
is block (TILE, TILE) and grid (ceil_div(N, TILE), ceil_div(M, TILE)). Candidates for TILE 32 and 16.
Distinct pointer parameters are taken not to overlap.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.base import LaunchContext
from perfagent.rewrite.recipes import _cuda, _launch, _matmul_batch
from perfagent.rewrite.recipes._cuda import strip
from perfagent.rewrite.recipes._matmul_nest import MatmulNest, analyse
from perfagent.rewrite.recipes._matmul_syntax import ELEMENT_TYPES
from perfagent.rewrite.recipes.framework import CudaRecipe, Source, Variant, register
from perfagent.workloads.launch_spec import Expr, LaunchOverride

NAME = "smem-tiling"
TILES = (32, 16)
"""Tile edges proposed, best guess first (32 x 32 = 1024 threads; 16 x 16 for kernels short of registers)."""
_INT_TYPES = frozenset({"int32", "int64", "uint32", "uint64", "int", "long", "int16", "uint16"})


def _spec_expr(
    bound: Node, nest: MatmulNest, launch: LaunchContext, constants: dict[str, int]
) -> Expr | None:
    """The launch-spec expression of a bound written in the kernel (a parameter, a constant, a literal)."""
    node = strip(bound)
    text = _cuda.text(node)
    if node.type == "number_literal":
        return _cuda.evaluate(text, {})
    if node.type != "identifier":
        return None
    names = [p[0] for p in nest.params]
    if text in names:
        if len(names) != len(launch.args):
            return None
        arg = launch.args[names.index(text)]
        return arg.value
    if text in launch.defines:
        return text
    return constants.get(text)


def _coverage_param(nest: MatmulNest, launch: LaunchContext, axis: int) -> tuple[str, Expr] | str:
    """The int parameter equal to the launch's coverage of ``axis`` for every parameter set (unguarded kernels)."""
    names = [p[0] for p in nest.params]
    if len(names) != len(launch.args):
        return "the launch's arguments do not match the kernel's parameters"
    sets = [_launch.spec_names(launch)] + [_launch.spec_names(launch, p) for p in launch.check_params]
    covered = f"({launch.grid[axis]}) * ({launch.block[axis]})"
    cover = [_launch.whole(covered, s) for s in sets]
    if any(c is None for c in cover):
        return f"the launch's coverage {covered} cannot be evaluated"
    found: list[tuple[str, Expr]] = []
    for (name, _typ, ptr), arg in zip(nest.params, launch.args, strict=True):
        if ptr or arg.value is None or (arg.dtype is not None and arg.dtype not in _INT_TYPES):
            continue
        if all(_launch.whole(arg.value, s) == c for s, c in zip(sets, cover, strict=True)):
            found.append((name, arg.value))
    if len(found) != 1:
        which = "none" if not found else " and ".join(n for n, _ in found)
        return (
            f"the kernel checks no bounds and the launch's coverage of axis {'xyz'[axis]} ({cover[0]}) "
            f"matches {which} of its integer parameters: the tile's edge cannot be guarded"
        )
    return found[0]


@dataclass
class _Plan:
    """Everything ``propose`` writes: the nest, the in-range conditions and the launch extents."""

    nest: MatmulNest
    row_ok: str
    """The row's in-range condition as the source writes it (``x < (unsigned int)M``)."""
    col_ok: str
    row_limit: str
    """The row bound's text (``(unsigned int)M``): transposed loads compare another row with it."""
    col_limit: str
    rows: Expr
    """The rows of C as a launch-spec expression."""
    cols: Expr


def _plan(src: Source) -> _Plan | str:
    """The nest and its bounds in launch-spec terms (smem-tiling's match; register-tiling starts from it)."""
    launch = src.launch
    if launch is None:
        return "no launch spec: the grid is set in the source's own launch"
    if len(launch.grid) not in (2, 3) or len(launch.block) not in (2, 3):
        return "the launch spec's grid and block are not 2-D"
    if len(launch.block) == 3 and _launch.block_extents(launch).get("z") != 1:
        return "the launch's block has a z extent: not a 2-D thread map"
    kernel = src.kernel
    if isinstance(kernel, str):
        return kernel
    constants = _cuda.int_constants(src.constants)
    nest = analyse(kernel, _launch.block_extents(launch), constants)
    if isinstance(nest, str):
        return nest
    if nest.row_bound is not None and nest.col_bound is not None:
        assert nest.row_bound.bound is not None and nest.col_bound.bound is not None
        rows = _spec_expr(nest.row_bound.bound, nest, launch, constants)
        cols = _spec_expr(nest.col_bound.bound, nest, launch, constants)
        if rows is None or cols is None:
            which = nest.row_bound if rows is None else nest.col_bound
            return (
                f"the bound in `{which.text}` is not a kernel parameter or constant the launch spec can name"
            )
        return _Plan(
            nest,
            nest.row_bound.text,
            nest.col_bound.text,
            _cuda.text(nest.row_bound.bound),
            _cuda.text(nest.col_bound.bound),
            rows,
            cols,
        )
    row_axis = 0 if nest.row_axis == "x" else 1
    found_rows = _coverage_param(nest, launch, row_axis)
    found_cols = _coverage_param(nest, launch, 1 - row_axis)
    if isinstance(found_rows, str):
        return found_rows
    if isinstance(found_cols, str):
        return found_cols
    return _Plan(
        nest,
        f"{nest.row} < {found_rows[0]}",
        f"{nest.col} < {found_cols[0]}",
        found_rows[0],
        found_cols[0],
        found_rows[1],
        found_cols[1],
    )


# --------------------------------------------------------------------------- the rewrite


def _replace_in(node: Node, swaps: list[tuple[Node, str]]) -> str:
    """``node``'s text with each (sub-node, text) replaced."""
    data = node.text or b""
    for sub, new in sorted(swaps, key=lambda s: s[0].start_byte, reverse=True):
        lo, hi = sub.start_byte - node.start_byte, sub.end_byte - node.start_byte
        data = data[:lo] + new.encode("utf-8") + data[hi:]
    return data.decode("utf-8")


def _subst(node: Node, names: dict[str, str]) -> str:
    """``node``'s text with every identifier named in ``names`` replaced by its text."""
    uses = [n for n in _cuda.walk(node) if n.type == "identifier" and _cuda.text(n) in names]
    return _replace_in(node, [(n, names[_cuda.text(n)]) for n in uses])


def _fresh(kernel: Node, base: str) -> str:
    taken = _cuda.identifiers_in(kernel)
    name, n = base, 1
    while name in taken:
        name, n = f"{base}{n}", n + 1
    return name


def _paren(text: str) -> str:
    return text if text.replace("_", "").isalnum() else f"({text})"


def _tiled(plan: _Plan, tile: int, pad: str) -> str:
    """The shared tiles and the tiled loop, indented by ``pad``.

    Tile a holds A[row0 + r][k0 + kk] at [r][kk], tile b holds B[k0 + kk][col0 + c] at [kk][c]. Row-major
    operands are loaded with threadIdx.x along the contiguous index ([ty][tx]); a transposed operand
    (A stored K x M, B stored N x K) is contiguous along the other index, so its load swaps the roles
    ([tx][ty], a padded tile against bank conflicts) and reads at the row or column of another thread
    of the block (``row - threadIdx.y + threadIdx.x``).
    """
    nest = plan.nest
    ta, tb = _fresh(nest.kernel, "pa_tile_a"), _fresh(nest.kernel, "pa_tile_b")
    t, kk = _fresh(nest.kernel, "pa_k0"), _fresh(nest.kernel, "pa_kk")
    bound = _paren(_cuda.text(nest.k_bound))
    zero_a, zero_b = ELEMENT_TYPES[nest.a_type], ELEMENT_TYPES[nest.b_type]
    lines = []
    if nest.a_kind == "a":
        a_load = _subst(nest.a.node, {nest.counter: f"({t} + threadIdx.x)"})
        a_line = f"{ta}[threadIdx.y][threadIdx.x] = ({plan.row_ok} && {t} + threadIdx.x < {bound}) ? {a_load} : {zero_a};"
        a_dims = f"[{tile}][{tile}]"
    else:
        other = _fresh(nest.kernel, "pa_row_t")
        lines.append(f"const decltype({nest.row}) {other} = {nest.row} - threadIdx.y + threadIdx.x;")
        a_load = _subst(nest.a.node, {nest.counter: f"({t} + threadIdx.y)", nest.row: other})
        a_line = f"{ta}[threadIdx.x][threadIdx.y] = ({other} < {plan.row_limit} && {t} + threadIdx.y < {bound}) ? {a_load} : {zero_a};"
        a_dims = f"[{tile}][{tile + 1}]"
    if nest.b_kind == "b":
        b_load = _subst(nest.b.node, {nest.counter: f"({t} + threadIdx.y)"})
        b_line = f"{tb}[threadIdx.y][threadIdx.x] = ({t} + threadIdx.y < {bound} && {plan.col_ok}) ? {b_load} : {zero_b};"
        b_dims = f"[{tile}][{tile}]"
    else:
        other = _fresh(nest.kernel, "pa_col_t")
        lines.append(f"const decltype({nest.col}) {other} = {nest.col} - threadIdx.x + threadIdx.y;")
        b_load = _subst(nest.b.node, {nest.counter: f"({t} + threadIdx.x)", nest.col: other})
        b_line = f"{tb}[threadIdx.x][threadIdx.y] = ({t} + threadIdx.x < {bound} && {other} < {plan.col_limit}) ? {b_load} : {zero_b};"
        b_dims = f"[{tile}][{tile + 1}]"
    body = nest.loop.child_by_field_name("body")
    assert body is not None
    inner = _replace_in(
        body, [(nest.a.node, f"{ta}[threadIdx.y][{kk}]"), (nest.b.node, f"{tb}[{kk}][threadIdx.x]")]
    )
    if body.type != "compound_statement":
        inner = "{ " + inner + " }"
    inner = inner.replace("\n", "\n    ")
    out = [
        f"__shared__ {nest.a_type} {ta}{a_dims};  // smem-tiling: one {tile}-wide slice of A's rows",
        f"__shared__ {nest.b_type} {tb}{b_dims};  // and of B's columns per step",
        *lines,
        f"for ({nest.counter_type} {t} = 0; {t} < {bound}; {t} += {tile}) {{",
        f"    {a_line}",
        f"    {b_line}",
        "    __syncthreads();",
        "#pragma unroll",
        f"    for (int {kk} = 0; {kk} < {tile}; ++{kk}) {inner}",
        "    __syncthreads();",
        "}",
    ]
    return "\n".join((pad + line) if not line.startswith("#") else line for line in out)


def _span(source: bytes, nodes: list[Node]) -> str:
    if not nodes:
        return ""
    return source[nodes[0].start_byte : nodes[-1].end_byte].decode("utf-8")


def _indent(source: bytes, node: Node) -> str:
    start = _cuda.line_start(source, node.start_byte)
    line = source[start : node.start_byte].decode("utf-8")
    return line if not line.strip() else ""


def _loop_start(nest: MatmulNest) -> Node:
    """The loop, or the ``#pragma unroll`` just before it (it would otherwise bind to the tile loop)."""
    prev = nest.loop.prev_named_sibling
    if prev is not None and prev.type == "preproc_call" and "unroll" in _cuda.text(prev):
        return prev
    return nest.loop


def rewrite(source: str, plan: _Plan, tile: int) -> str:
    """The tiled kernel source for ``plan`` with TILE = ``tile``."""
    nest = plan.nest
    data = source.encode("utf-8")
    edits = [
        _cuda.Edit(nest.row_decl.start_byte, nest.row_decl.end_byte, f"blockIdx.y * {tile} + threadIdx.y"),
        _cuda.Edit(nest.col_decl.start_byte, nest.col_decl.end_byte, f"blockIdx.x * {tile} + threadIdx.x"),
    ]
    post = _span(data, nest.post)
    if nest.guard == "if":
        assert nest.guard_stmt is not None
        pad = _indent(data, nest.guard_stmt)
        cond = nest.guard_stmt.child_by_field_name("condition")
        assert cond is not None
        pre = _span(data, nest.pre)
        text = (
            (pre + "\n" + pad if pre else "")
            + _tiled(plan, tile, pad).lstrip()
            + f"\n{pad}if {_cuda.text(cond)} {{\n{pad}    {post}\n{pad}}}"
        )
        edits.append(_cuda.Edit(nest.guard_stmt.start_byte, nest.guard_stmt.end_byte, text))
    elif nest.guard == "return":
        assert nest.guard_stmt is not None
        pad = _indent(data, nest.guard_stmt)
        pre = _span(data, nest.pre)
        text = (pre + "\n" + pad if pre else "") + _tiled(plan, tile, pad).lstrip()
        text += "\n" + pad + _cuda.text(nest.guard_stmt)
        edits.append(_cuda.Edit(nest.guard_stmt.start_byte, nest.loop.end_byte, text))
    else:
        start = _loop_start(nest)
        pad = _indent(data, nest.loop)
        text = _tiled(plan, tile, pad).lstrip()
        text += f"\n{pad}if ({plan.row_ok} && {plan.col_ok}) {{\n{pad}    {post}\n{pad}}}"
        edits.append(_cuda.Edit(start.start_byte, nest.post[-1].end_byte, text))
    return _cuda.apply_edits(source, edits)


def _ceil(extent: Expr, tile: int) -> Expr:
    if isinstance(extent, int):
        return -(-extent // tile)
    return f"ceil_div({extent}, {tile})"


class _SmemTiling(CudaRecipe[_matmul_batch.Found[_Plan]]):
    name = NAME
    transforms = ("smem-tiling",)
    summary = "naive matmul loop nests (one output per thread, a loop over k): 32x32 shared-memory tiles with edge guards"
    needs_launch = True

    def match(self, src: Source) -> _matmul_batch.Found[_Plan] | str:
        return _matmul_batch.match(src, _plan)

    def plan(self, src: Source, found: _matmul_batch.Found[_Plan]) -> list[Variant]:
        return _matmul_batch.plan(found, self._plan_2d)

    def _plan_2d(self, src: Source, plan: _Plan) -> list[Variant]:
        assert src.launch is not None
        nest = plan.nest
        bytes_per = sum(_cuda.ELEMENT_BYTES.get(t, 4) for t in (nest.a_type, nest.b_type))
        guard = {"if": "its bounds check", "return": "its early return", "none": "a bounds check added"}
        notes = []
        if nest.guard == "none":
            notes.append(
                f"no bounds check in the kernel: the tile's edges use {plan.row_ok} and {plan.col_ok}, "
                "the parameters equal to the original launch's coverage"
            )
        extra: list[Expr] = [1] if len(src.launch.grid) == 3 else []
        # the tile edge is the launch sweep of a tiled kernel: one variant per edge that fits
        return [
            Variant(
                source=rewrite(src.text, plan, tile),
                description=(
                    f"shared-memory tiling {tile}x{tile}: {nest.a.pointer} and {nest.b.pointer} staged in "
                    f"__shared__ tiles per {tile}-step of {nest.counter} (zero-filled past the edges, "
                    f"__syncthreads around the products), {nest.row} from threadIdx.y and {nest.col} from "
                    f"threadIdx.x, the store under {guard[nest.guard]}; block ({tile}, {tile})"
                ),
                parameters={"tile": tile, "a": nest.a.pointer, "b": nest.b.pointer, "guard": nest.guard},
                launch=LaunchOverride(
                    grid=[_ceil(plan.cols, tile), _ceil(plan.rows, tile), *extra], block=[tile, tile, *extra]
                ),
                notes=notes,
            )
            for tile in TILES
            if tile * tile * bytes_per <= _cuda.STATIC_SHARED_LIMIT
        ]


RECIPE = register(_SmemTiling())
applies, propose = RECIPE.applies, RECIPE.propose
