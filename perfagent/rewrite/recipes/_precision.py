"""Which ``double`` in a kernel is the data's own and which is a promotion (CUDA C++ Best Practices Guide,
"Promotions to Doubles and Truncation to Ints").

A kernel whose global data (pointer parameters, ``__device__`` helpers' pointer parameters) is float,
half, bfloat16 or integer computes in fp64 only by accident: an unsuffixed literal (``0.5``), a double
math call (``tanh``, ``pow(v, 3.0)``) or a ``(double)`` cast promotes each element, and the fp64 pipe
(1/64 of the fp32 rate on consumer parts, 1/2 on H100) becomes the bound. ``promotions`` finds those sites
on the tree-sitter tree, or says, with the line, why the kernel's fp64 is genuine (double data, a double
scalar the launch passes). The planner asks the same question of an "at its bound on the fp64 pipe"
finding (``perfagent.optimize.promoted_bound``); the ``demote-double`` recipe rewrites the sites.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tree_sitter import Node, Tree

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._variant import at
from perfagent.workloads.cuda_math_names import DOUBLE_MATH_FUNCTIONS

DOUBLE_TO_FLOAT = {name: f"{name}f" for name in DOUBLE_MATH_FUNCTIONS}
"""Double-precision math functions -> their single-precision names (CUDA Math API)."""
_FLOAT_LITERAL = re.compile(r"^[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?$")


@dataclass
class Sites:
    """The promotion sites of the kernel and the helpers it calls (tree nodes of the original source)."""

    functions: list[Node] = field(default_factory=list)
    literals: list[Node] = field(default_factory=list)
    calls: list[Node] = field(default_factory=list)
    """Identifiers of double math calls (``tanh`` in ``tanh(x)``)."""
    types: list[Node] = field(default_factory=list)
    """``double`` type names of locals, casts and helper signatures."""
    defines: list[Node] = field(default_factory=list)
    """``preproc_arg`` of ``#define NAME <double literal>`` used by the device code."""

    def count(self) -> int:
        return len(self.literals) + len(self.calls) + len(self.types) + len(self.defines)


def is_double_literal(node: Node) -> bool:
    """An unsuffixed floating literal (``0.5``, ``1e-5``, ``3.``): C++ types it ``double``."""
    text = _cuda.text(node)
    return (
        node.type == "number_literal"
        and ("." in text or "e" in text.lower())
        and bool(_FLOAT_LITERAL.match(text))
    )


def promotes(literal: Node) -> bool:
    """Whether a double literal drags its neighbours into fp64: an operand of arithmetic, a comparison or
    a conditional, ``x += 0.5``, or an argument of a double math call. ``float x = 0.5;`` and
    ``__float2half(0.5)`` are conversions of a constant, not promotions."""
    parent = literal.parent
    while parent is not None and parent.type in ("parenthesized_expression", "unary_expression"):
        parent = parent.parent
    if parent is None:
        return False
    if parent.type in ("binary_expression", "conditional_expression"):
        return True
    if parent.type == "assignment_expression":
        return _cuda.text(parent.child_by_field_name("operator") or parent) != "="
    if parent.type == "argument_list" and parent.parent is not None:
        callee = parent.parent.child_by_field_name("function")
        return callee is not None and _cuda.text(callee) in DOUBLE_TO_FLOAT
    return False


def called_helpers(tree: Tree, kernel: Node) -> list[Node]:
    """The ``__device__`` functions of the file that ``kernel`` calls, directly or through each other."""
    helpers = {
        name: fn
        for fn in _cuda.functions(tree)
        if _cuda.has_qualifier(fn, "__device__")
        and not _cuda.is_kernel(fn)
        and (name := _cuda.function_name(fn))
    }
    found: dict[str, Node] = {}
    todo = [kernel]
    while todo:
        for node in _cuda.walk(todo.pop()):
            callee = node.child_by_field_name("function") if node.type == "call_expression" else None
            name = _cuda.text(callee) if callee is not None else ""
            if name in helpers and name not in found:
                found[name] = helpers[name]
                todo.append(helpers[name])
    return list(found.values())


def _is_double(decl: Node) -> bool:
    typ = decl.child_by_field_name("type")
    return typ is not None and _cuda.text(typ) in ("double", "double2", "long double")


def genuine_double(kernel: Node, helpers: list[Node]) -> str | None:
    """Why the fp64 of ``kernel`` is the data's own (with the line), or None when it holds no double data."""
    for fn in [kernel, *helpers]:
        decl = _cuda.function_declarator(fn)
        params = decl.child_by_field_name("parameters") if decl is not None else None
        for p in params.named_children if params is not None else []:
            if p.type != "parameter_declaration" or not _is_double(p):
                continue
            pointer = any(n.type in ("pointer_declarator", "array_declarator") for n in _cuda.walk(p))
            if pointer:
                return at(p, f"'{_cuda.text(p)}' is double data: its fp64 math is the data's own")
            if fn.id == kernel.id:
                return at(
                    p,
                    f"kernel parameter '{_cuda.text(p)}' is a double the launch passes: its type is the caller's",
                )
    return None


def _double_types(fn: Node, kernel: Node) -> list[Node]:
    """``double`` type names in ``fn`` (a kernel's own parameter list excluded: the launch passes it)."""
    skip = _cuda.function_declarator(kernel) if fn.id == kernel.id else None
    out = []
    for node in _cuda.walk(fn):
        if node.type == "primitive_type" and _cuda.text(node) == "double":
            if skip is not None and skip.start_byte <= node.start_byte < skip.end_byte:
                continue
            out.append(node)
    return out


def _double_defines(tree: Tree, functions: list[Node]) -> list[Node]:
    """``#define NAME 0.79788`` whose NAME the device code uses and no other function does."""
    used_on_device = set().union(*(_cuda.identifiers_in(fn) for fn in functions)) if functions else set()
    ids = {fn.id for fn in functions}
    used_elsewhere = set().union(
        *(_cuda.identifiers_in(fn) for fn in _cuda.functions(tree) if fn.id not in ids)
    )
    out = []
    for node in _cuda.walk(tree.root_node):
        if node.type != "preproc_def":
            continue
        name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
        if name is None or value is None:
            continue
        literal = _cuda.text(value).strip()
        if _FLOAT_LITERAL.match(literal) and ("." in literal or "e" in literal.lower()):
            if _cuda.text(name) in used_on_device and _cuda.text(name) not in used_elsewhere:
                out.append(value)
    return out


def promotions(tree: Tree, kernel: Node) -> Sites | str:
    """The promotion sites of ``kernel`` and its helpers, or why its fp64 is genuine (or absent)."""
    helpers = called_helpers(tree, kernel)
    why = genuine_double(kernel, helpers)
    if why is not None:
        return why
    sites = Sites(functions=[kernel, *helpers])
    for fn in sites.functions:
        body = fn.child_by_field_name("body")
        for node in _cuda.walk(body) if body is not None else ():
            if is_double_literal(node) and promotes(node):
                sites.literals.append(node)
            elif node.type == "call_expression":
                callee = node.child_by_field_name("function")
                if (
                    callee is not None
                    and callee.type == "identifier"
                    and _cuda.text(callee) in DOUBLE_TO_FLOAT
                ):
                    sites.calls.append(callee)
        sites.types += _double_types(fn, kernel)
    sites.defines = _double_defines(tree, sites.functions)
    if not sites.count():
        return (
            "no double literal, double math call (tanh, exp, pow, ...), double local or (double) cast in "
            "the kernel and the device functions it calls: nothing promotes to fp64"
        )
    return sites
