"""A flat 1-D thread index and the output coordinates a kernel decodes from it (``_matmul_decode``).

``flat_shape`` finds the index ``i = blockIdx.x * blockDim.x + threadIdx.x`` and what bounds it —
``if (i < E) {...}``, ``if (i >= E) return;``, a guard on the decoded coordinates, or a grid-stride loop
``for (i = ...; i < E; i += blockDim.x * gridDim.x)`` — with the statements each index runs;
``decoded_digits`` names the declarations that decode ``i`` with ``/`` and ``%`` (the digits) and checks
that nothing reassigns them or leaves the per-index statements early. Shared by the matmul thread-map
normaliser (``_matmul_remap``) and the row hoist of element-per-thread row passes (``_row_hoist``).
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda, _matmul_decode
from perfagent.rewrite.recipes._matmul_decode import Digit
from perfagent.rewrite.recipes._poly import Poly
from perfagent.rewrite.recipes._thread_index import GlobalIndex, global_index, global_indices, guard_of
from perfagent.rewrite.recipes._variant import Source
from perfagent.workloads.launch_spec import Expr

__all__ = [
    "FlatShape",
    "decoded_digits",
    "declared_one",
    "flat_shape",
    "guard_bounds",
    "mono_text",
    "spec_of",
    "statements",
    "then_of",
]

EXITS = ("return_statement", "break_statement", "continue_statement", "goto_statement")


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


def declared_one(stmt: Node) -> tuple[str, Node, str] | None:
    """(name, value, type) of a one-variable integer declaration ``T v = value;``."""
    inits = (
        [c for c in stmt.named_children if c.type == "init_declarator"] if stmt.type == "declaration" else []
    )
    if len(inits) != 1 or len(list(stmt.children_by_field_name("declarator"))) != 1:
        return None
    ident, val = inits[0].child_by_field_name("declarator"), inits[0].child_by_field_name("value")
    if ident is None or val is None or ident.type != "identifier":
        return None
    return _cuda.text(ident), val, _cuda.element_type(stmt)


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
    decl = declared_one(init) if init is not None else None
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
    init = (
        stmts[-1].child_by_field_name("initializer") if stmts and stmts[-1].type == "for_statement" else None
    )
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
    steps = {d[0] for s in after[:-1] if (d := declared_one(s)) and _grid_step(d[1], set())}
    last = after[-1] if after else None
    if last is not None and last.type == "for_statement":
        if len(after) != 1 + len(steps):
            return f"line {_cuda.line_of(after[0])}: statements beside the grid-stride loop"
        return _loop_shape(last, index, steps)
    for k, stmt in enumerate(after):
        guard = guard_of(stmt, index.name)
        if guard is not None and _cond_terms(guard.stmt) == 1:
            rest = after[k + 1 :] if guard.early_exit else statements(then_of(guard.stmt))
            if not guard.early_exit and k != len(after) - 1:
                return f"line {_cuda.line_of(after[k + 1])}: a statement after the bounds check"
            return FlatShape(index, index.name, guard.bound, after[:k] + rest, None, "a flat index")
    if last is not None and last.type == "if_statement" and last.child_by_field_name("alternative") is None:
        return FlatShape(
            index,
            index.name,
            None,
            after[:-1] + statements(then_of(last)),
            last,
            "a flat index (row/column guard)",
        )
    return "the flat index has no bounds check or grid-stride loop"


def then_of(stmt: Node) -> Node:
    then = stmt.child_by_field_name("consequence")
    assert then is not None
    return then


def _cond_terms(stmt: Node) -> int:
    cond = stmt.child_by_field_name("condition")
    text = _cuda.text(cond) if cond is not None else ""
    return 1 + text.count("&&") + text.count("||")


def guard_bounds(guard: Node, names: set[str]) -> dict[str, Node] | str:
    """name -> bound of ``if (a < A && b < B)`` over exactly ``names`` (why not otherwise)."""
    cond = guard.child_by_field_name("condition")
    inner = cond.named_children[-1] if cond is not None and cond.type == "condition_clause" else cond
    terms: list[Node] = []
    todo = [inner] if inner is not None else []
    while todo:
        node = _cuda.strip(todo.pop())
        if (
            node.type == "binary_expression"
            and _cuda.text(node.child_by_field_name("operator") or node) == "&&"
        ):
            todo += [c for f in ("left", "right") if (c := node.child_by_field_name(f)) is not None]
        else:
            terms.append(node)
    out: dict[str, Node] = {}
    for term in terms:
        left, right = term.child_by_field_name("left"), term.child_by_field_name("right")
        op = (
            _cuda.text(term.child_by_field_name("operator") or term)
            if term.type == "binary_expression"
            else ""
        )
        if op != "<" or left is None or right is None or _cuda.text(_cuda.strip(left)) not in names:
            return (
                f"line {_cuda.line_of(term)}: the guard term {_cuda.text(term)} is not `coordinate < bound`"
            )
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
        decl = declared_one(stmt)
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
            if node.type in EXITS:
                return f"line {_cuda.line_of(node)}: {node.type.split('_')[0]} in the per-output statements"
            if node.type in ("assignment_expression", "update_expression"):
                target = node.child_by_field_name("left") or node.child_by_field_name("argument")
                if target is not None and _cuda.text(_cuda.strip(target)) in ({shape.flat} | set(env)):
                    return f"line {_cuda.line_of(node)}: an output coordinate is reassigned"
    return {n: d for n, d in env.items() if n in used}, types, rest
