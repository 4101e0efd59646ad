"""Recipe ``fast-math``: hardware intrinsics for single-precision transcendentals and divisions.

Precondition (tree-sitter-cuda tree): device code (the kernel, and the ``__device__`` functions of the
file) calls a single-precision math function that has an intrinsic (``expf``, ``logf``, ``sinf``,
``cosf``, ``tanf``, ``powf``, ``exp10f``, ``log2f``, ``log10f``), or divides two expressions that are
provably ``float`` (a ``float`` variable, parameter, array or pointer element, an ``f``-suffixed
literal, a float math call, a ``(float)`` cast, or arithmetic of those with integer literals). Double
precision and expressions of unknown type are left alone.

Candidates, each a complete source (the verifier's tolerance judges the accuracy; the launch spec has no
compiler-flag field, so ``-use_fast_math`` itself is not offered):

1. transcendentals -> ``__expf`` / ``__logf`` / ``__sinf`` / ... (SFU approximations, 2 ulp-ish);
2. that plus ``1.0f / sqrtf(x)`` -> ``rsqrtf(x)``, and ``a / b`` (``1.0f / x`` too) ->
   ``__fdividef(a, b)`` (for |b| in (2^126, 2^128) it returns 0: the verifier sees that).
"""

from __future__ import annotations

from functools import partial

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._thread_index import Rewrites, render
from perfagent.rewrite.recipes.framework import CudaRecipe, Edit, Source, Variant, register

NAME = "fast-math"
INTRINSICS = {
    "expf": "__expf", "logf": "__logf", "sinf": "__sinf", "cosf": "__cosf", "tanf": "__tanf",
    "powf": "__powf", "exp10f": "__exp10f", "log2f": "__log2f", "log10f": "__log10f",
}  # fmt: skip
FLOAT_FUNCTIONS = frozenset(
    {*INTRINSICS, *INTRINSICS.values(), "sqrtf", "rsqrtf", "fabsf", "fmaxf", "fminf", "tanhf", "exp2f",
     "fmaf", "__fdividef", "__frcp_rn", "__saturatef", "erff", "sigmoidf", "__int2float_rn", "__half2float"}
)  # fmt: skip


def _declared_floats(fn: Node) -> tuple[set[str], set[str]]:
    """(float scalars, float arrays / pointers) declared in ``fn`` (parameters and locals)."""
    scalars: set[str] = set()
    arrays: set[str] = set()
    for node in _cuda.walk(fn):
        if node.type not in ("declaration", "parameter_declaration"):
            continue
        if _cuda.element_type(node) != "float":
            continue
        for decl in node.children_by_field_name("declarator"):
            inner = decl.child_by_field_name("declarator") if decl.type == "init_declarator" else decl
            target = inner if inner is not None else decl
            ident = next((n for n in _cuda.walk(target) if n.type == "identifier"), None)
            if ident is None:
                continue
            nested = any(n.type in ("pointer_declarator", "array_declarator") for n in _cuda.walk(target))
            (arrays if nested else scalars).add(_cuda.text(ident))
    return scalars, arrays


def _is_float(node: Node, floats: tuple[set[str], set[str]]) -> bool:
    """Whether ``node`` is provably a single-precision value (conservative: unknown is False)."""
    node_type = node.type
    if node_type == "number_literal":
        return _cuda.text(node).lower().endswith("f") and not _cuda.text(node).lower().startswith("0x")
    if node_type == "identifier":
        return _cuda.text(node) in floats[0]
    if node_type == "subscript_expression":
        base = node.child_by_field_name("argument")
        return base is not None and base.type == "identifier" and _cuda.text(base) in floats[1]
    if node_type == "pointer_expression" and _cuda.text(node).startswith("*"):
        arg = node.child_by_field_name("argument")
        return arg is not None and arg.type == "identifier" and _cuda.text(arg) in floats[1]
    if node_type == "call_expression":
        fn = node.child_by_field_name("function")
        return fn is not None and _cuda.text(fn) in FLOAT_FUNCTIONS
    if node_type == "cast_expression":
        typ = node.child_by_field_name("type")
        return typ is not None and _cuda.text(typ).strip() == "float"
    if node_type in ("parenthesized_expression", "unary_expression"):
        inner = node.named_children[-1] if node.named_children else None
        return inner is not None and _is_float(inner, floats)
    if node_type == "binary_expression":
        op = _cuda.text(node.child_by_field_name("operator") or node)
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op not in "+-*/" or left is None or right is None:
            return False
        lf, rf = _is_float(left, floats), _is_float(right, floats)
        return (lf and (rf or _int_literal(right))) or (rf and _int_literal(left))
    return False


def _int_literal(node: Node) -> bool:
    return node.type == "number_literal" and _cuda.text(node).isdigit()


def _one(node: Node) -> bool:
    return _cuda.text(_cuda.strip(node)) in ("1.0f", "1.f", "1.0F", "1.F")


def _sites(fn: Node, divisions: bool) -> Rewrites:
    floats = _declared_floats(fn)
    rewrites: Rewrites = {}
    for node in _cuda.walk(fn):
        if node.type == "call_expression":
            callee = node.child_by_field_name("function")
            if callee is not None and callee.type == "identifier" and _cuda.text(callee) in INTRINSICS:
                rewrites[callee.id] = lambda n: INTRINSICS[_cuda.text(n)]
        if not divisions or node.type != "binary_expression":
            continue
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if _cuda.text(node.child_by_field_name("operator") or node) != "/" or left is None or right is None:
            continue
        if not _is_float(node, floats):
            continue
        rewrites[node.id] = partial(_division, rewrites=rewrites)
    return rewrites


def _division(node: Node, rewrites: Rewrites) -> str:
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    assert left is not None and right is not None
    inner = _cuda.strip(right)
    if _one(left) and inner.type == "call_expression":
        callee = inner.child_by_field_name("function")
        args = inner.child_by_field_name("arguments")
        if callee is not None and _cuda.text(callee) == "sqrtf" and args is not None:
            return f"rsqrtf{render(args, rewrites)}"
    return f"__fdividef({render(left, rewrites)}, {render(right, rewrites)})"


def _device_functions(src: Source) -> list[Node] | str:
    kernel = src.kernel
    if isinstance(kernel, str):
        return kernel
    helpers = [
        n
        for n in _cuda.walk(src.tree.root_node)
        if n.type == "function_definition" and _cuda.has_qualifier(n, "__device__")
    ]
    return [kernel, *helpers]


def _edits(fns: list[Node], divisions: bool) -> tuple[list[Edit], int]:
    edits, count = [], 0
    for fn in fns:
        rewrites = _sites(fn, divisions)
        body = fn.child_by_field_name("body")
        if rewrites and body is not None:
            count += len(rewrites)
            edits.append(Edit(body.start_byte, body.end_byte, render(body, rewrites)))
    return edits, count


class _FastMath(CudaRecipe[list[Node]]):
    name = NAME
    transforms = ("fast-math",)
    summary = "expf/logf/sinf/powf... -> __expf/__logf/...; float a / b -> __fdividef, 1/sqrtf -> rsqrtf"

    def match(self, src: Source) -> list[Node] | str:
        fns = _device_functions(src)
        if isinstance(fns, str):
            return fns
        if not _edits(fns, divisions=True)[0]:
            return (
                "no single-precision transcendental (expf, logf, sinf, powf, ...) or float division "
                "in the kernel's device code"
            )
        return fns

    def plan(self, src: Source, m: list[Node]) -> list[Variant]:
        out = []
        for divisions, what in (
            (False, "single-precision transcendentals -> SFU intrinsics (__expf, __logf, __sinf, ...)"),
            (True, "transcendentals -> intrinsics, float divisions -> __fdividef / rsqrtf"),
        ):
            edits, count = _edits(m, divisions)
            if edits:
                out.append(
                    Variant(
                        edits=edits,
                        description=f"{what}: {count} site(s)",
                        parameters={"divisions": divisions, "sites": count},
                        notes=[
                            "approximate math: the verifier's tolerance decides whether the result still holds"
                        ],
                    )
                )
        return out


RECIPE = register(_FastMath())
applies, propose = RECIPE.applies, RECIPE.propose
