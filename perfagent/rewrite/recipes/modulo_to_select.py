"""Recipe ``modulo-to-select``: an integer ``%`` by a runtime size whose dividend is provably small
becomes at most two compare-and-subtract steps (the fast-math transform's integer division).

A ``%`` by a value only known at run time costs a dozen or more instructions on the GPU (a reciprocal
on the XU pipe, multiplies, a correction), and a wrap-around stencil does one per neighbour: the torus
indices ``(x + dx + W) % W`` and ``(row + H - 1) % H``, Game of Life's ``(x + 1) % worldWidth``. When
the index algebra (``_index_range``) proves the dividend ``E`` lies in ``[0, (k + 1) * D)`` for ``k``
of 0, 1 or 2, ``E % D`` is ``E`` minus ``D`` at most ``k`` times: the rewrite calls a helper that does
exactly that, in the type the ``%`` had (``decltype(E % D)``, so every usual arithmetic conversion the
original made is kept). The proofs read the guards (``if (x < W && y < H)``, a loop's ``i < N``, an
early ``return``), the thread built-ins (``>= 0``), remainders (``i % W`` is in ``[0, W)``), row
starts (``i - i % W`` is in ``[0, i]``) and products of sizes (``i < W * H`` with ``i >= 0`` makes
``W, H >= 1`` and ``W * H >= W``).

Refused, with the line: a constant divisor (the compiler already multiplies by its magic number), a
divisor not provably ``>= 1``, a dividend not provably ``>= 0`` or that may reach ``3 * D``. The other
remainders of the kernel are left as they are and named in the candidate's notes.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _affine, _cuda
from perfagent.rewrite.recipes._chunk_syntax import operator
from perfagent.rewrite.recipes._index_range import Point, Ranges
from perfagent.rewrite.recipes._remainder_carry import Carry, carry_for
from perfagent.rewrite.recipes._remainder_carry import edits as carry_edits
from perfagent.rewrite.recipes.framework import CudaRecipe, Edit, Source, Variant, at, register

NAME = "modulo-to-select"
HELPER = "perfagent_wrap"
_MAX_STEPS = 2
_HELPER_TEXT = f"""// modulo-to-select: `t % d` for t proven in [0, (STEPS + 1) * d): subtract d at most STEPS times,
// in the type `t % d` has (the same conversions as the `%` it replaces)
template <int STEPS, typename T, typename D>
__device__ __forceinline__ auto {HELPER}(T t, D d) -> decltype(t % d)
{{
    decltype(t % d) r = t;
#pragma unroll
    for (int k = 0; k < STEPS; ++k) r = r >= d ? r - d : r;
    return r;
}}

"""


@dataclass(frozen=True)
class _Wrap:
    node: Node
    steps: int


@dataclass(frozen=True)
class _Found:
    kernel: Node
    wraps: list[_Wrap]
    carries: list[Carry]
    refused: list[str]


def remainders(kernel: Node) -> list[Node]:
    """Every ``a % b`` in the kernel's body, outermost first."""
    body = kernel.child_by_field_name("body") or kernel
    return [n for n in _cuda.walk(body) if n.type == "binary_expression" and operator(n) == "%"]


def steps_for(point: Point, node: Node) -> int | str:
    """How many subtractions make ``node`` (``E % D``) exact, or why it cannot be proven."""
    dividend, divisor = node.child_by_field_name("left"), node.child_by_field_name("right")
    assert dividend is not None and divisor is not None
    if _cuda.strip(divisor).type == "number_literal":
        return at(node, "a constant divisor: the compiler already replaces it by a multiply")
    d = point.exact(divisor)
    if d is None:
        return at(
            node,
            f"the divisor '{_cuda.text(divisor)}' is not a size of the kernel (an argument or a local computed from them)",
        )
    if not point.facts.positive(d):
        return at(node, f"the divisor '{_cuda.text(divisor)}' is not provably >= 1 (no guard bounds it)")
    bounds = point.bounds(dividend)
    if isinstance(bounds, str):
        return at(node, f"the range of '{_cuda.text(dividend)}' is unknown: {bounds}")
    if not any(point.facts.nonneg(lo) for lo in bounds.lo):
        return at(node, f"'{_cuda.text(dividend)}' is not provably >= 0")
    for steps in range(_MAX_STEPS + 1):
        limit = _affine.scale(d, steps + 1)
        if any(point.facts.positive(_affine.sub(limit, hi)) for hi in bounds.hi):
            return steps
    highs = ", ".join(_affine.render(h) for h in bounds.hi) or "unbounded"
    return at(
        node,
        f"'{_cuda.text(dividend)}' may reach {_MAX_STEPS + 1} * ({_cuda.text(divisor)}) (at most {highs})",
    )


def find(kernel: Node) -> _Found | str:
    """The provable remainders of ``kernel`` (outermost only when nested), and why not the others."""
    ranges = Ranges(kernel)
    wraps: list[_Wrap] = []
    carries: list[Carry] = []
    refused: list[str] = []
    for node in remainders(kernel):
        if any(w.node.start_byte <= node.start_byte and node.end_byte <= w.node.end_byte for w in wraps):
            continue
        point = ranges.at(node)
        steps = steps_for(point, node)
        carry = carry_for(ranges, point, node) if isinstance(steps, str) else None
        if carry is not None:
            carries.append(carry)
        elif isinstance(steps, str):
            refused.append(steps)
        else:
            wraps.append(_Wrap(node, steps))
    if not wraps and not carries:
        return "; ".join(refused) if refused else "no '%' in the kernel"
    return _Found(kernel, wraps, carries, refused)


def top_level(node: Node) -> Node:
    """The translation-unit child holding ``node`` (its template or ``extern "C"`` wrapper included)."""
    while node.parent is not None and node.parent.type != "translation_unit":
        node = node.parent
    return node


class _ModuloSelect(CudaRecipe[_Found]):
    name = NAME
    transforms = ("fast-math",)
    summary = "E % D with E proven in [0, 3D) (wrap-around stencil indices) -> compare-and-subtract"

    def match(self, src: Source) -> _Found | str:
        return src.on_kernel(find)

    def plan(self, src: Source, m: _Found) -> list[Variant]:
        edits = []
        for wrap in m.wraps:
            left, right = wrap.node.child_by_field_name("left"), wrap.node.child_by_field_name("right")
            assert left is not None and right is not None
            text = f"{HELPER}<{wrap.steps}>({_cuda.text(left)}, {_cuda.text(right)})"
            edits.append(Edit(wrap.node.start_byte, wrap.node.end_byte, text))
        if m.wraps and f"{HELPER}(" not in src.text:
            start = top_level(m.kernel).start_byte
            edits.append(Edit(start, start, _HELPER_TEXT))
        edits += carry_edits(m.carries)
        said = []
        if m.wraps:
            lines = ", ".join(str(n) for n in sorted({_cuda.line_of(w.node) for w in m.wraps}))
            steps = max(w.steps for w in m.wraps)
            said.append(
                f"{len(m.wraps)} '%' with a provably small dividend (line {lines}) -> at most {steps} compare-and-subtract"
            )
        if m.carries:
            lines = ", ".join(str(n) for n in sorted({_cuda.line_of(c.node) for c in m.carries}))
            said.append(
                f"{len(m.carries)} loop counter '%' (line {lines}) -> a remainder carried by the loop"
            )
        return [
            Variant(
                edits=edits,
                description="; ".join(said),
                parameters={"remainders": len(m.wraps), "carried": len(m.carries)},
                notes=[f"left as '%': {why}" for why in m.refused],
            )
        ]


RECIPE = register(_ModuloSelect())
applies, propose = RECIPE.applies, RECIPE.propose
