"""vectorize-access: ``i / K`` and ``i % K`` of a per-channel index, divided once per group, not per lane.

A dequantiser or a broadcast over rows reads ``scale[i / K]``: copied into each of the 16 lanes of a
uint8 group, that is 16 (64-bit) divisions per thread where the textbook kernel does one. The group's
first element is divided once (``d = base / K``, ``m = base % K``) and every later lane steps the pair
(``++m == K`` rolls over to the next channel), which is exact for any ``K > 0`` however the group meets
a channel boundary (``K % 16 != 0``; ``K < 16``); the vector path also requires ``K > 0`` at run time
(a zero or negative divisor takes the scalar path, which divides as the original).
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._vector_shape import assigned_scalars, strip


@dataclass(frozen=True)
class Divisions:
    divisor: str
    """The one invariant divisor ``K`` (a scalar parameter the kernel never assigns)."""
    quotients: tuple[Node, ...]
    """The ``i / K`` expressions of the body."""
    remainders: tuple[Node, ...]
    """The ``i % K`` expressions of the body."""


def divisions(fn: Node, body: Node, index: str) -> Divisions | None:
    """The body's ``index / K`` and ``index % K`` for one scalar parameter ``K``, or None."""
    scalars = {name for name, _, pointer in _cuda.kernel_params(fn) if not pointer and name}
    found: dict[str, tuple[list[Node], list[Node]]] = {}
    for node in _cuda.walk(body):
        if node.type != "binary_expression":
            continue
        op = _cuda.text(node.child_by_field_name("operator") or node)
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op not in ("/", "%") or left is None or right is None or _cuda.text(strip(left)) != index:
            continue
        if left != strip(left) and left.type == "cast_expression":
            continue  # (int)i / K divides another type than the index: left alone
        k = strip(right)
        name = _cuda.text(k)
        if k.type != "identifier" or name not in scalars or assigned_scalars(fn, {name}):
            continue
        quot, rem = found.setdefault(name, ([], []))
        (quot if op == "/" else rem).append(node)
    if len(found) != 1:
        return None
    name, (quot, rem) = next(iter(found.items()))
    return Divisions(name, tuple(quot), tuple(rem))


def setup(div: Divisions, index_type: str, first: str) -> list[str]:
    """Declarations before the group's lanes (``first``: the group's first element)."""
    base = f"(({index_type})({first}))"
    return [
        f"auto perfagent_div = {base} / ({div.divisor});  // one division per group, stepped per lane",
        f"auto perfagent_mod = {base} % ({div.divisor});",
    ]


def replacements(div: Divisions) -> dict[int, tuple[int, str]]:
    """Each ``i / K`` and ``i % K`` of the body by the stepped pair."""
    out = {n.start_byte: (n.end_byte, "perfagent_div") for n in div.quotients}
    out.update({n.start_byte: (n.end_byte, "perfagent_mod") for n in div.remainders})
    return out


def step(div: Divisions) -> str:
    """After a lane: the next element's quotient and remainder."""
    return f"if (++perfagent_mod == ({div.divisor})) {{ perfagent_mod = 0; ++perfagent_div; }}"


def guard(div: Divisions) -> str:
    return f" && ({div.divisor}) > 0"
