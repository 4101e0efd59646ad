"""The index algebra under modulo-to-select: affine forms of sizes, the prover, and bounds on the tree.

The prover must be sound (never prove what does not follow) more than complete: each case here is a
fact a recipe relies on, or one it must not conclude."""

from __future__ import annotations

from perfagent.rewrite.recipes import _affine, _cuda
from perfagent.rewrite.recipes._affine import Facts, add, const, scale, sub, sym
from perfagent.rewrite.recipes._index_range import Ranges
from perfagent.rewrite.recipes.modulo_to_select import remainders


def test_a_positive_product_of_sizes_bounds_its_factors() -> None:
    facts = Facts(nonneg={"W", "H"}, facts=[add(sym("H", "W"), const(-1))])  # W * H >= 1
    facts.add_product_facts()
    assert facts.positive(sym("W")) and facts.positive(sym("H"))
    assert facts.nonneg(sub(sym("H", "W"), sym("W")))  # W * H >= W
    assert facts.nonneg(sub(scale(sym("H", "W"), 2), add(sym("H", "W"), sym("W"), const(-1))))


def test_the_prover_refuses_what_does_not_follow() -> None:
    facts = Facts(nonneg={"W"})
    assert not facts.positive(sym("W"))  # W >= 0 only: W may be 0
    assert not facts.nonneg(sub(sym("W"), sym("H")))  # nothing relates W and H
    assert not Facts().nonneg(sym("W"))  # a signed size of unknown sign
    assert facts.nonneg(add(sym("W"), const(3)))


def test_quotient_of_a_form_by_a_size() -> None:
    assert _affine.quotient(sym("H", "W"), sym("W")) == sym("H")
    assert _affine.quotient(add(sym("H", "W"), const(1)), sym("W")) is None


def _bounds(source: str) -> list[str]:
    tree = _cuda.parse(source)
    kernel = _cuda.kernels(tree)[0]
    ranges = Ranges(kernel)
    out = []
    for node in remainders(kernel):
        dividend = node.child_by_field_name("left")
        assert dividend is not None
        r = ranges.at(node).bounds(dividend)
        out.append(
            r
            if isinstance(r, str)
            else f"[{' | '.join(map(_affine.render, r.lo))}, {' | '.join(map(_affine.render, r.hi))}]"
        )
    return out


def test_products_of_lower_bounds_need_both_non_negative() -> None:
    # i >= -3 and j >= -2 (their starts) are lower bounds, and so is 0 once the guard holds: (-3) * (-2)
    # = 6 is no lower bound of i * j (i = j = 0); only 0 * 0 is
    got = _bounds(
        "__global__ void k(int *a, int n, int m) {\n"
        "    for (int i = -3; i < n; ++i) for (int j = -2; j < m; ++j)\n"
        "        if (i >= 0 && j >= 0) a[0] = (i * j) % m;\n}\n"
    )
    assert got == ["[0, ]"], got


def test_guards_loops_and_early_returns_bound_the_indices() -> None:
    got = _bounds(
        "__global__ void k(int *a, unsigned W, unsigned H) {\n"
        "    unsigned S = W * H;\n"
        "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i >= S) return;\n"
        "    unsigned row = i / W;\n"
        "    a[i] = (row + 1) % H + (i - i % W + W) % S;\n}\n"
    )
    assert got[0] == "[1, H | H * W]", got  # row < H (i < W * H), and row <= i
    assert got[1] == "[W, H * W + W - 1]", got  # the next row's start, below 2 * S
    assert got[2] == "[0, H * W - 1]", got
