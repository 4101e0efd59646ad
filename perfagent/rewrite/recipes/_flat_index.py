"""Index expressions of a flat thread index as mixed-radix coordinates: the algebra of ``/`` and ``%``.

A generic permute (TensorFlow's ``ShuffleInTensor3Simple``, PyTorch's ``OffsetCalculator`` form) gives
each thread a flat index ``o`` and peels it: ``c2 = o % e2; o /= e2; c1 = o % e1; c0 = o / e1``, often
through local arrays indexed by template arguments. ``Lin`` is a value of that computation: a sum of
*coordinate* terms with size coefficients (affine forms of the kernel's integer arguments, ``_affine``).
A coordinate is ``("q", exts)``: ``o / (exts[0] * exts[1] * ...)`` (``("q", ())`` is ``o`` itself),
or ``("d", exts, e)``: that quotient ``% e``. Sizes are the constant term ``()``.

``chain`` then names the mixed-radix system every term belongs to (the longest run of divisions), and
``expand`` rewrites each quotient as its digits: ``o / e2 = c1 + e1 * c0`` exactly, for every ``o >= 0``
(the outermost digit, the last quotient, is not reduced, so no extent is assumed for it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from perfagent.rewrite.recipes import _affine
from perfagent.rewrite.recipes._affine import Form, FormDict

FrozenForm = tuple[tuple[tuple[str, ...], int], ...]
Coord = tuple[Any, ...]  # ("q", exts) | ("d", exts, e); () is the size (constant) term


def freeze(form: Form) -> FrozenForm:
    return tuple(sorted(form.items()))


def thaw(form: FrozenForm) -> FormDict:
    return dict(form)


@dataclass(frozen=True)
class Lin:
    """A sum of coordinate terms with size coefficients (module docstring)."""

    terms: tuple[tuple[Coord, FrozenForm], ...]

    @staticmethod
    def of(mapping: dict[Coord, FormDict]) -> Lin:
        return Lin(tuple(sorted((k, freeze(v)) for k, v in mapping.items() if v)))

    @staticmethod
    def size(form: Form) -> Lin:
        return Lin.of({(): dict(form)})

    @staticmethod
    def flat() -> Lin:
        return Lin.of({("q", ()): _affine.const(1)})

    def as_dict(self) -> dict[Coord, FormDict]:
        return {k: thaw(v) for k, v in self.terms}

    def size_form(self) -> FormDict | None:
        """The form of a pure size (no coordinate term), else None."""
        d = self.as_dict()
        return d.get((), {}) if set(d) <= {()} else None

    def single(self) -> Coord | None:
        """The coordinate of ``1 * coordinate`` (nothing else), else None."""
        d = self.as_dict()
        if len(d) == 1:
            ((k, v),) = d.items()
            if k != () and v == _affine.const(1):
                return k
        return None


def combine(a: Lin, b: Lin, sign: int = 1) -> Lin:
    out = a.as_dict()
    for k, v in b.as_dict().items():
        out[k] = _affine.add(out.get(k, {}), _affine.scale(v, sign))
    return Lin.of(out)


def times(a: Lin, b: Lin) -> Lin | None:
    """``a * b`` when one side is a size and every product stays affine (None otherwise)."""
    size, other = (a.size_form(), b) if a.size_form() is not None else (b.size_form(), a)
    if size is None:
        return None
    out = {}
    for k, v in other.as_dict().items():
        p = _affine.mul(v, size)
        if p is None:
            return None
        out[k] = p
    return Lin.of(out)


def divide(a: Lin, b: Lin, op: str) -> Lin | str:
    """``a / b`` or ``a % b`` for a quotient of the flat index by a one-name size (why not otherwise)."""
    coord, extent = a.single(), b.size_form()
    if extent is None or len(extent) != 1 or next(iter(extent.values())) != 1:
        return "a divisor that is not one size"
    if coord is None or coord[0] != "q":
        return "a division of something other than the flat index (or its quotient)"
    exts = coord[1]
    if op == "%":
        return Lin.of({("d", exts, freeze(extent)): _affine.const(1)})
    return Lin.of({("q", (*exts, freeze(extent))): _affine.const(1)})


def chain(values: list[Lin]) -> tuple[FrozenForm, ...] | str:
    """The extents divided by, innermost first, that every coordinate term of ``values`` belongs to."""
    runs = [k[1] if k[0] == "q" else (*k[1], k[2]) for value in values for k in value.as_dict() if k]
    longest = max(runs, key=len, default=())
    for run in runs:
        if tuple(longest[: len(run)]) != tuple(run):
            return "two different decompositions of the flat index"
    return tuple(longest)


def expand(value: Lin, exts: tuple[FrozenForm, ...]) -> dict[int, FormDict] | None:
    """``value`` over the digits of ``exts``: digit ``k < len(exts)`` is ``("d", exts[:k], exts[k])``,
    digit ``len(exts)`` the outermost quotient; key -1 is the size term. None: a product left the forms."""
    out: dict[int, FormDict] = {}

    def put(k: int, form: FormDict | None) -> bool:
        if form is None:
            return False
        out[k] = _affine.add(out.get(k, {}), form)
        return True

    for coord, coeff in value.as_dict().items():
        if coord == ():
            put(-1, coeff)
        elif coord[0] == "d":
            put(len(coord[1]), coeff)
        else:
            start = len(coord[1])
            scale: FormDict | None = _affine.const(1)
            for j in range(start, len(exts) + 1):
                if scale is None or not put(j, _affine.mul(coeff, scale)):
                    return None
                if j < len(exts):
                    scale = _affine.mul(scale, thaw(exts[j]))
    return {k: v for k, v in out.items() if v}


def stride(exts: tuple[FrozenForm, ...], k: int) -> FormDict | None:
    """The product of the extents inside digit ``k`` (its stride in the flat index)."""
    out: FormDict | None = _affine.const(1)
    for e in exts[:k]:
        out = _affine.mul(out, thaw(e)) if out is not None else None
    return out
