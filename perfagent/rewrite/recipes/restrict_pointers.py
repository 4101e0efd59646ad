"""Recipe ``restrict-pointers``: add ``__restrict__`` to the pointer parameters of ``__global__`` functions.

Precondition (tree-sitter-cuda parse tree): a ``__global__`` function with single-level pointer
parameters lacking ``__restrict__``, and no launch of it in the source that passes the same buffer
(the same base identifier) to two pointer parameters of which at least one is written in the kernel.
When the source holds no launch of the kernel the aliasing check cannot be made: the candidate says
so in its notes (a verifier with distinct buffers cannot catch an in-place caller).

Pointer parameters the kernel never writes through, never passes on and never copies are also made
``const`` (pointee), enabling the read-only data path, but only in ``extern "C"`` kernels, whose symbol
name does not encode parameter types. ``__restrict__`` itself is a top-level qualifier and changes
neither the kernel's type nor its mangled name.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node, Tree

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes.framework import CudaRecipe, Edit, Source, Variant, collect, register

NAME = "restrict-pointers"
RESTRICT = frozenset({"__restrict__", "__restrict", "restrict"})
_WRITE_OPS = frozenset({"assignment_expression", "update_expression"})
_CASTS = frozenset({"reinterpret_cast", "static_cast", "const_cast"})


@dataclass(frozen=True)
class _Param:
    name: str
    index: int
    decl: Node
    star: Node
    restricted: bool
    const: bool
    written: bool
    escapes: bool


@dataclass(frozen=True)
class _Plan:
    kernel: str
    params: list[_Param]
    add_restrict: list[_Param]
    add_const: list[_Param]
    launches: int


def _pointer_params(fn: Node) -> list[tuple[int, Node, Node, Node]]:
    """(index, parameter_declaration, pointer_declarator, identifier) of single-level pointer params."""
    decl = _cuda.function_declarator(fn)
    params = decl.child_by_field_name("parameters") if decl is not None else None
    out: list[tuple[int, Node, Node, Node]] = []
    if params is None:
        return out
    for index, p in enumerate(c for c in params.named_children if c.type == "parameter_declaration"):
        ptr = p.child_by_field_name("declarator")
        if ptr is None or ptr.type != "pointer_declarator":
            continue
        inner = ptr.child_by_field_name("declarator")
        if inner is None or inner.type != "identifier":
            continue  # T **p, T *const *p, arrays of pointers: left alone
        out.append((index, p, ptr, inner))
    return out


def _root_identifier(node: Node) -> str | None:
    """The variable an lvalue is rooted at: p[i], *p, *(p + i), p->x -> 'p'."""
    current: Node | None = node
    while current is not None:
        if current.type == "identifier":
            return _cuda.text(current)
        if current.type in ("subscript_expression", "field_expression"):
            current = current.child_by_field_name("argument")
        elif current.type == "pointer_expression":
            current = current.child_by_field_name("argument")
        elif current.type == "parenthesized_expression":
            current = current.named_children[0] if current.named_children else None
        elif current.type == "binary_expression":
            current = current.child_by_field_name("left")
        elif current.type == "cast_expression":
            current = current.child_by_field_name("value")
        else:
            return None
    return None


def _pointer_valued(expr: Node, name: str) -> bool:
    """Whether ``expr`` evaluates to the pointer ``name`` itself (or an address derived from it)."""
    kind = expr.type
    if kind == "identifier":
        return _cuda.text(expr) == name
    if kind == "parenthesized_expression":
        return any(_pointer_valued(c, name) for c in expr.named_children)
    if kind == "binary_expression" and _cuda.text(expr.child_by_field_name("operator") or expr) in ("+", "-"):
        sides = (expr.child_by_field_name("left"), expr.child_by_field_name("right"))
        return any(_pointer_valued(c, name) for c in sides if c is not None)
    if kind == "cast_expression":
        value = expr.child_by_field_name("value")
        return value is not None and _pointer_valued(value, name)
    if kind == "pointer_expression":
        op = expr.child_by_field_name("operator")
        arg = expr.child_by_field_name("argument")
        return op is not None and _cuda.text(op) == "&" and arg is not None and _root_identifier(arg) == name
    if kind == "call_expression":
        fn = _cuda.text(expr.child_by_field_name("function") or expr)
        if fn.split("<")[0].strip() in _CASTS:
            return any(_pointer_valued(a, name) for a in _cuda.call_args(expr))
    if kind == "conditional_expression":
        return any(_pointer_valued(c, name) for c in expr.named_children[1:])
    return False


def _usage(body: Node, name: str) -> tuple[bool, bool]:
    """(written through, escapes) for pointer parameter ``name`` in a kernel body.

    Escapes: the pointer is copied into another variable or passed to a function other than an
    atomic (which counts as a write) or ``__ldg``; the kernel may then write through the copy.
    """
    written = escapes = False
    for node in _cuda.walk(body):
        if node.type in _WRITE_OPS:
            field = "left" if node.type == "assignment_expression" else "argument"
            target = node.child_by_field_name(field)
            if target is not None and target.type != "identifier" and _root_identifier(target) == name:
                written = True
            right = node.child_by_field_name("right") if node.type == "assignment_expression" else None
            self_update = target is not None and _cuda.text(target) == name
            if right is not None and _pointer_valued(right, name) and not self_update:
                escapes = True
        elif node.type == "call_expression":
            callee = _cuda.text(node.child_by_field_name("function") or node.children[0])
            if callee.split("<")[0].strip() in _CASTS:
                continue
            if any(_pointer_valued(arg, name) for arg in _cuda.call_args(node)):
                if callee.startswith("atomic"):
                    written = True
                elif callee != "__ldg":
                    escapes = True
        elif node.type == "init_declarator":
            value = node.child_by_field_name("value")
            if value is not None and _pointer_valued(value, name):
                escapes = True
    return written, escapes


def _plan(tree: Tree, fn: Node) -> _Plan | str:
    kname = _cuda.function_name(fn) or "?"
    body = fn.child_by_field_name("body")
    if body is None:
        return f"{kname} has no body"
    params: list[_Param] = []
    for index, p, ptr, ident in _pointer_params(fn):
        quals = {_cuda.text(c) for c in ptr.children if c.type == "type_qualifier"}
        const = any(c.type == "type_qualifier" and _cuda.text(c) == "const" for c in p.children)
        star = next(c for c in ptr.children if c.type == "*")
        written, escapes = _usage(body, _cuda.text(ident))
        params.append(
            _Param(_cuda.text(ident), index, p, star, bool(quals & RESTRICT), const, written, escapes)
        )
    if not params:
        return f"{kname} has no pointer parameters"
    missing = [p for p in params if not p.restricted]
    if not missing:
        return f"every pointer parameter of {kname} is already __restrict__"
    launches = [c for c in _cuda.launch_sites(tree) if _cuda.launched_name(c) == kname]
    for call in launches:
        args = _cuda.call_args(call)
        for i, a in enumerate(params):
            for b in params[i + 1 :]:
                risky = a.written or a.escapes or b.written or b.escapes
                if a.index >= len(args) or b.index >= len(args) or not risky:
                    continue
                ra, rb = _root_identifier(args[a.index]), _root_identifier(args[b.index])
                if ra is not None and ra == rb:
                    return (
                        f"the launch of {kname} at line {_cuda.line_of(call)} passes '{ra}' to both '{a.name}' and "
                        f"'{b.name}' (at least one written or passed on): "
                        "__restrict__ would be undefined behaviour"
                    )
    add_const = [
        p for p in missing if not p.const and not p.written and not p.escapes and _cuda.is_extern_c(fn)
    ]
    return _Plan(kname, params, missing, add_const, len(launches))


_Found = tuple[list[_Plan], list[str]]


class _RestrictPointers(CudaRecipe[_Found]):
    name = NAME
    transforms = ("restrict-pointers",)
    summary = 'add __restrict__ to kernel pointer parameters (const on read-only ones in extern "C" kernels) unless a visible launch aliases them'
    wrong_language = (
        "restrict-pointers applies to CUDA kernels only (Triton pointers carry no aliasing qualifiers)"
    )

    def match(self, src: Source) -> _Found | str:
        request, tree = src.request, src.tree
        fns = _cuda.kernels(tree, request.kernel)
        if not fns:
            return (
                f"no __global__ function{' named ' + request.kernel if request.kernel else ''} in the source"
            )
        return collect(_plan(tree, fn) for fn in fns)

    def plan(self, src: Source, m: _Found) -> list[Variant]:
        """One variant qualifying every unqualified pointer parameter of every eligible kernel."""
        plans, reasons = m
        data = src.text.encode("utf-8")
        edits: list[Edit] = []
        for plan in plans:
            for p in plan.add_restrict:
                after = data[p.star.end_byte : p.star.end_byte + 1]
                text = " __restrict__" if after in (b" ", b"\t") else "__restrict__ "
                edits.append(Edit(p.star.end_byte, p.star.end_byte, text))
            for p in plan.add_const:
                typ = p.decl.child_by_field_name("type")
                if typ is not None:
                    edits.append(Edit(typ.start_byte, typ.start_byte, "const "))
        notes = [f"not changed: {r}" for r in reasons]
        parts = []
        for plan in plans:
            consts = (
                f"; const added to read-only {', '.join(p.name for p in plan.add_const)}"
                if plan.add_const
                else ""
            )
            parts.append(
                f"{plan.kernel}: __restrict__ on {', '.join(p.name for p in plan.add_restrict)}{consts}"
            )
            if plan.launches == 0:
                notes.append(
                    f"aliasing unchecked for {plan.kernel}: no launch of it in this source; the caller must never pass "
                    "overlapping buffers (e.g. an in-place call)"
                )
        return [
            Variant(
                edits=edits,
                description="Promise non-aliasing pointers so loads can be cached and reordered: "
                + "; ".join(parts)
                + ".",
                parameters={
                    "kernels": ",".join(p.kernel for p in plans),
                    "restrict": sum(len(p.add_restrict) for p in plans),
                    "const": sum(len(p.add_const) for p in plans),
                    "aliasing_checked_launches": sum(p.launches for p in plans),
                },
                notes=notes,
            )
        ]


RECIPE = register(_RestrictPointers())
applies, propose = RECIPE.applies, RECIPE.propose
