"""stencil-rows' guess of which read of row ``y + 1`` is which read of row ``y``: integer evaluation.

A thread that computes the cells of several rows keeps each read's (address, value) from the row before
and reuses the value when the address is the same, compared at run time (``stencil_rows``). Which earlier
read to compare with is only a guess made here, so it needs no proof: the index expressions (and the
integer locals they use) are evaluated on Python integers at a few interior sample points, with the
kernel's integer parameters set to distinct sizes, and read ``r`` of row ``y + 1`` is paired with the read
``q`` of row ``y`` whose address is the same at every sample point. A wrong or missing guess costs a load,
never a wrong value: the run-time comparison decides.

``value`` understands literals, names bound in the environment, parentheses, casts, ``+ - * / % << >> &
| ^``, comparisons, ``&& || !``, ``?:`` and ``min``/``max``/``abs`` calls (C's truncating division); any
other expression has no value (None).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._poly import _literal

Env = Mapping[str, int]


def _div(a: int, b: int) -> int | None:
    if b == 0:
        return None
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _rem(a: int, b: int) -> int | None:
    q = _div(a, b)
    return None if q is None else a - b * q


_BINARY: dict[str, Callable[[int, int], int | None]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": _div,
    "%": _rem,
    "<<": lambda a, b: a << b if 0 <= b < 64 else None,
    ">>": lambda a, b: a >> b if 0 <= b < 64 else None,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
    "<": lambda a, b: int(a < b),
    "<=": lambda a, b: int(a <= b),
    ">": lambda a, b: int(a > b),
    ">=": lambda a, b: int(a >= b),
    "==": lambda a, b: int(a == b),
    "!=": lambda a, b: int(a != b),
    "&&": lambda a, b: int(bool(a) and bool(b)),
    "||": lambda a, b: int(bool(a) or bool(b)),
}
_CALLS: dict[str, Callable[[list[int]], int]] = {
    "min": min,
    "max": max,
    "umin": min,
    "umax": max,
    "abs": lambda v: abs(v[0]),
}


def value(node: Node, env: Env) -> int | None:
    """``node``'s integer value in ``env`` (see the module docstring), or None."""
    node = _cuda.strip(node)
    kind = node.type
    if kind == "number_literal":
        return _literal(_cuda.text(node))
    if kind == "identifier":
        return env.get(_cuda.text(node))
    if kind == "binary_expression":
        op = node.child_by_field_name("operator")
        fn = _BINARY.get(_cuda.text(op)) if op is not None else None
        parts = [node.child_by_field_name(f) for f in ("left", "right")]
        args = [value(p, env) if p is not None else None for p in parts]
        if fn is None or args[0] is None or args[1] is None:
            return None
        return fn(args[0], args[1])
    if kind == "unary_expression":
        op, arg = node.child_by_field_name("operator"), node.child_by_field_name("argument")
        v = value(arg, env) if arg is not None else None
        if v is None or op is None:
            return None
        return {"-": -v, "+": v, "!": int(not v), "~": ~v}.get(_cuda.text(op))
    if kind == "conditional_expression":
        cond = node.child_by_field_name("condition")
        c = value(cond, env) if cond is not None else None
        branch = node.child_by_field_name("consequence" if c else "alternative")
        return None if c is None or branch is None else value(branch, env)
    if kind == "call_expression":
        return _call(node, env)
    return None


def _call(node: Node, env: Env) -> int | None:
    fn, args = node.child_by_field_name("function"), node.child_by_field_name("arguments")
    name = _cuda.text(fn).split("::")[-1] if fn is not None else ""
    if name not in _CALLS or args is None:
        return None
    vals = [value(a, env) for a in args.named_children if a.type != "comment"]
    if not vals or any(v is None for v in vals):
        return None
    return _CALLS[name]([v for v in vals if v is not None])


def bind_locals(scope: list[Node], env: dict[str, int], assigned: Callable[[str], bool]) -> None:
    """Add to ``env`` every integer local of ``scope`` declared once with a value it has at each sample
    (in source order; a name assigned after its declaration is left out)."""
    for stmt in scope:
        for _decl, name, init in _cuda.initialisations(stmt):
            if assigned(name):
                env.pop(name, None)
                continue
            v = value(init, env)
            if v is not None:
                env[name] = v
