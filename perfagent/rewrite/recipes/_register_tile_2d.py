"""register-tiling's second candidate: a 4 x 4 block of outputs per thread (siboehm kernel 5, "2-D block tiling").

The first candidate (``register_tiling.rewrite``) gives each thread a strip of 4 rows of one column: per k
it reads 4 elements of A's tile and 1 of B's from shared memory for 4 FMAs. Here each thread of a 16 x 16
block keeps a 4 x 4 tile of C in registers — rows ``row + 16 * i``, columns ``col + 16 * j`` of a 64 x 64
block tile — and per k reads 4 + 4 shared elements for 16 FMAs, halving the shared-memory traffic per FMA
again. Outputs 16 apart (not 4 adjacent ones) keep every shared read conflict-free (a warp reads 16
consecutive columns of B's tile, and A's element is a broadcast) and every global load and epilogue store
coalesced along threadIdx.x. Tiles: A 64 x 32 (padded to 33 columns: a warp spans two threadIdx.y, so it
reads two of A's rows at one k, which would share a bank) and B 32 x 64, each thread loading 8 elements
of each.

Same precondition as the first candidate, row-major A and B only (a transposed operand would need its
tile loaded along the other index; the first candidate covers it). The summation order of every output
is unchanged: k runs in order within each tile and tiles in order. Launch: block (16, 16), grid
(ceil_div(N, 64), ceil_div(M, 64)).
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._matmul_syntax import ELEMENT_TYPES
from perfagent.rewrite.recipes.smem_tiling import _fresh, _paren, _Plan, _subst

TILE = 64
"""Rows and columns of C per block."""
THREADS = 16
"""Threads per block side: the block is THREADS x THREADS."""
PER = TILE // THREADS
"""Outputs per thread along each side (4 x 4)."""
DEPTH = 32
"""k per shared tile."""
LOADS = DEPTH // THREADS
"""Tile rows (of B) or columns (of A) each thread loads per side pass."""


def applies(plan: _Plan) -> str | None:
    """Why the 2-D variant does not apply to a plan the 1-D one takes (None: it does)."""
    nest = plan.nest
    if nest.a_kind != "a" or nest.b_kind != "b":
        return "a transposed operand (the 4 x 4 variant loads row-major tiles only)"
    size = TILE * (DEPTH + 1) * sum(_cuda.ELEMENT_BYTES.get(t, 4) for t in (nest.a_type, nest.b_type))
    if size > _cuda.STATIC_SHARED_LIMIT:
        return "its 64 x 32 and 32 x 64 tiles do not fit 48 KiB of static shared memory"
    return None


@dataclass(frozen=True)
class _Names:
    """The identifiers the 4 x 4 code declares, each fresh in the kernel."""

    tile_a: str
    tile_b: str
    k0: str
    kk: str
    i: str
    j: str
    h: str
    row: str
    col: str

    @classmethod
    def fresh(cls, kernel: Node) -> _Names:
        return cls(
            tile_a=_fresh(kernel, "pa_tile_a"),
            tile_b=_fresh(kernel, "pa_tile_b"),
            k0=_fresh(kernel, "pa_k0"),
            kk=_fresh(kernel, "pa_kk"),
            i=_fresh(kernel, "pa_i"),
            j=_fresh(kernel, "pa_j"),
            h=_fresh(kernel, "pa_h"),
            row=_fresh(kernel, "pa_row"),
            col=_fresh(kernel, "pa_col"),
        )


def lines(
    plan: _Plan, acc: str, acc_type: str, acc_init: str, body: str, post: str, in_range: str
) -> list[str]:
    """The statements replacing the nest. ``body``: the loop body with ``@A``, ``@B``, ``@ACC`` where A's and
    B's elements and the accumulator go; ``post``: the epilogue; ``in_range``: when the original stored."""
    names = _Names.fresh(plan.nest.kernel)
    i, j, kk = names.i, names.j, names.kk
    inner = (
        body.replace("@ACC", f"pa_acc[{i}][{j}]")  # before "@A", its prefix
        .replace("@A", f"{names.tile_a}[threadIdx.y + {i} * {THREADS}][{kk}]")
        .replace("@B", f"{names.tile_b}[{kk}][threadIdx.x + {j} * {THREADS}]")
        .replace("\n", "\n                ")
    )
    # every loop that holds a #pragma gets braces: the parse tree (and nvcc) want the pragma as a statement
    return [
        *_accumulators(names, plan, acc_type, acc_init),
        *_k_loop(names, plan, inner),
        *_epilogue(names, plan, acc, acc_type, post.replace("\n", "\n                "), in_range),
    ]


def _accumulators(names: _Names, plan: _Plan, acc_type: str, acc_init: str) -> list[str]:
    """The thread's 4 x 4 accumulators, each set to ``acc_init``."""
    i, j, row, col = names.i, names.j, plan.nest.row, plan.nest.col
    return [
        f"{acc_type} pa_acc[{PER}][{PER}];  // register-tiling 4x4: rows {row} + {THREADS} * i, columns {col} + {THREADS} * j",
        "#pragma unroll",
        f"for (int {i} = 0; {i} < {PER}; ++{i}) {{",
        "#pragma unroll",
        f"    for (int {j} = 0; {j} < {PER}; ++{j}) pa_acc[{i}][{j}] = {acc_init};",
        "}",
    ]


def _k_loop(names: _Names, plan: _Plan, inner: str) -> list[str]:
    """The loop over k tiles: load A's 64 x 32 and B's 32 x 64 tiles (zero outside the matrices), then
    ``inner`` for every k of the tile and every output of the thread."""
    nest = plan.nest
    ta, tb, t, kk, i, j, h = names.tile_a, names.tile_b, names.k0, names.kk, names.i, names.j, names.h
    bound = _paren(_cuda.text(nest.k_bound))
    row, col = nest.row, nest.col
    a_row = f"({row} + {i} * {THREADS})"
    a_k = f"({t} + threadIdx.x + {h} * {THREADS})"
    b_k = f"({t} + threadIdx.y + {h} * {THREADS})"
    b_col = f"({col} + {j} * {THREADS})"
    a_load = _subst(nest.a.node, {nest.counter: a_k, row: a_row})
    b_load = _subst(nest.b.node, {nest.counter: b_k, col: b_col})
    zero_a, zero_b = ELEMENT_TYPES[nest.a_type], ELEMENT_TYPES[nest.b_type]
    return [
        f"__shared__ {nest.a_type} {ta}[{TILE}][{DEPTH + 1}];  // padded: a warp reads two of its rows at one k",
        f"__shared__ {nest.b_type} {tb}[{DEPTH}][{TILE}];",
        f"for ({nest.counter_type} {t} = 0; {t} < {bound}; {t} += {DEPTH}) {{",
        "#pragma unroll",
        f"    for (int {i} = 0; {i} < {PER}; ++{i}) {{",
        "#pragma unroll",
        f"        for (int {h} = 0; {h} < {LOADS}; ++{h})",
        f"            {ta}[threadIdx.y + {i} * {THREADS}][threadIdx.x + {h} * {THREADS}] = "
        f"({a_row} < {plan.row_limit} && {a_k} < {bound}) ? {a_load} : {zero_a};",
        "    }",
        "#pragma unroll",
        f"    for (int {h} = 0; {h} < {LOADS}; ++{h}) {{",
        "#pragma unroll",
        f"        for (int {j} = 0; {j} < {PER}; ++{j})",
        f"            {tb}[threadIdx.y + {h} * {THREADS}][threadIdx.x + {j} * {THREADS}] = "
        f"({b_k} < {bound} && {b_col} < {plan.col_limit}) ? {b_load} : {zero_b};",
        "    }",
        "    __syncthreads();",
        "#pragma unroll",
        f"    for (int {kk} = 0; {kk} < {DEPTH}; ++{kk}) {{",
        "#pragma unroll",
        f"        for (int {i} = 0; {i} < {PER}; ++{i}) {{",
        "#pragma unroll",
        f"            for (int {j} = 0; {j} < {PER}; ++{j}) {inner}",
        "        }",
        "    }",
        "    __syncthreads();",
        "}",
    ]


def _epilogue(names: _Names, plan: _Plan, acc: str, acc_type: str, post: str, in_range: str) -> list[str]:
    """The original epilogue once per output, with ``row``, ``col`` and the accumulator shadowed by the
    output's own."""
    i, j, r, c, row, col = names.i, names.j, names.row, names.col, plan.nest.row, plan.nest.col
    return [
        "#pragma unroll",
        f"for (int {i} = 0; {i} < {PER}; ++{i}) {{",
        "#pragma unroll",
        f"    for (int {j} = 0; {j} < {PER}; ++{j}) {{",
        f"        const decltype({row}) {r} = {row} + {i} * {THREADS};",
        f"        const decltype({col}) {c} = {col} + {j} * {THREADS};",
        "        {",
        f"            const decltype({row}) {row} = {r};",
        f"            const decltype({col}) {col} = {c};",
        f"            {acc_type} {acc} = pa_acc[{i}][{j}];",
        f"            if {in_range} {{",
        f"                {post}",
        "            }",
        "        }",
        "    }",
        "}",
    ]
