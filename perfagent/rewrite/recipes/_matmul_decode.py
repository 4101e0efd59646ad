"""Output coordinates decoded from a flat thread index with ``/`` and ``%``: the mixed-radix digits of it.

A naive matmul written one thread per output element over a 1-D launch (KernelBench-style wrappers,
``torch.bmm`` ports) decodes its flat index into the output's coordinates::

    int i = blockIdx.x * blockDim.x + threadIdx.x;      // or a grid-stride loop over i
    int row = i / N;            int col = i % N;        // 2-D
    int b = i / (M * N);  int r = (i % (M * N)) / N;  int c = (i % (M * N)) % N;   // batched

Every such value is ``(i % hi) / lo`` for sizes ``lo`` and ``hi`` (``hi`` None: no modulus), a digit of
``i`` in a mixed-radix system, for every ``i >= 0`` (floor division and remainder of non-negative
integers: ``(x / a) / b == x / (a * b)``, ``(x / a) % b == (x % (a * b)) / a`` and ``(x % h) % d == x % d``
when ``d`` divides ``h``). Sizes are ``_poly`` monomials of the kernel's uniform names, so ``M * N`` and
``N * M`` are one size. ``digits`` names the column (``lo == 1``), row (``lo == C``) and batch
(``lo == R * C``) digits and the extents each ranges over, given the flat guard ``i < E``.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda, _poly
from perfagent.rewrite.recipes._poly import Poly

__all__ = ["Digit", "Digits", "digits", "quotient", "value"]

ONE: Poly = {(): 1}


@dataclass(frozen=True)
class Digit:
    """``(flat % hi) / lo`` (``hi`` None: ``flat / lo``)."""

    lo: tuple[tuple[tuple[str, ...], int], ...]
    hi: tuple[tuple[tuple[str, ...], int], ...] | None

    @staticmethod
    def of(lo: Poly, hi: Poly | None) -> Digit:
        return Digit(tuple(sorted(lo.items())), None if hi is None else tuple(sorted(hi.items())))

    @property
    def low(self) -> Poly:
        return dict(self.lo)

    @property
    def high(self) -> Poly | None:
        return None if self.hi is None else dict(self.hi)


def quotient(a: Poly, b: Poly) -> Poly | None:
    """``a / b`` for two single monomials with positive coefficients, when ``b`` divides ``a`` exactly."""
    if len(a) != 1 or len(b) != 1:
        return None
    ((ma, ca),), ((mb, cb),) = a.items(), b.items()
    if ca <= 0 or cb <= 0 or ca % cb:
        return None
    rest = list(ma)
    for atom in mb:
        if atom not in rest:
            return None
        rest.remove(atom)
    return {tuple(rest): ca // cb}


def _size(node: Node, flat: str, env: dict[str, Digit]) -> Poly | None:
    """A divisor: a product of uniform names and positive literals (no flat index, no decoded digit)."""
    if _cuda.identifiers_in(node) & ({flat} | set(env)):
        return None
    p = _poly.poly(node, {}, frozenset({flat, *env}))
    return p if p is not None and quotient(p, ONE) is not None else None


def value(node: Node, flat: str, env: dict[str, Digit]) -> Digit | None:
    """``node`` as a digit of ``flat`` (names in ``env`` are digits already), or None."""
    node = _cuda.strip(node)
    if node.type == "identifier":
        name = _cuda.text(node)
        return Digit.of(ONE, None) if name == flat else env.get(name)
    if node.type != "binary_expression":
        return None
    op = _cuda.text(node.child_by_field_name("operator") or node)
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if op not in ("/", "%") or left is None or right is None:
        return None
    inner, size = value(left, flat, env), _size(right, flat, env)
    if inner is None or size is None:
        return None
    step = _poly.mul(inner.low, size)
    if op == "/":
        return Digit.of(step, inner.high)
    high = inner.high
    if high is not None and quotient(high, step) is None:
        return None
    return Digit.of(inner.low, step)


@dataclass(frozen=True)
class Digits:
    """Which decoded names are the column, row and batch digits, and the extents (monomials)."""

    col: str
    row: str
    batch: str | None
    cols: Poly
    rows: Poly
    batches: Poly | None


def digits(found: dict[str, Digit], total: Poly) -> Digits | str:
    """The column, row and (optional) batch digits among ``found`` for the guard ``flat < total``."""
    by_low: dict[tuple[tuple[tuple[str, ...], int], ...], list[str]] = {}
    for name, d in found.items():
        by_low.setdefault(d.lo, []).append(name)
    cols_named = by_low.get(tuple(sorted(ONE.items())), [])
    if len(cols_named) != 1 or found[cols_named[0]].high is None:
        return "the flat index is not decoded into one column `i % C`"
    col = cols_named[0]
    cols = found[col].high
    assert cols is not None
    rows_named = by_low.get(tuple(sorted(cols.items())), [])
    if len(rows_named) != 1:
        return "the flat index is not decoded into one row `i / C` (or `(i % (R * C)) / C`)"
    row = rows_named[0]
    row_hi = found[row].high
    if row_hi is None:
        rows = quotient(total, cols)
        if rows is None or len(found) != 2:
            return "the flat guard's bound is not the rows times the columns"
        return Digits(col, row, None, cols, rows, None)
    rows = quotient(row_hi, cols)
    batches = quotient(total, row_hi)
    batch_named = by_low.get(tuple(sorted(row_hi.items())), [])
    if rows is None or batches is None or len(batch_named) != 1 or found[batch_named[0]].high is not None:
        return "the flat index is not decoded into batch, row and column digits covering its guard"
    if len(found) != 3:
        return "the flat index is decoded into more digits than batch, row and column"
    return Digits(col, row, batch_named[0], cols, rows, batches)
