"""Recipe ``loop-unroll``: ``#pragma unroll`` / ``#pragma unroll N`` before innermost constant-trip loops.

Precondition (tree-sitter-cuda parse tree): a ``for`` statement in a ``__global__`` or ``__device__``
function that contains no other loop, sits directly in a ``{ }`` block on its own line, has no
``#pragma unroll`` before it, and has a trip count the recipe can compute at compile time: init
``i = A``, condition ``i < B`` / ``<=`` / ``>`` / ``>=`` / ``!=``, update ``++``/``--``/``+= C``/``-= C``/
``*= C``/``<<= C``/``>>= C``/``/= C`` with A, B, C literals or constants (``#define``, ``constexpr``,
template defaults), a loop variable the body never assigns, and 2 to 4096 iterations.

Candidates: 'full' (``#pragma unroll`` for trip counts up to 64, ``#pragma unroll 8`` above) and
'4' (``#pragma unroll 4`` on loops of more than 4 iterations).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes.framework import CudaRecipe, Edit, Source, Variant, register

NAME = "loop-unroll"
LOOPS = frozenset({"for_statement", "while_statement", "do_statement", "for_range_loop"})
FULL_UNROLL_MAX = 64
MAX_TRIPS = 4096


@dataclass(frozen=True)
class _Loop:
    node: Node
    var: str
    trips: int
    function: str


def _trip_count(loop: Node, env: dict[str, _cuda.Constant | int]) -> tuple[str, int] | str:
    """(loop variable, trip count) or why it is not constant."""
    init = loop.child_by_field_name("initializer")
    cond = loop.child_by_field_name("condition")
    update = loop.child_by_field_name("update")
    if init is None or cond is None or update is None:
        return "missing init, condition or update"
    var, start = _init(init, env)
    if var is None or start is None:
        return f"initializer '{_cuda.text(init)}' is not 'i = <constant>'"
    bound = _condition(cond, var, env)
    if bound is None:
        return f"condition '{_cuda.text(cond)}' is not 'i < <constant>'"
    op, limit = bound
    step = _update(update, var, env)
    if step is None:
        return f"update '{_cuda.text(update)}' is not a constant step"
    trips = _simulate(start, op, limit, step)
    if trips is None:
        return "the loop does not terminate within 4096 iterations"
    return var, trips


def _init(node: Node, env: dict[str, _cuda.Constant | int]) -> tuple[str | None, int | None]:
    if node.type == "declaration":
        decl = next((c for c in node.named_children if c.type == "init_declarator"), None)
        if decl is None:
            return None, None
        ident, value = decl.child_by_field_name("declarator"), decl.child_by_field_name("value")
    elif (
        node.type == "assignment_expression"
        and _cuda.text(node.child_by_field_name("operator") or node) == "="
    ):
        ident, value = node.child_by_field_name("left"), node.child_by_field_name("right")
    else:
        return None, None
    if ident is None or ident.type != "identifier" or value is None:
        return None, None
    return _cuda.text(ident), _cuda.evaluate(_cuda.text(value), env)


def _condition(node: Node, var: str, env: dict[str, _cuda.Constant | int]) -> tuple[str, int] | None:
    if node.type != "binary_expression":
        return None
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    op_node = node.child_by_field_name("operator")
    if left is None or right is None or op_node is None:
        return None
    op = _cuda.text(op_node)
    flipped = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}
    if op not in flipped:
        return None
    if left.type == "identifier" and _cuda.text(left) == var:
        limit = _cuda.evaluate(_cuda.text(right), env)
        return None if limit is None else (op, limit)
    if right.type == "identifier" and _cuda.text(right) == var:
        limit = _cuda.evaluate(_cuda.text(left), env)
        return None if limit is None else (flipped[op], limit)
    return None


def _update(node: Node, var: str, env: dict[str, _cuda.Constant | int]) -> tuple[str, int] | None:
    if node.type == "update_expression":
        arg = node.child_by_field_name("argument")
        if arg is None or _cuda.text(arg) != var:
            return None
        return ("+=", 1) if "++" in _cuda.text(node) else ("-=", 1)
    if node.type == "assignment_expression":
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        op_node = node.child_by_field_name("operator")
        if left is None or right is None or op_node is None or _cuda.text(left) != var:
            return None
        op = _cuda.text(op_node)
        if op in ("+=", "-=", "*=", "/=", "<<=", ">>="):
            value = _cuda.evaluate(_cuda.text(right), env)
            return None if value is None else (op, value)
    return None


def _simulate(start: int, op: str, limit: int, step: tuple[str, int]) -> int | None:
    compares: dict[str, Callable[[int], bool]] = {
        "<": lambda a: a < limit,
        "<=": lambda a: a <= limit,
        ">": lambda a: a > limit,
        ">=": lambda a: a >= limit,
        "!=": lambda a: a != limit,
    }
    compare = compares[op]
    kind, amount = step
    if (kind in ("*=", "/=") and amount in (0, 1)) or (kind in ("<<=", ">>=", "+=", "-=") and amount == 0):
        return None
    value, trips = start, 0
    while compare(value):
        trips += 1
        if trips > MAX_TRIPS:
            return None
        if kind == "+=":
            value += amount
        elif kind == "-=":
            value -= amount
        elif kind == "*=":
            value *= amount
        elif kind == "/=":
            value = int(value / amount)
        elif kind == "<<=":
            value <<= amount
        elif kind == ">>=":
            value >>= amount
    return trips


def _assigns(body: Node, var: str) -> bool:
    for node in _cuda.walk(body):
        if node.type == "assignment_expression":
            left = node.child_by_field_name("left")
            if left is not None and _cuda.text(left) == var:
                return True
        elif node.type == "update_expression":
            arg = node.child_by_field_name("argument")
            if arg is not None and _cuda.text(arg) == var:
                return True
    return False


def _has_pragma(loop: Node) -> bool:
    prev = loop.prev_named_sibling
    while prev is not None and prev.type == "comment":
        prev = prev.prev_named_sibling
    return (
        prev is not None
        and prev.type == "preproc_call"
        and "unroll" in _cuda.text(prev)
        and "pragma" in _cuda.text(prev)
    )


def _scan(src: Source) -> tuple[list[_Loop], list[str]] | str:
    request, tree = src.request, src.tree
    env: dict[str, _cuda.Constant | int] = dict(src.constants)
    data = request.source.encode("utf-8")
    loops: list[_Loop] = []
    reasons: list[str] = []
    for fn in _cuda.functions(tree):
        fname = _cuda.function_name(fn) or "?"
        if not _cuda.is_device_code(fn) or (
            request.kernel is not None
            and fname != _cuda.template_base(request.kernel)
            and _cuda.is_kernel(fn)
        ):
            continue
        for node in _cuda.walk(fn):
            if node.type != "for_statement":
                continue
            body = node.child_by_field_name("body")
            where = f"loop at line {_cuda.line_of(node)} of {fname}"
            if body is None or any(n.type in LOOPS for n in _cuda.walk(body)):
                continue  # not innermost
            if _has_pragma(node):
                reasons.append(f"{where} already has #pragma unroll")
                continue
            if node.parent is None or node.parent.type != "compound_statement":
                reasons.append(f"{where} is not directly inside a {{ }} block")
                continue
            start = _cuda.line_start(data, node.start_byte)
            if data[start : node.start_byte].strip():
                reasons.append(f"{where} does not start its line")
                continue
            trip = _trip_count(node, env)
            if isinstance(trip, str):
                reasons.append(f"{where}: {trip}")
                continue
            var, trips = trip
            if _assigns(body, var):
                reasons.append(f"{where}: the body assigns the loop variable {var}")
                continue
            if trips < 2:
                reasons.append(f"{where} runs {trips} time(s)")
                continue
            loops.append(_Loop(node, var, trips, fname))
    if not loops and not reasons:
        reasons.append("no innermost for loop in a __global__/__device__ function")
    return (loops, reasons) if loops else "; ".join(reasons)


def _pragma_edits(source: str, loops: list[_Loop], factor: int | None) -> tuple[list[Edit], list[str]]:
    data = source.encode("utf-8")
    edits, described = [], []
    for loop in loops:
        if factor is None:
            pragma = "#pragma unroll" if loop.trips <= FULL_UNROLL_MAX else "#pragma unroll 8"
        elif loop.trips > factor:
            pragma = f"#pragma unroll {factor}"
        else:
            continue
        start = _cuda.line_start(data, loop.node.start_byte)
        indent = data[start : loop.node.start_byte].decode("utf-8")
        edits.append(Edit(start, start, f"{indent}{pragma}\n"))
        described.append(
            f"line {_cuda.line_of(loop.node)} ({loop.function}, {loop.trips} iterations): {pragma}"
        )
    return edits, described


class _LoopUnroll(CudaRecipe[tuple[list[_Loop], list[str]]]):
    name = NAME
    transforms = ("loop-unroll",)
    summary = "#pragma unroll (N) before innermost for loops with compile-time trip counts in device code"
    wrong_language = "loop-unroll edits CUDA sources (in Triton use tl.static_range)"

    def match(self, src: Source) -> tuple[list[_Loop], list[str]] | str:
        return _scan(src)

    def plan(self, src: Source, m: tuple[list[_Loop], list[str]]) -> list[Variant]:
        loops, reasons = m
        out = []
        for factor, label in ((None, "full"), (4, "4")):
            edits, described = _pragma_edits(src.text, loops, factor)
            if edits:
                out.append(
                    Variant(
                        edits=edits,
                        description="Unroll innermost constant-trip loops: " + "; ".join(described) + ".",
                        parameters={"unroll": label, "loops": len(edits)},
                        notes=[f"not unrolled: {r}" for r in reasons],
                    )
                )
        return out


RECIPE = register(_LoopUnroll())
applies, propose = RECIPE.applies, RECIPE.propose
