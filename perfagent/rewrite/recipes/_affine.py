"""Affine forms over kernel sizes, and a small prover of ``form >= 0`` from facts: the index algebra.

A form is a sum of integer multiples of *monomials*: products of loop-invariant names (kernel
arguments, invariant locals), the empty monomial being the constant. ``W - 1``, ``2 * S - W`` and
``W * H - 1`` are forms. A fact is a form known to be ``>= 0`` at the point of a proof (``W - 1``
from a guard ``x < W`` with ``x >= 0``). ``nonneg`` proves a form ``>= 0`` by subtracting at most
three facts (a fact may be taken more than once) and checking that what is left is a non-negative constant plus
non-negative multiples of non-negative monomials: sound (each step keeps ``f = rest + facts``), not
complete (it refuses what it cannot show, and the recipe then refuses with the line).

Products of sizes give facts of their own (``add_product_facts``): ``S = W * H >= 1`` with ``W, H >= 0``
means ``W >= 1``, ``H >= 1`` and ``S >= W``, ``S >= H`` (integers).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import combinations_with_replacement

Mono = tuple[str, ...]
"""Sorted factor names; () is the constant term."""
FormDict = dict[Mono, int]
"""A form as built here (``Form`` is any read-only mapping of one)."""
Form = Mapping[Mono, int]
"""monomial -> coefficient (no zero coefficients)."""

_MAX_FACTS = 3
"""Facts subtracted at most in one proof (the search is over multisets of this size)."""


def const(k: int) -> dict[Mono, int]:
    return {(): k} if k else {}


def sym(*names: str) -> dict[Mono, int]:
    """The monomial of ``names`` (a product when several)."""
    return {tuple(sorted(names)): 1}


def add(*forms: Form) -> dict[Mono, int]:
    out: dict[Mono, int] = {}
    for form in forms:
        for mono, c in form.items():
            out[mono] = out.get(mono, 0) + c
    return {m: c for m, c in out.items() if c}


def scale(form: Form, k: int) -> dict[Mono, int]:
    return {m: c * k for m, c in form.items() if c * k}


def sub(a: Form, b: Form) -> dict[Mono, int]:
    return add(a, scale(b, -1))


def mul(a: Form, b: Form) -> dict[Mono, int] | None:
    """The product, when one side is a constant or both are single monomials (None: not affine)."""
    if set(a) <= {()}:
        return scale(b, a.get((), 0))
    if set(b) <= {()}:
        return scale(a, b.get((), 0))
    if len(a) == 1 and len(b) == 1:
        (ma, ca), (mb, cb) = next(iter(a.items())), next(iter(b.items()))
        return {tuple(sorted(ma + mb)): ca * cb}
    return None


def quotient(form: Form, divisor: Form) -> dict[Mono, int] | None:
    """``form / divisor`` when ``divisor`` is one monomial (coefficient 1) dividing every term exactly."""
    if len(divisor) != 1:
        return None
    ((mono, coefficient),) = divisor.items()
    if coefficient != 1 or not mono or not form:
        return None
    out: dict[Mono, int] = {}
    for m, c in form.items():
        rest = list(m)
        for factor in mono:
            if factor not in rest:
                return None
            rest.remove(factor)
        out[tuple(rest)] = c
    return out


def render(form: Form) -> str:
    """The form as C text, for refusal reasons ('2 * W - 1')."""
    if not form:
        return "0"
    parts = []
    for mono, c in sorted(form.items(), key=lambda mc: (mc[0] == (), mc[0])):
        name = " * ".join(mono)
        if not mono:
            term = str(abs(c))
        elif abs(c) == 1:
            term = name
        else:
            term = f"{abs(c)} * {name}"
        parts.append(("- " if c < 0 else "+ ") + term)
    text = " ".join(parts)
    return text[2:] if text.startswith("+ ") else "-" + text[2:]


class Facts:
    """What is known ``>= 0`` at one point of the kernel, and which names are non-negative."""

    def __init__(self, nonneg: Iterable[str] = (), facts: Iterable[Form] = ()) -> None:
        self.nonneg_names: set[str] = set(nonneg)
        self.forms: list[dict[Mono, int]] = []
        for f in facts:
            self.add(f)

    def copy(self) -> Facts:
        out = Facts(self.nonneg_names)
        out.forms = list(self.forms)
        return out

    def add(self, form: Form) -> None:
        """Record ``form >= 0`` (a single name minus a non-negative constant makes the name non-negative)."""
        f = dict(form)
        if f in self.forms:
            return
        self.forms.append(f)
        names = [m for m in f if m]
        if len(names) == 1 and len(names[0]) == 1 and f[names[0]] > 0 and f.get((), 0) <= 0:
            self.nonneg_names.add(names[0][0])
            self.add_product_facts()

    def _plain(self, form: Form) -> bool:
        """Non-negative on sight: constant >= 0, every other term a positive multiple of a non-negative monomial."""
        if form.get((), 0) < 0:
            return False
        return all(c > 0 and all(n in self.nonneg_names for n in m) for m, c in form.items() if m)

    def nonneg(self, form: Form) -> bool:
        """Whether ``form >= 0`` follows (see the module docstring)."""
        if self._plain(form):
            return True
        for size in range(1, _MAX_FACTS + 1):
            for picked in combinations_with_replacement(range(len(self.forms)), size):
                rest = sub(form, add(*(self.forms[i] for i in picked)))
                if self._plain(rest):
                    return True
        return False

    def positive(self, form: Form) -> bool:
        """Whether ``form >= 1`` (integers)."""
        return self.nonneg(add(form, const(-1)))

    def add_product_facts(self) -> None:
        """For every product monomial ``P`` known ``>= 1`` whose factors are non-negative: each factor
        ``>= 1`` and ``P >= factor`` (integers: a product of non-negative integers that is not zero)."""
        for mono in {m for f in self.forms for m in f if len(m) > 1}:
            if not all(n in self.nonneg_names for n in mono) or not self.positive(sym(*mono)):
                continue
            for factor in set(mono):
                for derived in (add(sym(factor), const(-1)), sub(sym(*mono), sym(factor))):
                    if derived not in self.forms:
                        self.forms.append(derived)
