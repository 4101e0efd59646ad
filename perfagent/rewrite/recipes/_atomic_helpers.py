"""Float atomics written as ``atomicCAS`` loops in a ``__device__`` helper of the file, read on the tree.

CUDA has no ``atomicMax(float *)``; kernels call a helper of their own (``atomicMaxFloat(addr, v)``,
the CAS loop of the CUDA Programming Guide's double ``atomicAdd``): read the word, combine, ``atomicCAS``
until no other thread intervened. Such a helper is an atomic ``*addr = op(*addr, v)`` whose ``op`` is the
combine inside the loop. It is recognised by its shape, not its name: two parameters, the first a
pointer to ``float`` or ``double``; an ``atomicCAS`` inside a ``do``/``while``/``for`` loop; and exactly
one combine of the value parameter — ``fmaxf``/``fmax``/``max`` (a maximum), ``fminf``/``fmin``/``min``
(a minimum), or ``+`` with the value parameter as an operand (a sum) — and no other atomic. A block can
then combine its values with the same ``op`` and call the helper once.
"""

from __future__ import annotations

from tree_sitter import Node, Tree

from perfagent.rewrite.recipes import _cuda

FLOAT_TYPES = frozenset({"float", "double"})
_MAX = frozenset({"fmaxf", "fmax", "max"})
_MIN = frozenset({"fminf", "fmin", "min"})
_LOOPS = ("do_statement", "while_statement", "for_statement")

Helper = tuple[str, str]
"""(combine kind 'fmax' / 'fmin' / 'fadd', element type)."""


def helpers(tree: Tree) -> dict[str, Helper | str]:
    """Every ``__device__`` function of the file that uses an atomic: what it combines, or why it is not
    a CAS-loop helper the recipe reads."""
    out: dict[str, Helper | str] = {}
    for fn in _cuda.functions(tree):
        name = _cuda.function_name(fn)
        body = fn.child_by_field_name("body")
        if name is None or body is None or _cuda.is_kernel(fn) or not _cuda.has_qualifier(fn, "__device__"):
            continue
        atomics = [c for c in _calls(body) if _callee(c).startswith("atomic")]
        if atomics:
            out[name] = _combine(fn, body, atomics)
    return out


def _calls(node: Node) -> list[Node]:
    return [n for n in _cuda.walk(node) if n.type == "call_expression"]


def _callee(call: Node) -> str:
    fn = call.child_by_field_name("function")
    return _cuda.text(fn) if fn is not None else ""


def _combine(fn: Node, body: Node, atomics: list[Node]) -> Helper | str:
    params = _cuda.kernel_params(fn)
    if len(params) != 2 or not params[0][2] or params[1][2]:
        return "not (T *address, T value)"
    element = " ".join(params[0][1].replace("const", " ").split())
    if element not in FLOAT_TYPES:
        return f"its address points to {element}, not float or double"
    if any(_callee(c) != "atomicCAS" for c in atomics):
        return f"it uses {', '.join(sorted({_callee(c) for c in atomics}))}, not only atomicCAS"
    if not all(any(_cuda.enclosing(c, loop) is not None for loop in _LOOPS) for c in atomics):
        return "its atomicCAS is not in a retry loop"
    value = params[1][0]
    kinds = {
        kind
        for call in _calls(body)
        if (kind := _call_kind(_callee(call))) is not None and _mentions(call, value)
    }
    kinds |= {"fadd" for n in _cuda.walk(body) if _is_sum_of(n, value)}
    if len(kinds) != 1:
        found = ", ".join(sorted(kinds)) or "none"
        return f"the combine of {value} inside the loop is not exactly one max, min or sum (found: {found})"
    return kinds.pop(), element


def _call_kind(name: str) -> str | None:
    return "fmax" if name in _MAX else "fmin" if name in _MIN else None


def _mentions(call: Node, name: str) -> bool:
    args = call.child_by_field_name("arguments")
    return args is not None and any(
        n.type == "identifier" and _cuda.text(n) == name for n in _cuda.walk(args)
    )


def _is_sum_of(node: Node, name: str) -> bool:
    if node.type != "binary_expression" or _cuda.text(node.child_by_field_name("operator") or node) != "+":
        return False
    sides = [_cuda.strip(node.child_by_field_name(f) or node) for f in ("left", "right")]
    return any(s.type == "identifier" and _cuda.text(s) == name for s in sides)
