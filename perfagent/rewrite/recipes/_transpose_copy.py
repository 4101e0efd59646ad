"""transpose-tile's reading of the copy: its indices from the thread coordinates, the guard's bounds, which side is unit-stride."""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.base import LaunchContext
from perfagent.rewrite.recipes import _cuda, _transpose_rows


@dataclass
class _Copy:
    x: str
    x_decl: str
    v: str
    v_decl: str
    batch: tuple[str, str] | None
    """(name, declared type) of the blockIdx.z index."""
    bound_x: str
    bound_v: str | None
    """``Y`` of a guard ``v < Y`` (the thread form ``v = blockIdx.y * blockDim.y + threadIdx.y``)."""
    dst: Node
    src: Node
    element: str
    body: Node


def _terms(node: Node) -> list[Node]:
    node = _cuda.strip(node)
    if node.type == "binary_expression" and _cuda.text(node.child_by_field_name("operator") or node) == "+":
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        assert left is not None and right is not None
        return _terms(left) + _terms(right)
    return [node]


def _unit(expr: Node, var: str) -> bool:
    return any(t.type == "identifier" and _cuda.text(t) == var for t in _terms(expr))


def _index_of(sub: Node) -> Node | None:
    idx = sub.child_by_field_name("indices")
    args = idx.named_children if idx is not None else []
    return args[0] if len(args) == 1 else None


def _declared_type(declaration: Node) -> str:
    quals = [_cuda.text(c) for c in declaration.children if c.type == "type_qualifier"]
    return " ".join([*quals, _cuda.element_type(declaration)])


def _global_index(value: Node, axis: str) -> bool:
    """``blockIdx.<axis> * blockDim.<axis> + threadIdx.<axis>`` (any order, casts)."""
    terms = _terms(value)
    if len(terms) != 2:
        return False
    found = set()
    for t in terms:
        factors = [_cuda.strip(t)]
        if (
            factors[0].type == "binary_expression"
            and _cuda.text(factors[0].child_by_field_name("operator") or t) == "*"
        ):
            factors = [_cuda.strip(factors[0].child_by_field_name(f) or t) for f in ("left", "right")]
        found.add(tuple(sorted(a for f in factors if (a := _cuda.builtin_axis(f)))))
    return found == {(("blockDim", axis), ("blockIdx", axis)), (("threadIdx", axis),)}


def _thread_index(value: Node, axis: str, launch: LaunchContext | None) -> bool:
    """The global index on ``axis``: ``blockIdx * blockDim + threadIdx``, or ``blockIdx * K + threadIdx``
    with ``K`` written as the launch spec's block size on that axis (``BLOCK_SIZE`` and ``[BLOCK_SIZE, ...]``)."""
    if _global_index(value, axis):
        return True
    k = _transpose_rows.scaled_index(value, axis)
    dim = "xyz".index(axis)
    return (
        k is not None
        and launch is not None
        and dim < len(launch.block)
        and str(launch.block[dim]).replace(" ", "") == k.replace(" ", "")
    )


def _indices(body: Node, launch: LaunchContext | None) -> tuple[dict[str, tuple[str, str]], list[Node]] | str:
    """axis role ('x', 'y', 'z') -> (name, declared type); and the statements after the declarations.
    A key 'thread-y' marks a y index from the thread coordinates (else it is ``blockIdx.y`` alone)."""
    found: dict[str, tuple[str, str]] = {}
    rest: list[Node] = []
    for stmt in body.named_children:
        if stmt.type == "comment":
            continue
        if stmt.type != "declaration" or rest:
            rest.append(stmt)
            continue
        inits = [c for c in stmt.named_children if c.type == "init_declarator"]
        if len(inits) != 1:
            return f"line {_cuda.line_of(stmt)}: a declaration that is not one index"
        name, value = inits[0].child_by_field_name("declarator"), inits[0].child_by_field_name("value")
        if name is None or value is None or name.type != "identifier":
            return f"line {_cuda.line_of(stmt)}: a declaration that is not one index"
        v = _cuda.strip(value)
        axis = _cuda.builtin_axis(v)
        role = (
            "x"
            if _thread_index(value, "x", launch)
            else "y-thread"
            if _thread_index(value, "y", launch)
            else axis[1]
            if axis and axis[0] == "blockIdx" and axis[1] in "yz"
            else None
        )
        if role is None or role in found:
            return (
                f"line {_cuda.line_of(stmt)}: '{_cuda.text(stmt).strip()}' is not a thread index of the copy"
            )
        found[role] = (_cuda.text(name), _declared_type(stmt))
    if "y-thread" in found:
        if "y" in found:
            return "two indices from the y coordinates"
        found["y"], found["thread-y"] = found.pop("y-thread"), ("", "")
    if "x" not in found or "y" not in found:
        return (
            "no 'blockIdx.x * blockDim.x + threadIdx.x' index and y index ('blockIdx.y' or its global index)"
        )
    return found, rest


def _guard_bounds(cond: Node) -> dict[str, str] | str:
    """{index: bound} of a guard ``a < A && b < B`` (bounds are names), or why it is not one."""
    out: dict[str, str] = {}
    parts = [cond]
    while parts:
        node = _cuda.strip(parts.pop())
        op = (
            _cuda.text(node.child_by_field_name("operator") or node)
            if node.type == "binary_expression"
            else ""
        )
        if op == "&&":
            parts += [c for f in ("left", "right") if (c := node.child_by_field_name(f)) is not None]
            continue
        left, right = (_cuda.strip(node.child_by_field_name(f) or node) for f in ("left", "right"))
        if op != "<" or left.type != "identifier" or right.type != "identifier":
            return f"the guard term '{_cuda.text(node)}' is not 'index < bound'"
        out[_cuda.text(left)] = _cuda.text(right)
    return out


def _copy(stmts: list[Node]) -> tuple[Node, Node, dict[str, str]] | str:
    """(dst subscript, src subscript, {index: bound} of its guard) of the single guarded copy."""
    if len(stmts) != 1:
        return "the body is not one (guarded) copy after the index declarations"
    stmt, bounds = stmts[0], {}
    if stmt.type == "if_statement":
        if stmt.child_by_field_name("alternative") is not None:
            return f"line {_cuda.line_of(stmt)}: the guard has an else branch"
        cond = stmt.child_by_field_name("condition")
        inner = cond.named_children[0] if cond is not None and cond.named_children else None
        if inner is None:
            return f"line {_cuda.line_of(stmt)}: the guard has no condition"
        found = _guard_bounds(inner)
        if isinstance(found, str):
            return f"line {_cuda.line_of(stmt)}: {found}"
        bounds = found
        stmt = stmt.child_by_field_name("consequence") or stmt
        if stmt.type == "compound_statement":
            inner_stmts = [c for c in stmt.named_children if c.type != "comment"]
            if len(inner_stmts) != 1:
                return f"line {_cuda.line_of(stmt)}: the guarded block is not one copy"
            stmt = inner_stmts[0]
    expr = stmt.named_children[0] if stmt.type == "expression_statement" and stmt.named_children else None
    if (
        expr is None
        or expr.type != "assignment_expression"
        or _cuda.text(expr.child_by_field_name("operator") or expr) != "="
    ):
        return f"line {_cuda.line_of(stmt)}: not a plain copy 'dst[...] = src[...]'"
    dst, src = expr.child_by_field_name("left"), _cuda.strip(expr.child_by_field_name("right") or expr)
    if dst is None or dst.type != "subscript_expression" or src.type != "subscript_expression":
        return f"line {_cuda.line_of(stmt)}: not a plain copy 'dst[...] = src[...]'"
    return dst, src, bounds


def _copy_arrays(params: dict[str, tuple[str, bool]], dst: Node, src: Node) -> tuple[str, Node, Node] | str:
    """(element type, write index, read index) of ``dst[W] = src[R]`` between two pointer arguments of
    one element type, or why not."""
    d_arr, s_arr = (_cuda.text(a.child_by_field_name("argument") or a) for a in (dst, src))
    if d_arr == s_arr or not params.get(d_arr, ("", False))[1] or not params.get(s_arr, ("", False))[1]:
        return "the copy is not between two different pointer arguments"
    d_type, s_type = (params[a][0].replace("const", "").split() for a in (d_arr, s_arr))
    if d_type != s_type:
        return f"{s_arr} and {d_arr} have different element types"
    w, r = _index_of(dst), _index_of(src)
    if w is None or r is None:
        return "an index of the copy is not one expression"
    return " ".join(d_type), w, r
