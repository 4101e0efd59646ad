"""The cuda-samples form of a naive transpose for the transpose-tile recipe: a block of K x R threads
walks a K x K tile in K / R row steps (``transposeNaive`` with ``TILE_DIM`` and ``BLOCK_ROWS``).

    int x = blockIdx.x * K + threadIdx.x;
    int y = blockIdx.y * K + threadIdx.y;
    for (int j = 0; j < K; j += R)
        [if (guard)] dst[W] = src[R];        // y appears only as y + j

The tiled version keeps the launch and the tile geometry (K x K per block, R rows per step): the load
phase runs the same loop with lanes along x, the store phase with lanes along the rows, both through a
``K x (K + 1)`` shared tile; ``x``, ``y`` and ``j`` are re-declared per step (``y`` holding the row, ``j``
zero) so the guard and both index expressions are reused verbatim.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.base import LaunchContext
from perfagent.rewrite.recipes import _cuda

_J = "perfagent_j"
_TILE_NAME = "perfagent_tile"


@dataclass
class RowsCopy:
    x: str
    x_decl: str
    y: str
    y_decl: str
    j: str
    j_decl: str
    k: str
    r: str
    guard: str | None
    dst: Node
    src: Node
    body: Node


def _sum_terms(node: Node) -> list[Node]:
    node = _cuda.strip(node)
    if node.type == "binary_expression" and _cuda.text(node.child_by_field_name("operator") or node) == "+":
        return [
            t
            for f in ("left", "right")
            if (c := node.child_by_field_name(f)) is not None
            for t in _sum_terms(c)
        ]
    return [node]


def scaled_index(value: Node, axis: str) -> str | None:
    """K of ``blockIdx.<axis> * K + threadIdx.<axis>`` (any order, casts), K a name or literal."""
    terms = _sum_terms(value)
    if len(terms) != 2:
        return None
    k = None
    has_thread = False
    for t in terms:
        if _cuda.builtin_axis(t) == ("threadIdx", axis):
            has_thread = True
            continue
        if t.type != "binary_expression" or _cuda.text(t.child_by_field_name("operator") or t) != "*":
            return None
        factors = [_cuda.strip(t.child_by_field_name(f) or t) for f in ("left", "right")]
        block = [f for f in factors if _cuda.builtin_axis(f) == ("blockIdx", axis)]
        other = [f for f in factors if f not in block]
        if len(block) != 1 or len(other) != 1 or other[0].type not in ("identifier", "number_literal"):
            return None
        k = _cuda.text(other[0])
    return k if has_thread else None


def _decl(stmt: Node) -> tuple[str, str, Node] | None:
    inits = [c for c in stmt.named_children if c.type == "init_declarator"]
    if stmt.type != "declaration" or len(inits) != 1:
        return None
    name, value = inits[0].child_by_field_name("declarator"), inits[0].child_by_field_name("value")
    if name is None or value is None or name.type != "identifier":
        return None
    quals = [_cuda.text(c) for c in stmt.children if c.type == "type_qualifier"]
    return _cuda.text(name), " ".join([*quals, _cuda.element_type(stmt)]), value


def _only_in_sums(scope: Node, name: str, partner: str) -> bool:
    """Every read of ``name`` in ``scope`` is an operand of ``name + partner`` (either order)."""
    for n in _cuda.walk(scope):
        if n.type != "identifier" or _cuda.text(n) != name:
            continue
        parent = n.parent
        while parent is not None and parent.type in ("parenthesized_expression", "cast_expression"):
            parent = parent.parent
        if parent is None or parent.type != "binary_expression":
            return False
        if _cuda.text(parent.child_by_field_name("operator") or parent) != "+":
            return False
        sides = [_cuda.strip(parent.child_by_field_name(f) or parent) for f in ("left", "right")]
        if sorted(_cuda.text(s) for s in sides) != sorted([name, partner]):
            return False
    return True


def analyse(body: Node, launch: LaunchContext | None, env: dict[str, _cuda.Constant | int]) -> RowsCopy | str:
    stmts = [s for s in body.named_children if s.type != "comment"]
    if len(stmts) != 3 or stmts[2].type != "for_statement":
        return "not the row-step form (two indices and one loop)"
    dx, dy = _decl(stmts[0]), _decl(stmts[1])
    if dx is None or dy is None:
        return "not the row-step form (two indices and one loop)"
    kx, ky = scaled_index(dx[2], "x"), scaled_index(dy[2], "y")
    if kx is None or ky is None or kx != ky:
        return (
            "the indices are not 'blockIdx.x * K + threadIdx.x' and 'blockIdx.y * K + threadIdx.y' with one K"
        )
    loop = stmts[2]
    header = _row_step(loop, kx)
    if isinstance(header, str):
        return header
    j, j_type, r = header
    why = _launch_covers(launch, kx, r, env)
    if why is not None:
        return why
    loop_body = loop.child_by_field_name("body")
    if loop_body is None:
        return "the loop has no body"
    if not (_only_in_sums(loop_body, dy[0], j) and _only_in_sums(loop_body, j, dy[0])):
        return f"{dy[0]} and {j} are used other than as '{dy[0]} + {j}'"
    copy = _guarded_copy(loop_body)
    if isinstance(copy, str):
        return copy
    guard, dst, src = copy
    return RowsCopy(dx[0], dx[1], dy[0], dy[1], j, j_type, kx, r, guard, dst, src, body)


def _row_step(loop: Node, kx: str) -> tuple[str, str, str] | str:
    """(counter, its type, step R) of ``for (j = 0; j < K; j += R)``, else why not."""
    init, cond, update = (loop.child_by_field_name(f) for f in ("initializer", "condition", "update"))
    dj = _decl(init) if init is not None else None
    if dj is None or _cuda.text(dj[2]) != "0" or cond is None or update is None:
        return "the loop is not 'for (j = 0; j < K; j += R)'"
    j = dj[0]
    cond_s = _cuda.strip(cond)
    if (
        cond_s.type != "binary_expression"
        or _cuda.text(cond_s.child_by_field_name("operator") or cond_s) != "<"
        or _cuda.text(_cuda.strip(cond_s.child_by_field_name("left") or cond_s)) != j
        or _cuda.text(_cuda.strip(cond_s.child_by_field_name("right") or cond_s)) != kx
    ):
        return f"the loop does not run {j} up to {kx}"
    step = _cuda.text(update).replace(" ", "")
    if not step.startswith(f"{j}+="):
        return f"the loop does not step {j} by a constant"
    return j, dj[1], step[len(j) + 2 :]


def _launch_covers(
    launch: LaunchContext | None, kx: str, r: str, env: dict[str, _cuda.Constant | int]
) -> str | None:
    """Why the launch block is not (K, R) with K a known multiple of R (None: it is, so the loop covers
    the K x K tile)."""
    if launch is None or len(launch.block) != 2:
        return "no 2-D launch block"
    if [str(b).replace(" ", "") for b in launch.block] != [kx, r]:
        return f"the launch block ({launch.block}) is not ({kx}, {r}): the loop would not cover the tile"
    k_val, r_val = _cuda.evaluate(kx, env), _cuda.evaluate(r, env)
    if k_val is None or r_val is None or r_val <= 0 or k_val % r_val:
        return f"{kx} is not a known multiple of {r}"
    return None


def _guarded_copy(loop_body: Node) -> tuple[str | None, Node, Node] | str:
    """(guard condition or None, dst, src) of a loop body that is one ``dst[...] = src[...]``, possibly
    under an else-less ``if``; else why not."""
    inner = loop_body
    if inner.type == "compound_statement":
        kids = [c for c in inner.named_children if c.type != "comment"]
        if len(kids) != 1:
            return "the loop body is not one (guarded) copy"
        inner = kids[0]
    guard = None
    if inner.type == "if_statement":
        if inner.child_by_field_name("alternative") is not None:
            return "the guard has an else branch"
        c = inner.child_by_field_name("condition")
        guard = _cuda.text(c.named_children[0]) if c is not None and c.named_children else None
        inner = inner.child_by_field_name("consequence") or inner
        if inner.type == "compound_statement":
            kids = [c for c in inner.named_children if c.type != "comment"]
            if len(kids) != 1:
                return "the guarded block is not one copy"
            inner = kids[0]
    expr = inner.named_children[0] if inner.type == "expression_statement" and inner.named_children else None
    if (
        expr is None
        or expr.type != "assignment_expression"
        or _cuda.text(expr.child_by_field_name("operator") or expr) != "="
    ):
        return "not a plain copy 'dst[...] = src[...]'"
    dst, src = expr.child_by_field_name("left"), _cuda.strip(expr.child_by_field_name("right") or expr)
    if dst is None or dst.type != "subscript_expression" or src.type != "subscript_expression":
        return "not a plain copy 'dst[...] = src[...]'"
    return guard, dst, src


def emit(c: RowsCopy, element: str, w: str, r_index: str, d_arr: str, s_arr: str) -> str:
    guard = f"if ({c.guard})\n            " if c.guard else ""
    head = f"for (int {_J} = 0; {_J} < {c.k}; {_J} += {c.r}) {{\n"
    return (
        "{\n"
        f"    // transpose-tile: each {c.k} x {c.k} tile is read with lanes along {c.x} (unit stride in {s_arr})\n"
        f"    // and written with lanes along the rows (unit stride in {d_arr}); the extra column avoids bank conflicts.\n"
        f"    __shared__ {element} {_TILE_NAME}[{c.k}][{c.k} + 1];\n"
        f"    {head}"
        f"        {c.x_decl} {c.x} = blockIdx.x * {c.k} + threadIdx.x;\n"
        f"        {c.y_decl} {c.y} = blockIdx.y * {c.k} + threadIdx.y + {_J};\n"
        f"        {c.j_decl} {c.j} = 0;\n"
        f"        {guard}{_TILE_NAME}[threadIdx.y + {_J}][threadIdx.x] = {s_arr}[{r_index}];\n"
        "    }\n"
        "    __syncthreads();\n"
        f"    {head}"
        f"        {c.x_decl} {c.x} = blockIdx.x * {c.k} + threadIdx.y + {_J};\n"
        f"        {c.y_decl} {c.y} = blockIdx.y * {c.k} + threadIdx.x;\n"
        f"        {c.j_decl} {c.j} = 0;\n"
        f"        {guard}{d_arr}[{w}] = {_TILE_NAME}[threadIdx.x][threadIdx.y + {_J}];\n"
        "    }\n"
        "}"
    )
