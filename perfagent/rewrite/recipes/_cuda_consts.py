"""Named integer constants of a CUDA source (``#define``, ``constexpr``/``const`` ints, template defaults) and
the evaluation of C constant expressions over them."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass

from tree_sitter import Node, Tree

from perfagent.rewrite.recipes._tree import text, walk
from perfagent.workloads.python_ast import parse_expression

_INT_SUFFIX = re.compile(r"(?<=[0-9a-fA-FxX])(?:[uU][lL]{0,2}|[lL]{1,2}[uU]?)\b")
_COMMENT = re.compile(r"//.*$|/\*.*?\*/", re.S)


@dataclass(frozen=True)
class Constant:
    """A named compile-time integer: ``#define``, ``constexpr``/``const`` int or template default."""

    name: str
    kind: str
    """'macro', 'constexpr' or 'template'."""
    expr: str
    """Its value as written."""
    value_node: Node
    """The node whose bytes hold the value (preproc_arg, initializer or default)."""
    value_start: int
    """Byte range of the value text (for macros: without a trailing comment or whitespace)."""
    value_end: int
    guarded: bool
    """A macro inside ``#ifndef NAME`` (the build may override it with -DNAME=...)."""


def constants(tree: Tree) -> dict[str, Constant]:
    """Every named integer-looking constant of the file (first definition wins)."""
    found: dict[str, Constant] = {}
    for node in walk(tree.root_node):
        const: Constant | None = None
        if node.type == "preproc_def":
            name = node.child_by_field_name("name")
            value = node.child_by_field_name("value")
            if name is not None and value is not None:
                raw = text(value)
                stripped = _COMMENT.sub("", raw).rstrip()
                lead = len(raw) - len(raw.lstrip())
                start = value.start_byte + len(raw[:lead].encode())
                end = value.start_byte + len(stripped.encode())
                if stripped.strip():
                    const = Constant(
                        name=text(name),
                        kind="macro",
                        expr=stripped.strip(),
                        value_node=value,
                        value_start=start,
                        value_end=end,
                        guarded=_guarded(node, text(name)),
                    )
        elif node.type == "declaration" and _is_const_int(node):
            for child in node.named_children:
                if child.type == "init_declarator":
                    ident = child.child_by_field_name("declarator")
                    value = child.child_by_field_name("value")
                    if ident is not None and ident.type == "identifier" and value is not None:
                        const = Constant(
                            text(ident),
                            "constexpr",
                            text(value),
                            value,
                            value.start_byte,
                            value.end_byte,
                            False,
                        )
                        found.setdefault(const.name, const)
            const = None
        elif (
            node.type == "optional_parameter_declaration"
            and node.parent is not None
            and node.parent.type == "template_parameter_list"
        ):
            ident = node.child_by_field_name("declarator")
            value = node.child_by_field_name("default_value")
            if ident is not None and value is not None:
                const = Constant(
                    text(ident), "template", text(value), value, value.start_byte, value.end_byte, False
                )
        if const is not None:
            found.setdefault(const.name, const)
    return found


def int_constants(consts: Mapping[str, Constant]) -> dict[str, int]:
    """The constants of ``constants(tree)`` that evaluate to an integer, by value."""
    out: dict[str, int] = {}
    for name, const in consts.items():
        value = evaluate(const.expr, consts)
        if value is not None:
            out[name] = value
    return out


def _guarded(define: Node, name: str) -> bool:
    parent = define.parent
    return (
        parent is not None
        and parent.type == "preproc_ifdef"
        and text(parent).startswith("#ifndef")
        and any(c.type == "identifier" and text(c) == name for c in parent.children[:3])
    )


_INT_TYPES = {
    "int",
    "unsigned",
    "unsigned int",
    "long",
    "size_t",
    "int32_t",
    "uint32_t",
    "int64_t",
    "short",
    "long long",
}


def _is_const_int(decl: Node) -> bool:
    quals = {text(c) for c in decl.children if c.type == "type_qualifier"}
    if not quals & {"constexpr", "const"}:
        return False
    typ = decl.child_by_field_name("type")
    return typ is not None and " ".join(text(typ).split()) in _INT_TYPES


def evaluate(expr: str, env: Mapping[str, Constant | int], _depth: int = 0) -> int | None:
    """The integer value of a C constant expression over ``env`` (None when not constant)."""
    if _depth > 20:
        return None
    cleaned = _INT_SUFFIX.sub("", _COMMENT.sub("", expr)).strip()
    if not cleaned:
        return None
    try:
        tree = parse_expression(cleaned.replace("/", "//"))
    except SyntaxError:
        return None
    return _eval_node(tree.body, env, _depth)


def _eval_node(node: ast.expr, env: Mapping[str, Constant | int], depth: int) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        bound = env.get(node.id)
        if bound is None:
            return None
        return bound if isinstance(bound, int) else evaluate(bound.expr, env, depth + 1)
    if isinstance(node, ast.UnaryOp):
        v = _eval_node(node.operand, env, depth)
        if v is None:
            return None
        if isinstance(node.op, ast.USub):
            return -v
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.Invert):
            return ~v
        return None
    if isinstance(node, ast.BinOp):
        a = _eval_node(node.left, env, depth)
        b = _eval_node(node.right, env, depth)
        if a is None or b is None:
            return None
        return _binop(node.op, a, b)
    return None


def _binop(op: ast.operator, a: int, b: int) -> int | None:
    if isinstance(op, ast.Add):
        return a + b
    if isinstance(op, ast.Sub):
        return a - b
    if isinstance(op, ast.Mult):
        return a * b
    if isinstance(op, ast.FloorDiv):
        return None if b == 0 else _c_div(a, b)
    if isinstance(op, ast.Mod):
        return None if b == 0 else a - b * _c_div(a, b)
    if isinstance(op, ast.LShift):
        return a << b if 0 <= b < 64 else None
    if isinstance(op, ast.RShift):
        return a >> b if 0 <= b < 64 else None
    if isinstance(op, ast.BitAnd):
        return a & b
    if isinstance(op, ast.BitOr):
        return a | b
    if isinstance(op, ast.BitXor):
        return a ^ b
    return None


def _c_div(a: int, b: int) -> int:
    """C integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q
