"""register-tiling: the naive matmul nest as shared-memory tiles plus a strip of outputs per thread.

The step after ``smem-tiling`` (siboehm kernel 4, "1-D block tiling"): each thread of a 32 x 8 block
computes ROWS = 4 outputs of one column, rows ``row + 8 * i``, from register accumulators. Per k of a
tile it reads B's element once from shared memory and A's four, so a shared-memory load feeds more
FMAs and the block of 256 threads still covers a 32 x 32 tile of C.

The precondition is smem-tiling's (``_matmul_nest.analyse``: row-major or transposed A and B), plus an
accumulator declared once with a value before the loop. A transposed operand's tile is loaded along its
contiguous index (threadIdx.x along the tile's rows of A^T or k of B^T) into a padded tile. The rewrite tiles as smem-tiling does, each thread loading 4 elements of each tile,
keeps the loop body per row with the accumulator replaced by ``pa_acc[i]``, and runs the original
epilogue once per row in a scope where the row variable and the accumulator hold that row's values.
The summation order of every output is unchanged. The candidate's launch: block (32, 8), grid
(ceil_div(N, 32), ceil_div(M, 32)). The recipe reads the naive nest: on a kernel smem-tiling already
rewrote it says so (the loop keeps whichever of the two is faster).
"""

from __future__ import annotations

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda, _matmul_batch, _register_tile_2d
from perfagent.rewrite.recipes._matmul_nest import MatmulNest
from perfagent.rewrite.recipes._matmul_syntax import ELEMENT_TYPES
from perfagent.rewrite.recipes.framework import CudaRecipe, Source, Variant, register
from perfagent.rewrite.recipes.smem_tiling import (
    _ceil,
    _fresh,
    _indent,
    _loop_start,
    _paren,
    _Plan,
    _plan,
    _replace_in,
    _span,
    _subst,
)
from perfagent.workloads.launch_spec import LaunchOverride

NAME = "register-tiling"
TILE = 32
ROWS = 4
"""Outputs per thread (rows ``row + STEP * i``); the block is TILE x (TILE / ROWS)."""
STEP = TILE // ROWS


def _accumulator(nest: MatmulNest, acc: str) -> tuple[Node, str, str] | str:
    """(declaration, type, initial value) of the accumulator, declared once before the loop."""
    found = []
    for n in _cuda.walk(nest.body):
        if n.type != "declaration" or n.start_byte >= nest.loop.start_byte:
            continue
        for d in n.children_by_field_name("declarator"):
            if d.type == "init_declarator":
                name, value = d.child_by_field_name("declarator"), d.child_by_field_name("value")
                if name is not None and value is not None and _cuda.text(name) == acc:
                    found.append((n, _cuda.element_type(n), _cuda.text(value)))
    if len(found) != 1:
        return f"the accumulator {acc} is not declared once with a value before the loop"
    return found[0]


def _acc_name(nest: MatmulNest) -> str:
    body = nest.loop.child_by_field_name("body")
    assert body is not None
    for n in _cuda.walk(body):
        if n.type == "assignment_expression":
            left = n.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                return _cuda.text(left)
    raise AssertionError("analyse proved an accumulation")


_Checked = tuple[_Plan, str, tuple[Node, str, str]]


def _check(src: Source) -> _Checked | str:
    plan = _plan(src)
    if isinstance(plan, str):
        if "already uses __shared__" in plan:
            return plan + " (register-tiling rewrites the naive nest; the loop keeps the faster of the two)"
        return plan
    nest = plan.nest
    acc = _acc_name(nest)
    decl = _accumulator(nest, acc)
    if isinstance(decl, str):
        return decl
    if decl[1].startswith("const") or "static" in _cuda.text(decl[0]).split():
        return f"the accumulator {acc} is const or static"
    if TILE * TILE * sum(_cuda.ELEMENT_BYTES.get(t, 4) for t in (nest.a_type, nest.b_type)) > (
        _cuda.STATIC_SHARED_LIMIT
    ):
        return "the tiles do not fit 48 KiB of static shared memory"
    return plan, acc, decl


def body_with(plan: _Plan, acc: str, a: str, b: str, acc_cell: str) -> str:
    """The loop body with A's and B's elements read as ``a`` and ``b`` and the accumulator as ``acc_cell``."""
    nest = plan.nest
    body = nest.loop.child_by_field_name("body")
    assert body is not None
    accs = [n for n in _cuda.walk(body) if n.type == "identifier" and _cuda.text(n) == acc]
    swaps = [(nest.a.node, a), (nest.b.node, b), *[(n, acc_cell) for n in accs]]
    text = _replace_in(body, swaps)
    return text if body.type == "compound_statement" else "{ " + text + " }"


def rewrite(source: str, plan: _Plan, acc: str, acc_type: str, acc_init: str) -> str:
    """The source with the nest register-tiled (TILE x TILE tiles, ROWS outputs per thread)."""
    nest = plan.nest
    data = source.encode("utf-8")
    kernel = nest.kernel
    ta, tb = _fresh(kernel, "pa_tile_a"), _fresh(kernel, "pa_tile_b")
    t, kk, i = _fresh(kernel, "pa_k0"), _fresh(kernel, "pa_kk"), _fresh(kernel, "pa_i")
    r = _fresh(kernel, "pa_row")
    bound = _paren(_cuda.text(nest.k_bound))
    row, col = nest.row, nest.col
    a_line, a_dims = _a_load(plan, ta, t, i, r, bound)
    b_line, b_dims = _b_load(plan, tb, t, i, bound)
    in_range = _in_range(plan)
    inner = body_with(
        plan, acc, f"{ta}[threadIdx.y + {i} * {STEP}][{kk}]", f"{tb}[{kk}][threadIdx.x]", f"pa_acc[{i}]"
    )
    inner = inner.replace("\n", "\n        ")
    post = _span(data, nest.post).replace("\n", "\n        ")
    lines = [
        f"{acc_type} pa_acc[{ROWS}];  // register-tiling: rows {row} + {STEP} * i of column {col}",
        "#pragma unroll",
        f"for (int {i} = 0; {i} < {ROWS}; ++{i}) pa_acc[{i}] = {acc_init};",
        f"__shared__ {nest.a_type} {ta}{a_dims};",
        f"__shared__ {nest.b_type} {tb}{b_dims};",
        f"for ({nest.counter_type} {t} = 0; {t} < {bound}; {t} += {TILE}) {{",
        "#pragma unroll",
        f"    for (int {i} = 0; {i} < {ROWS}; ++{i}) {{",
        f"        const decltype({row}) {r} = {row} + {i} * {STEP};",
        f"        {a_line}",
        f"        {b_line}",
        "    }",
        "    __syncthreads();",
        "#pragma unroll",
        f"    for (int {kk} = 0; {kk} < {TILE}; ++{kk}) {{",
        "#pragma unroll",
        f"        for (int {i} = 0; {i} < {ROWS}; ++{i}) {inner}",
        "    }",
        "    __syncthreads();",
        "}",
        "#pragma unroll",
        f"for (int {i} = 0; {i} < {ROWS}; ++{i}) {{",
        f"    const decltype({row}) {r} = {row} + {i} * {STEP};",
        "    {",
        f"        const decltype({row}) {row} = {r};",
        f"        {acc_type} {acc} = pa_acc[{i}];",
        f"        if {in_range} {{",
        f"            {post}",
        "        }",
        "    }",
        "}",
    ]
    return _cuda.apply_edits(source, edits_for(plan, data, lines))


def _a_load(plan: _Plan, ta: str, t: str, i: str, r: str, bound: str) -> tuple[str, str]:
    """The statement that loads strip ``i`` of A's tile, and the tile's dimensions.

    Row-major A (A[row * lda + k]) is read along k by threadIdx.x ([row][k] = [ty + i*STEP][tx]). A
    transposed A (A[k * lda + row], stored K x M) is contiguous along the row, so threadIdx.x walks the
    tile's rows instead ([tx][ty + i*STEP], read at the row of another thread of the block) and the tile
    gets a padding column against bank conflicts on those column-wise stores.
    """
    nest = plan.nest
    zero = ELEMENT_TYPES[nest.a_type]
    if nest.a_kind == "a":
        load = _subst(nest.a.node, {nest.counter: f"({t} + threadIdx.x)", nest.row: r})
        return (
            f"{ta}[threadIdx.y + {i} * {STEP}][threadIdx.x] = ({r} < {plan.row_limit} && {t} + threadIdx.x < {bound}) ? {load} : {zero};",
            f"[{TILE}][{TILE}]",
        )
    k = f"({t} + threadIdx.y + {i} * {STEP})"
    other = f"({nest.row} - threadIdx.y + threadIdx.x)"
    load = _subst(nest.a.node, {nest.counter: k, nest.row: other})
    return (
        f"{ta}[threadIdx.x][threadIdx.y + {i} * {STEP}] = ({other} < {plan.row_limit} && {k} < {bound}) ? {load} : {zero};",
        f"[{TILE}][{TILE + 1}]",
    )


def _b_load(plan: _Plan, tb: str, t: str, i: str, bound: str) -> tuple[str, str]:
    """The same for B's tile: row-major B[k * ldb + col] along col, a transposed B[col * ldb + k] along k."""
    nest = plan.nest
    zero = ELEMENT_TYPES[nest.b_type]
    if nest.b_kind == "b":
        load = _subst(nest.b.node, {nest.counter: f"({t} + threadIdx.y + {i} * {STEP})"})
        return (
            f"{tb}[threadIdx.y + {i} * {STEP}][threadIdx.x] = ({t} + threadIdx.y + {i} * {STEP} < {bound} && {plan.col_ok}) ? {load} : {zero};",
            f"[{TILE}][{TILE}]",
        )
    other = f"({nest.col} - threadIdx.x + threadIdx.y + {i} * {STEP})"
    load = _subst(nest.b.node, {nest.counter: f"({t} + threadIdx.x)", nest.col: other})
    return (
        f"{tb}[threadIdx.x][threadIdx.y + {i} * {STEP}] = ({t} + threadIdx.x < {bound} && {other} < {plan.col_limit}) ? {load} : {zero};",
        f"[{TILE}][{TILE + 1}]",
    )


def _in_range(plan: _Plan) -> str:
    """The parenthesised condition under which the original stored its element."""
    nest = plan.nest
    if nest.guard == "none":
        return f"({plan.row_ok} && {plan.col_ok})"
    assert nest.guard_stmt is not None
    cond = nest.guard_stmt.child_by_field_name("condition")
    assert cond is not None
    return _cuda.text(cond) if nest.guard == "if" else f"(!{_cuda.text(cond)})"


def edits_for(plan: _Plan, data: bytes, lines: list[str], tile: int = TILE) -> list[_cuda.Edit]:
    """The row/column maps of a ``tile``-wide block tile, and the nest (guard to last store) replaced by
    ``lines``."""
    nest = plan.nest
    edits = [
        _cuda.Edit(nest.row_decl.start_byte, nest.row_decl.end_byte, f"blockIdx.y * {tile} + threadIdx.y"),
        _cuda.Edit(nest.col_decl.start_byte, nest.col_decl.end_byte, f"blockIdx.x * {tile} + threadIdx.x"),
    ]
    if nest.guard in ("if", "return"):
        assert nest.guard_stmt is not None
        start, end = (
            nest.guard_stmt.start_byte,
            (nest.guard_stmt.end_byte if nest.guard == "if" else nest.post[-1].end_byte),
        )
        pad = _indent(data, nest.guard_stmt)
        pre = _span(data, nest.pre)
    else:
        start, end = _loop_start(nest).start_byte, nest.post[-1].end_byte
        pad = _indent(data, nest.loop)
        pre = ""
    text = "\n".join((pad + line) if not line.startswith("#") else line for line in lines).lstrip()
    text = (pre + "\n" + pad if pre else "") + text
    if text.startswith("#"):
        text = "\n" + text
    edits.append(_cuda.Edit(start, end, text))
    return edits


def rewrite_2d(source: str, plan: _Plan, acc: str, acc_type: str, acc_init: str) -> str:
    """The source with the nest tiled 64 x 64 per block and 4 x 4 outputs per thread (``_register_tile_2d``)."""
    data = source.encode("utf-8")
    body = body_with(plan, acc, "@A", "@B", "@ACC")
    post = _span(data, plan.nest.post)
    lines = _register_tile_2d.lines(plan, acc, acc_type, acc_init, body, post, _in_range(plan))
    return _cuda.apply_edits(source, edits_for(plan, data, lines, _register_tile_2d.TILE))


class _RegisterTiling(CudaRecipe[_matmul_batch.Found[_Checked]]):
    name = NAME
    transforms = ("register-tiling",)
    summary = (
        "naive matmul loop nests: 32x32 shared tiles and 4 outputs per thread of a 32x8 block (register tile)"
    )
    needs_launch = True

    def match(self, src: Source) -> _matmul_batch.Found[_Checked] | str:
        return _matmul_batch.match(src, _check)

    def plan(self, src: Source, found: _matmul_batch.Found[_Checked]) -> list[Variant]:
        return _matmul_batch.plan(found, self._plan_2d)

    def _plan_2d(self, src: Source, m: _Checked) -> list[Variant]:
        assert src.launch is not None
        plan, acc, (_decl, acc_type, acc_init) = m
        acc_type = " ".join(w for w in acc_type.split() if w != "const")
        extra = [1] if len(src.launch.grid) == 3 else []
        nest = plan.nest
        out = [
            Variant(
                source=rewrite(src.text, plan, acc, acc_type, acc_init),
                description=(
                    f"register tiling: {TILE}x{TILE} shared tiles of {nest.a.pointer} and {nest.b.pointer}, each "
                    f"thread of a {TILE}x{STEP} block computes {ROWS} rows ({nest.row} + {STEP} * i) of column "
                    f"{nest.col} in registers; block ({TILE}, {STEP})"
                ),
                parameters={"tile": TILE, "rows_per_thread": ROWS, "a": nest.a.pointer, "b": nest.b.pointer},
                launch=LaunchOverride(
                    grid=[_ceil(plan.cols, TILE), _ceil(plan.rows, TILE), *extra], block=[TILE, STEP, *extra]
                ),
            )
        ]
        if _register_tile_2d.applies(plan) is None:
            two_d = _register_tile_2d
            out.append(
                Variant(
                    source=rewrite_2d(src.text, plan, acc, acc_type, acc_init),
                    description=(
                        f"register tiling 4x4: {two_d.TILE}x{two_d.DEPTH} and {two_d.DEPTH}x{two_d.TILE} shared tiles of "
                        f"{nest.a.pointer} and {nest.b.pointer}, each thread of a 16x16 block computes a 4x4 tile of C "
                        f"(rows {nest.row} + 16 * i, columns {nest.col} + 16 * j) in registers; block (16, 16)"
                    ),
                    parameters={
                        "tile": two_d.TILE,
                        "rows_per_thread": two_d.PER,
                        "cols_per_thread": two_d.PER,
                    },
                    launch=LaunchOverride(
                        grid=[_ceil(plan.cols, two_d.TILE), _ceil(plan.rows, two_d.TILE), *extra],
                        block=[two_d.THREADS, two_d.THREADS, *extra],
                    ),
                )
            )
        return out


RECIPE = register(_RegisterTiling())
applies, propose = RECIPE.applies, RECIPE.propose
