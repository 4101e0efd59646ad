"""Integer index expressions as polynomials, so two subscripts can be proven to differ by a plane.

A subscript such as ``in[(i + 1) * N * N + j * N + k]`` is, read as a polynomial over the integers, the
subscript ``in[i * N * N + j * N + k]`` with ``i`` replaced by ``i + 1``. ``poly`` expands ``+``, ``-``,
``*``, unary minus, parentheses and casts (a cast keeps the value of an in-range index) into a sum of
monomials; names bound in ``env`` (a variable declared once and never assigned) expand to their value,
other names and anything that is not a product of sums (``blockDim.x``, ``N / 2``) are atoms, and a
subexpression of that kind that mentions a name of ``varying`` makes the whole index unknown (None).
Equal polynomials are equal indices for every value of the names, so the comparison is a proof, not a
sample.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda

Monomial = tuple[str, ...]
"""Sorted atom names (repeated for powers); () is the constant term."""
Poly = dict[Monomial, int]


def constant(value: int) -> Poly:
    return {(): value} if value else {}


def add(a: Poly, b: Poly, sign: int = 1) -> Poly:
    out = dict(a)
    for m, c in b.items():
        out[m] = out.get(m, 0) + sign * c
        if out[m] == 0:
            del out[m]
    return out


def mul(a: Poly, b: Poly) -> Poly:
    out: Poly = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            m = tuple(sorted(ma + mb))
            out[m] = out.get(m, 0) + ca * cb
            if out[m] == 0:
                del out[m]
    return out


def _literal(text: str) -> int | None:
    m = re.fullmatch(r"(0[xX][0-9a-fA-F]+|\d+)[uUlL]*", text)
    return int(m.group(1), 0) if m else None


def poly(node: Node, env: Mapping[str, Poly], varying: frozenset[str]) -> Poly | None:
    """``node`` as a polynomial (see the module docstring), or None when it cannot be proven one."""
    node = _cuda.strip(node)
    kind = node.type
    if kind == "number_literal":
        value = _literal(_cuda.text(node))
        return None if value is None else constant(value)
    if kind == "identifier":
        name = _cuda.text(node)
        return env.get(name, {(name,): 1})
    if kind == "cast_expression":
        operand = node.child_by_field_name("value")
        return None if operand is None else poly(operand, env, varying)
    if kind == "unary_expression":
        arg, op = node.child_by_field_name("argument"), node.child_by_field_name("operator")
        inner = None if arg is None else poly(arg, env, varying)
        if inner is None or op is None or _cuda.text(op) not in "+-":
            return None
        return inner if _cuda.text(op) == "+" else add({}, inner, -1)
    if kind == "binary_expression":
        left, right, op = (node.child_by_field_name(f) for f in ("left", "right", "operator"))
        if left is not None and right is not None and op is not None and _cuda.text(op) in ("+", "-", "*"):
            a, b = poly(left, env, varying), poly(right, env, varying)
            if a is None or b is None:
                return None
            return mul(a, b) if _cuda.text(op) == "*" else add(a, b, 1 if _cuda.text(op) == "+" else -1)
    # anything else is an atom, provided it does not move with the varying names
    if _cuda.identifiers_in(node) & varying or any(n.type == "call_expression" for n in _cuda.walk(node)):
        return None
    return {(re.sub(r"\s+", "", _cuda.text(node)),): 1}


def linear_in(p: Poly, var: str) -> tuple[Poly, Poly] | None:
    """(alpha, beta) with ``p = alpha * var + beta`` and neither mentioning ``var``; None if not linear."""
    alpha: Poly = {}
    beta: Poly = {}
    for m, c in p.items():
        n = m.count(var)
        if n > 1:
            return None
        if n == 1:
            rest = list(m)
            rest.remove(var)
            alpha[tuple(rest)] = c
        else:
            beta[m] = c
    return alpha, beta


def offset(alpha: Poly, base: Poly, other: Poly) -> int | None:
    """The whole ``d`` with ``other == base + d * alpha`` (the same index ``d`` planes on), or None."""
    diff = add(other, base, -1)
    if not diff:
        return 0
    if not alpha:
        return None
    m, c = next(iter(alpha.items()))
    d, rem = divmod(diff.get(m, 0), c)
    if rem or d == 0:
        return None
    return d if add(diff, {k: v * d for k, v in alpha.items()}, -1) == {} else None
