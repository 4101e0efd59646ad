"""vectorize-access: the shape of an element-wise kernel (index, bound, guard or grid-stride loop, parameters).

Matches ``<T> i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) <body>`` (operand order free, casts
and parentheses allowed, ``n`` an integer scalar parameter or a loop-invariant integer expression of them,
``rows * C``, ``(size_t)N * K``) and the grid-stride loop
``for (<T> i = <that index>; i < n; i += <gridDim.x * blockDim.x or a variable holding it>) <body>``
after optional declarations of that stride and of the index itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._vector_types import Element, element, supported

INTEGER_TYPES = frozenset(
    {
        "int", "unsigned", "unsigned int", "long", "long int", "unsigned long", "long long",
        "unsigned long long", "size_t", "ptrdiff_t", "int32_t", "uint32_t", "int64_t", "uint64_t",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Pointer:
    """A single-level pointer parameter."""

    name: str
    const: bool
    restrict: bool
    element: Element | None
    """How its element type is vectorised; None: it has no 16-byte form (refused if the body accesses it)."""
    where: str
    """'parameter 2 of k ('const T *x', line 3)', for refusals."""
    spelling: str
    """Its element type as written."""

    def refusal(self) -> str:
        return (
            f"{self.where} points to {self.spelling}, which has no 16-byte vector form "
            f"(the recipe vectorises {supported()})"
        )


@dataclass(frozen=True)
class Shape:
    """Where the per-element work is."""

    form: str
    """'grid-stride loop' or 'guarded' (one element per thread)."""
    index: str
    bound: str
    """The bound as written: a scalar parameter or an integer expression of them."""
    body: Node
    dropped: set[str]
    """Names the rewrite drops (the index and stride declarations): the body must not use them."""
    index_type: str = "size_t"
    """The index's declared type (a lane that reads the index as a value re-declares it so)."""
    bound_node: Node | None = None


def strip(node: Node) -> Node:
    """The expression under casts and parentheses: ``(size_t)(n)`` -> ``n``."""
    while True:
        if node.type == "parenthesized_expression" and node.named_child_count == 1:
            node = node.named_children[0]
        elif node.type == "cast_expression" and node.child_by_field_name("value") is not None:
            node = node.child_by_field_name("value") or node
        else:
            return node


def _builtin(node: Node, obj: str) -> bool:
    """Whether ``node`` is ``<obj>.x`` (under casts)."""
    node = strip(node)
    arg, field = node.child_by_field_name("argument"), node.child_by_field_name("field")
    return (
        node.type == "field_expression"
        and arg is not None
        and field is not None
        and _cuda.text(arg) == obj
        and _cuda.text(field) == "x"
    )


def _binary(node: Node, op: str) -> tuple[Node, Node] | None:
    node = strip(node)
    left, right, oper = (node.child_by_field_name(f) for f in ("left", "right", "operator"))
    if node.type != "binary_expression" or left is None or right is None or oper is None:
        return None
    return (left, right) if _cuda.text(oper) == op else None


def _product_of(node: Node, a: str, b: str) -> bool:
    sides = _binary(node, "*")
    return sides is not None and (
        (_builtin(sides[0], a) and _builtin(sides[1], b)) or (_builtin(sides[0], b) and _builtin(sides[1], a))
    )


def _is_index(node: Node) -> bool:
    """``blockIdx.x * blockDim.x + threadIdx.x`` in any operand order, casts allowed."""
    sides = _binary(node, "+")
    return sides is not None and any(
        _product_of(p, "blockIdx", "blockDim") and _builtin(t, "threadIdx") for p, t in (sides, sides[::-1])
    )


def _is_stride(node: Node) -> bool:
    return _product_of(node, "gridDim", "blockDim")


def _declared(node: Node) -> tuple[str, str, Node] | None:
    """(type, name, initialiser) of ``[const] <integer type> name = value;``."""
    if node.type != "declaration":
        return None
    declarators = node.children_by_field_name("declarator")
    if len(declarators) != 1 or declarators[0].type != "init_declarator":
        return None
    ident = declarators[0].child_by_field_name("declarator")
    value = declarators[0].child_by_field_name("value")
    typ = _cuda.element_type(node)
    if ident is None or ident.type != "identifier" or value is None or typ not in INTEGER_TYPES:
        return None
    return typ, _cuda.text(ident), value


def statements(block: Node) -> list[Node]:
    return [c for c in block.named_children if c.type != "comment"]


def params(fn: Node, kname: str) -> tuple[list[Pointer], dict[str, tuple[int, str]]] | str:
    """(pointer parameters, scalars by name -> (position, type)) or why not."""
    decl = _cuda.function_declarator(fn)
    plist = decl.child_by_field_name("parameters") if decl is not None else None
    pointers: list[Pointer] = []
    scalars: dict[str, tuple[int, str]] = {}
    for pos, p in enumerate(c for c in (plist.named_children if plist else []) if c.type != "comment"):
        declarator = p.child_by_field_name("declarator")
        typ = _cuda.element_type(p)
        where = f"parameter {pos + 1} of {kname} ('{_cuda.text(p)}', line {_cuda.line_of(p)})"
        if p.type != "parameter_declaration" or declarator is None:
            return f"{where} is not a plain declaration"
        if declarator.type == "identifier":
            scalars[_cuda.text(declarator)] = (pos, typ)
            continue
        inner = declarator.child_by_field_name("declarator")
        if declarator.type != "pointer_declarator" or inner is None or inner.type != "identifier":
            return f"{where} is neither a scalar nor a single-level pointer"
        quals = {_cuda.text(c) for c in declarator.children if c.type == "type_qualifier"}
        outer = {_cuda.text(c) for c in p.children if c.type == "type_qualifier"}
        if "volatile" in quals | outer:
            return f"{where} is volatile (its accesses must not be merged)"
        const = "const" in outer
        restrict = bool(quals & {"__restrict__", "__restrict", "restrict"})
        pointers.append(Pointer(_cuda.text(inner), const, restrict, element(typ), where, typ))
    if not pointers:
        return f"{kname} has no pointer parameters to vectorise"
    return pointers, scalars


def _bound(cond: Node, index: str, scalars: dict[str, tuple[int, str]]) -> tuple[Node | None, str]:
    """(the bound of ``i < n`` / ``n > i``: an integer parameter or an invariant expression of them,
    casts allowed; else None and why)."""
    for op, (mine, other) in (("<", (0, 1)), (">", (1, 0))):
        sides = _binary(cond, op)
        if sides is None:
            continue
        var, limit = strip(sides[mine]), strip(sides[other])
        name = _cuda.text(limit)
        if var.type != "identifier" or _cuda.text(var) != index:
            continue
        if limit.type != "identifier" or name not in scalars:
            why = _invariant(sides[other], scalars)
            if why is not None:
                return None, f"its bound '{one_line(limit)}' {why}"
            return sides[other], ""
        if scalars[name][1] not in INTEGER_TYPES:
            return None, f"its bound {name} is a {scalars[name][1]}, not an integer"
        return limit, ""
    return None, f"it is not '{index} < n'"


_BOUND_OPERATORS = frozenset({"+", "-", "*", "/", "<<", ">>"})


def _invariant(node: Node, scalars: dict[str, tuple[int, str]]) -> str | None:
    """Why ``node`` is not an integer expression of scalar parameters and literals (loop-invariant:
    the kernel cannot change its parameters' values for other threads), or None when it is."""
    kind = node.type
    if kind == "identifier":
        name = _cuda.text(node)
        if name not in scalars:
            return f"reads {name}, which is not a scalar parameter"
        return None if scalars[name][1] in INTEGER_TYPES else f"reads {name}, a {scalars[name][1]}"
    if kind == "number_literal":
        return (
            None
            if _cuda.evaluate(_cuda.text(node), {}) is not None
            else f"has the literal {_cuda.text(node)}"
        )
    if kind == "parenthesized_expression" and node.named_child_count == 1:
        return _invariant(node.named_children[0], scalars)
    if kind == "cast_expression":
        typ, value = node.child_by_field_name("type"), node.child_by_field_name("value")
        if typ is None or value is None or " ".join(_cuda.text(typ).split()) not in INTEGER_TYPES:
            return f"casts to {_cuda.text(typ) if typ is not None else '?'}, not an integer type"
        return _invariant(value, scalars)
    if kind == "binary_expression":
        op = _cuda.text(node.child_by_field_name("operator") or node)
        if op not in _BOUND_OPERATORS:
            return f"uses '{op}'"
        return next(
            (
                why
                for side in ("left", "right")
                if (why := _invariant(node.child_by_field_name(side) or node, scalars))
            ),
            None,
        )
    return f"is not an integer expression of scalar parameters ('{one_line(node)}')"


def assigned_scalars(fn: Node, names: set[str]) -> list[str]:
    """Which of ``names`` the kernel assigns (then a bound of them is not loop-invariant)."""
    out = []
    for node in _cuda.walk(fn):
        if node.type in ("assignment_expression", "update_expression"):
            target = node.child_by_field_name("left" if node.type == "assignment_expression" else "argument")
            if target is not None and _cuda.text(strip(target)) in names:
                out.append(_cuda.text(strip(target)))
    return out


def _expected(kname: str) -> str:
    return (
        f"{kname}'s body is not 'i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) ...' nor a "
        "grid-stride loop 'for (i = <that>; i < n; i += gridDim.x * blockDim.x) ...'"
    )


def _guarded(
    last: Node, kname: str, scalars: dict[str, tuple[int, str]], strides: set[str], indices: dict[str, str]
) -> Shape | str:
    """``if (i < n) <body>`` after the one declaration of ``i``."""
    cond = last.child_by_field_name("condition")
    body = last.child_by_field_name("consequence")
    value = cond.child_by_field_name("value") if cond is not None else None
    where = f"{_expected(kname)}: the if at line {_cuda.line_of(last)}"
    if len(indices) != 1 or strides:
        return f"{where} must follow exactly one index declaration and nothing else"
    index = next(iter(indices))
    if last.child_by_field_name("alternative") is not None:
        return f"{where} has an else branch"
    bound, why = _bound(value, index, scalars) if value is not None else (None, "no condition")
    if bound is None or body is None:
        return f"{where} tests '{one_line(value or last)}': {why}"
    return _shape("guarded", index, bound, body, set(indices), indices[index])


def _shape(form: str, index: str, bound: Node, body: Node, dropped: set[str], index_type: str) -> Shape:
    # a lane that reads the index as a value re-declares it with the original type (not const: gone)
    typ = " ".join(t for t in index_type.split() if t != "const")
    return Shape(form, index, _cuda.text(bound), body, dropped, typ, bound)


def _steps_by_stride(update: Node | None, index: str, strides: set[str]) -> bool:
    """Whether ``update`` is ``index += gridDim.x * blockDim.x`` (or a variable holding it)."""
    if update is None or update.type != "assignment_expression":
        return False
    step, target, op = (update.child_by_field_name(f) for f in ("right", "left", "operator"))
    if step is None or target is None or op is None:
        return False
    if _cuda.text(target) != index or _cuda.text(op) != "+=":
        return False
    return _is_stride(step) or (strip(step).type == "identifier" and _cuda.text(strip(step)) in strides)


def _grid_stride(
    last: Node, kname: str, scalars: dict[str, tuple[int, str]], strides: set[str], indices: dict[str, str]
) -> Shape | str:
    """``for (<T> i = <index>; i < n; i += <stride>) <body>``."""
    where = f"{_expected(kname)}: the for loop at line {_cuda.line_of(last)}"
    init, cond, update, body = (
        last.child_by_field_name(f) for f in ("initializer", "condition", "update", "body")
    )
    decl = _declared(init) if init is not None else None
    if decl is None or not (
        _is_index(decl[2]) or (strip(decl[2]).type == "identifier" and _cuda.text(strip(decl[2])) in indices)
    ):
        return f"{where} does not declare its variable as blockIdx.x * blockDim.x + threadIdx.x"
    index = decl[1]
    bound, why = _bound(cond, index, scalars) if cond is not None else (None, "no condition")
    if bound is None:
        return f"{where} tests '{one_line(cond or last)}': {why}"
    if not _steps_by_stride(update, index, strides):
        return f"{where} steps by '{one_line(update or last)}', not '{index} += gridDim.x * blockDim.x'"
    if body is None:
        return f"{where} has no body"
    return _shape("grid-stride loop", index, bound, body, strides | set(indices), decl[0])


def shape(fn: Node, kname: str, scalars: dict[str, tuple[int, str]]) -> Shape | str:
    """The per-element body and how it is reached, or which part does not match."""
    block = fn.child_by_field_name("body")
    if block is None:
        return f"{kname} has no body"
    stmts = statements(block)
    strides: set[str] = set()
    indices: dict[str, str] = {}
    for stmt in stmts[:-1]:
        decl = _declared(stmt)
        if decl is not None and _is_stride(decl[2]):
            strides.add(decl[1])
        elif decl is not None and _is_index(decl[2]):
            indices[decl[1]] = decl[0]
        else:
            return (
                f"{_expected(kname)}: unexpected statement at line {_cuda.line_of(stmt)}: '{one_line(stmt)}'"
            )
    if not stmts:
        return f"{kname} has an empty body"
    last = stmts[-1]
    if last.type == "if_statement":
        return _guarded(last, kname, scalars, strides, indices)
    if last.type == "for_statement":
        return _grid_stride(last, kname, scalars, strides, indices)
    return f"{_expected(kname)}: the last statement (line {_cuda.line_of(last)}) is a {last.type.replace('_', ' ')}"


def one_line(node: Node) -> str:
    flat = " ".join(_cuda.text(node).split())
    return flat if len(flat) <= 80 else flat[:77] + "..."
