"""vectorize-access for N-D permutes that keep the innermost dimension: copy 16-byte row pieces.

The generic strided element-wise permute (PyTorch's OffsetCalculator form, ``x.permute(0, 2, 1, 3)``
and its kin) gives each thread one element: it peels the flat index into coordinates with ``%`` and
``/`` (64-bit division, dozens of instructions) and moves 2 or 4 bytes. When the permute keeps the
innermost dimension, the innermost coordinate ``d = idx % D`` is a unit-stride term of both the read
and the write index, so ``16 / sizeof(T)`` consecutive flat indices that stay in one row are
consecutive in both arrays: one thread can peel the index once and move them as one 16-byte vector.

Precondition (proven on the tree-sitter parse tree of the kernel, 1-D launch):
- the body is ``I idx = blockIdx.x * blockDim.x + threadIdx.x;`` (any order, casts), then
  declarations and compound assignments of locals, one guard ``if (idx >= N) return;`` (or
  ``N <= idx``), and last one copy ``dst[W] = src[R];`` between two pointer arguments of one type;
- one local ``d = idx % D`` (``D`` a name); every other local that depends on ``idx`` reads it only as
  ``idx / D`` (the row), so it is the same for the whole row;
- ``W`` and ``R`` are each ``idx`` itself or a sum with ``d`` (or ``idx``) as one unit-stride term and
  terms that read neither ``d`` nor ``idx``.

The rewrite gives each thread ``V = 16 / sizeof(T)`` consecutive flat indices. The original body,
verbatim, becomes a device lambda of ``idx``; a second copy of it checks at run time that the ``V``
elements are in bounds, in one row (``d + V <= D``) and 16-byte aligned on both sides, and then moves
them with one ``uint4`` load and store; otherwise the thread runs the original body ``V`` times. So
every shape and pointer is handled, and the fast path only where it is provably the same copy. The
launch copy divides the grid by ``V``.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda, _launch
from perfagent.rewrite.recipes._chunk_syntax import ident, is_global_id, leaves, operator
from perfagent.rewrite.recipes._transpose_copy import _copy_arrays
from perfagent.rewrite.recipes.framework import CudaRecipe, Source, Variant, at, register
from perfagent.workloads.launch_spec import LaunchOverride

NAME = "permute-rows"
_VECTOR_BYTES = 16


@dataclass(frozen=True)
class _Permute:
    idx: tuple[str, str]
    """(name, declared type) of the flat global index."""
    d: str
    extent: str
    """``D`` of ``d = idx % D``."""
    bound: str
    """``N`` of the guard ``idx >= N``."""
    element: str
    lanes: int
    statements: list[Node]
    """Everything after the index declaration; the copy last."""
    copy: Node
    dst: str
    src: str
    body: Node


def _decl(stmt: Node) -> tuple[str, Node] | None:
    inits = [c for c in stmt.named_children if c.type == "init_declarator"]
    if stmt.type != "declaration" or len(inits) != 1:
        return None
    name, value = (inits[0].child_by_field_name(f) for f in ("declarator", "value"))
    if name is None or value is None or name.type != "identifier":
        return None
    return _cuda.text(name), value


def _reads_row_only(value: Node, idx: str, extent: str, d: str) -> bool:
    """``value`` reads ``idx`` only as ``idx / D`` and no per-element local (``d``, or one built from it)."""
    for n in _cuda.walk(value):
        if n.type != "identifier" or n.parent is None:
            continue
        name = _cuda.text(n)
        if name == d:
            return False
        if name == idx:
            up: Node | None = n.parent
            while up is not None and up.type in ("parenthesized_expression", "cast_expression"):
                up = up.parent
            right = up.child_by_field_name("right") if up is not None else None
            if up is None or operator(up) != "/" or ident(right) != extent:
                return False
    return True


def _guard_bound(stmt: Node, idx: str) -> str | None:
    """``N`` of ``if (idx >= N) return;`` (or ``N <= idx``)."""
    cond = stmt.child_by_field_name("condition")
    body = stmt.child_by_field_name("consequence")
    inner = _cuda.strip(cond.named_children[0]) if cond is not None and cond.named_children else None
    if inner is None or body is None or stmt.child_by_field_name("alternative") is not None:
        return None
    returns = [body] if body.type != "compound_statement" else body.named_children
    if len(returns) != 1 or returns[0].type != "return_statement" or returns[0].named_children:
        return None
    left, right = inner.child_by_field_name("left"), inner.child_by_field_name("right")
    op = operator(inner)
    if op == ">=" and ident(left) == idx and right is not None:
        return _cuda.text(right)
    if op == "<=" and ident(right) == idx and left is not None:
        return _cuda.text(left)
    return None


def _contiguous(index: Node, idx: str, d: str) -> bool:
    """``index`` is ``idx``, or a sum with ``d`` (or ``idx``) as one term and the others free of both."""
    if ident(index) == idx:
        return True
    terms = leaves(index, "+")
    units = [t for t in terms if ident(t) in (d, idx)]
    rest = [t for t in terms if t not in units]
    return len(units) == 1 and not any(_cuda.identifiers_in(t) & {d, idx} for t in rest)


def _innermost(stmts: list[Node], idx: str) -> tuple[Node, str, str] | str:
    """(declaration, d, D) of the one ``d = idx % D``, or why there is none."""
    found = []
    for stmt in stmts:
        decl = _decl(stmt)
        v = _cuda.strip(decl[1]) if decl is not None else None
        if (
            decl is not None
            and v is not None
            and operator(v) == "%"
            and ident(v.child_by_field_name("left")) == idx
        ):
            extent = ident(v.child_by_field_name("right"))
            if extent is None:
                return at(stmt, f"the innermost extent in '{_cuda.text(v)}' is not a name")
            found.append((stmt, decl[0], extent))
    if len(found) != 1:
        return f"not one innermost coordinate 'd = {idx} % D': not a peeled flat index"
    return found[0]


def _scan(stmts: list[Node], idx: str) -> tuple[str, str, str] | str:
    """(d, D, N) of the peeling statements before the copy, or why they are not a row-level peel."""
    inner = _innermost(stmts, idx)
    if isinstance(inner, str):
        return inner
    d_decl, d, extent = inner
    bound = None
    row_level: set[str] = set()
    for stmt in stmts:
        if stmt is d_decl:
            continue
        if stmt.type == "if_statement":
            bound = bound or _guard_bound(stmt, idx)
            if bound is None:
                return at(stmt, f"not the guard 'if ({idx} >= N) return;'")
            continue
        decl = _decl(stmt)
        if decl is not None:
            name, value = decl
            if not _reads_row_only(value, idx, extent, d):
                return at(stmt, f"{name} differs along the row (reads {d or idx} other than as {idx} / D)")
            row_level.add(name)
            continue
        expr = stmt.named_children[0] if stmt.type == "expression_statement" and stmt.named_children else None
        target = ident(expr.child_by_field_name("left")) if expr is not None else None
        update = expr.child_by_field_name("right") if expr is not None else None
        if expr is None or expr.type != "assignment_expression" or target not in row_level or update is None:
            return at(stmt, "not a declaration, an update of a row-level local or the guard")
        if not _reads_row_only(update, idx, extent, d):
            return at(stmt, f"{target} differs along the row")
    if bound is None:
        return f"no guard 'if ({idx} >= N) return;'"
    return d, extent, bound


def analyse(kernel: Node, body: Node) -> _Permute | str:
    if "__shared__" in _cuda.text(kernel):
        return "the kernel uses shared memory"
    stmts = [s for s in body.named_children if s.type != "comment"]
    first = _decl(stmts[0]) if stmts else None
    if first is None or not is_global_id(first[1], {}):
        return "the body does not start with the flat index 'idx = blockIdx.x * blockDim.x + threadIdx.x'"
    idx = first[0]
    rest = stmts[1:]
    if any(_cuda.builtin_axis(n) for s in rest for n in _cuda.walk(s)):
        return "thread built-ins are read after the flat index"
    if not rest or rest[-1].type != "expression_statement":
        return "the body does not end with the copy 'dst[W] = src[R];'"
    copy = rest[-1].named_children[0] if rest[-1].named_children else None
    dst = copy.child_by_field_name("left") if copy is not None else None
    src = _cuda.strip(copy.child_by_field_name("right") or copy) if copy is not None else None
    if (
        copy is None
        or operator(copy) != "="
        or dst is None
        or src is None
        or "subscript" not in dst.type + src.type
    ):
        return at(rest[-1], "the last statement is not a copy 'dst[W] = src[R]'")
    if dst.type != "subscript_expression" or src.type != "subscript_expression":
        return at(rest[-1], "the last statement is not a copy 'dst[W] = src[R]'")
    params = {name: (typ, ptr) for name, typ, ptr in _cuda.kernel_params(kernel)}
    arrays = _copy_arrays(params, dst, src)
    if isinstance(arrays, str):
        return arrays
    element, w, r = arrays
    size = _cuda.ELEMENT_BYTES.get(element)
    if size is None or size >= _VECTOR_BYTES:
        return f"element type {element}: not a known size below {_VECTOR_BYTES} bytes"
    scanned = _scan(rest[:-1], idx)
    if isinstance(scanned, str):
        return scanned
    d, extent, bound = scanned
    for side, index in (("write", w), ("read", r)):
        if not _contiguous(index, idx, d):
            return at(
                index,
                f"the {side} index is not contiguous along {d}: the permute moves the innermost dimension",
            )
    decl_type = _cuda.element_type(stmts[0])
    names = [_cuda.text(a.child_by_field_name("argument") or a) for a in (dst, src)]
    return _Permute(
        (idx, decl_type or "long long"),
        d,
        extent,
        bound,
        element,
        _VECTOR_BYTES // size,
        rest,
        copy,
        names[0],
        names[1],
        body,
    )


def _lambda(p: _Permute, vector: bool) -> str:
    """The original statements as a lambda of the flat index; ``vector``: the checked 16-byte move."""
    lines = []
    for stmt in p.statements:
        if stmt is p.statements[-1] and vector:
            w = _cuda.text(p.copy.child_by_field_name("left") or p.copy)
            r = _cuda.text(_cuda.strip(p.copy.child_by_field_name("right") or p.copy))
            lines += [
                f"if ({p.idx[0]} + {p.lanes - 1} >= ({p.bound}) || {p.d} + {p.lanes} > {p.extent})",
                "    return false;  // the vector would leave the array or the row",
                f"const void *perfagent_from = &{r};",
                f"void *perfagent_to = &{w};",
                f"if (((size_t)perfagent_from | (size_t)perfagent_to) % {_VECTOR_BYTES} != 0)",
                "    return false;",
                "*reinterpret_cast<uint4 *>(perfagent_to) = *reinterpret_cast<const uint4 *>(perfagent_from);",
                "return true;",
            ]
            continue
        text = _cuda.text(stmt)
        if vector and stmt.type == "if_statement":
            text = text.replace("return;", "return false;")
        lines.append(text)
    ret = " -> bool" if vector else ""
    inner = "".join(f"        {line}\n" for line in "\n".join(lines).splitlines())
    return f"[&]({p.idx[1]} {p.idx[0]}){ret} {{\n{inner}    }};\n"


def _body(p: _Permute) -> str:
    first = "perfagent_first"
    return (
        "{\n"
        f"    // {NAME}: each thread moves {p.lanes} consecutive elements; when they stay in one row of {p.extent}\n"
        "    // and both sides are 16-byte aligned, one index peel and one uint4 load/store move them all.\n"
        f"    const {p.idx[1]} {first} = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * {p.lanes};\n"
        f"    auto perfagent_one = {_lambda(p, False)}"
        f"    auto perfagent_vector = {_lambda(p, True)}"
        f"    if (!perfagent_vector({first}))\n"
        f"        for (int perfagent_k = 0; perfagent_k < {p.lanes}; ++perfagent_k)\n"
        f"            perfagent_one({first} + perfagent_k);\n"
        "}"
    )


class _PermuteRows(CudaRecipe[_Permute]):
    name = NAME
    transforms = ("vectorize-access", "coalesce-access")
    summary = (
        "flat-index permutes that keep the innermost dimension: peel once per 16 bytes, move uint4 vectors"
    )
    needs_launch = True
    launch_dims = 1
    no_launch = "no launch spec: the permute's grid must shrink by the vector width"

    def match(self, src: Source) -> _Permute | str:
        found = src.kernel_body
        if isinstance(found, str):
            return found
        return analyse(*found)

    def plan(self, src: Source, m: _Permute) -> list[Variant]:
        assert src.launch is not None
        return [
            Variant(
                edits=[_cuda.Edit(m.body.start_byte, m.body.end_byte, _body(m))],
                description=(
                    f"permute by rows: {m.lanes} elements of {m.element} per thread, one peel of the flat index, "
                    f"one 16-byte move when they stay in one row of {m.extent}; grid / {m.lanes}"
                ),
                parameters={"vector_elements": m.lanes},
                launch=LaunchOverride(grid=[_launch.ceil_div(src.launch.grid[0], m.lanes)]),
            )
        ]


RECIPE = register(_PermuteRows())
applies, propose = RECIPE.applies, RECIPE.propose
