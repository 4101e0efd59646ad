"""Recipe ``demote-double``: take a float/half/bf16 kernel off the fp64 pipe (transform ``fast-math``).

Precondition (tree-sitter-cuda tree, ``_precision.promotions``): the kernel and the ``__device__``
functions it calls hold no double data (no ``double`` pointer or array parameter, no ``double`` scalar
the launch passes), and they promote to fp64 somewhere: an unsuffixed floating literal (``0.5``), a
double math call (``tanh``, ``exp``, ``pow``), a ``double`` local, cast or helper signature, or a
``#define NAME 0.79788`` only device code uses. Refused, with the line, when a parameter is double data.

Candidates (each a complete source; the verifier's tolerance decides whether the fp32 result still holds):

1. fp32 throughout, as the Best Practices Guide prescribes: ``0.5`` -> ``0.5f``, ``tanh`` -> ``tanhf``,
   ``double`` -> ``float``, and ``pow(v, 2.0)`` / ``pow(v, 3.0)`` of a plain variable -> ``v * v (* v)``;
2. that plus the SFU approximations where fp32 has them: ``__expf``, ``__logf``, ``__sinf``, ``__powf``
   ..., and ``tanhf`` -> PTX ``tanh.approx.f32`` (sm_75+, max relative error about 2^-11: enough for a
   half or bf16 result, judged by the tolerance).
"""

from __future__ import annotations

from functools import partial

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._precision import DOUBLE_TO_FLOAT, Sites, promotions
from perfagent.rewrite.recipes._thread_index import Rewrites, render
from perfagent.rewrite.recipes.fast_math import INTRINSICS
from perfagent.rewrite.recipes.framework import CudaRecipe, Edit, Source, Variant, register

NAME = "demote-double"
TANH_APPROX = "perfagent_tanh_approx"
_TANH_HELPER = (
    f"__device__ __forceinline__ float {TANH_APPROX}(float x)\n"
    "{  // PTX tanh.approx.f32 (sm_75+): one MUFU instruction, max relative error about 2^-11\n"
    "    float y;\n"
    '    asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));\n'
    "    return y;\n"
    "}\n\n"
)
_SMALL_POWERS = {"2": 2, "2.0": 2, "2.": 2, "3": 3, "3.0": 3, "3.": 3}


def _power(callee: Node) -> tuple[str, int] | None:
    """(base, exponent) of ``pow(v, 2.0)`` / ``pow(v, 3)`` with a plain variable base, else None."""
    call = callee.parent
    args = call.child_by_field_name("arguments") if call is not None else None
    if _cuda.text(callee) != "pow" or args is None or len(args.named_children) != 2:
        return None
    base, exponent = args.named_children
    power = _SMALL_POWERS.get(_cuda.text(exponent).rstrip("fF"))
    if base.type != "identifier" or power is None:
        return None
    return _cuda.text(base), power


def _float_name(name: str, fast: bool) -> str:
    single = DOUBLE_TO_FLOAT[name]
    if not fast:
        return single
    return TANH_APPROX if single == "tanhf" else INTRINSICS.get(single, single)


def _product(node: Node, power: tuple[str, int]) -> str:
    base, times = power
    return "(" + " * ".join([base] * times) + ")"


def _renamed(node: Node, fast: bool) -> str:
    return _float_name(_cuda.text(node), fast)


def _rewrites(sites: Sites, fast: bool) -> Rewrites:
    rewrites: Rewrites = {}
    for literal in sites.literals:
        rewrites[literal.id] = lambda n: f"{_cuda.text(n)}f"
    for kind in sites.types:
        rewrites[kind.id] = lambda n: "float"
    for callee in sites.calls:
        power = _power(callee)
        call = callee.parent
        if power is not None and call is not None:
            rewrites[call.id] = partial(_product, power=power)
        else:
            rewrites[callee.id] = partial(_renamed, fast=fast)
    return rewrites


def _top_level(node: Node) -> Node:
    """The translation unit's child holding ``node`` (past ``extern "C" {`` and ``template <...>``)."""
    while node.parent is not None and node.parent.type != "translation_unit":
        node = node.parent
    return node


def _edits(src: Source, sites: Sites, fast: bool) -> list[Edit]:
    rewrites = _rewrites(sites, fast)
    edits = [Edit(fn.start_byte, fn.end_byte, render(fn, rewrites)) for fn in sites.functions]
    edits += [Edit(v.start_byte, v.end_byte, f"{_cuda.text(v).rstrip()}f") for v in sites.defines]
    if fast and any(_float_name(_cuda.text(c), True) == TANH_APPROX for c in sites.calls):
        first = min((_top_level(fn) for fn in sites.functions), key=lambda n: n.start_byte)
        edits.append(Edit(first.start_byte, first.start_byte, _TANH_HELPER))
    return edits


class _DemoteDouble(CudaRecipe[Sites]):
    name = NAME
    transforms = ("fast-math",)
    summary = (
        "float/half/bf16 kernel promoted to fp64 (0.5, tanh(), pow(v, 3.0), (double)) -> fp32 math "
        "(0.5f, tanhf, v * v * v), then SFU intrinsics"
    )

    def match(self, src: Source) -> Sites | str:
        kernel = src.kernel
        if isinstance(kernel, str):
            return kernel
        return promotions(src.tree, kernel)

    def plan(self, src: Source, m: Sites) -> list[Variant]:
        where = (
            f"{len(m.literals)} literal(s), {len(m.calls)} math call(s), {len(m.types)} double type(s), "
            f"{len(m.defines)} #define(s)"
        )
        accurate = Variant(
            edits=_edits(src, m, fast=False),
            description=f"fp64 promotions -> fp32 (f-suffixed literals, float math, float locals): {where}",
            parameters={"intrinsics": False, "sites": m.count()},
            notes=["fp32 instead of fp64: the verifier's tolerance decides whether the result still holds"],
        )
        fast = Variant(
            edits=_edits(src, m, fast=True),
            description=f"fp64 promotions -> fp32, transcendentals -> SFU intrinsics / tanh.approx.f32: {where}",
            parameters={"intrinsics": True, "sites": m.count()},
            notes=["approximate fp32 math: the verifier's tolerance decides whether the result still holds"],
        )
        return [accurate, fast]


RECIPE = register(_DemoteDouble())
applies, propose = RECIPE.applies, RECIPE.propose
