"""Nsight Compute units → SI base units.

``ncu_report`` returns each value in the unit the metric carries (``gpu__time_duration.sum`` is 41696.0
with unit ``ns``), and CSV exports carry a unit row; with ``--print-units auto`` ncu also scales
(``Kbyte``, ``Mbyte/second``, ``usecond``, ``cycle/nsecond``, ``Ghz``). The metric map's formulas assume
base units (s, byte, byte/s, hz, cycle, %), so every value passes through ``to_base_units`` first.

A unit is ``<numerator>[/<denominator>]``; each side is a known base unit with an optional SI prefix
(``K``/``k`` 1e3, ``M`` 1e6, ``G`` 1e9, ``T`` 1e12, ``m`` 1e-3, ``u``/``µ`` 1e-6, ``n`` 1e-9, ``p``
1e-12; binary ``Ki``/``Mi``/``Gi``/``Ti`` for bytes). Byte prefixes are decimal, as ncu prints them.
An unrecognised unit keeps the value unchanged and is reported so that the caller can add a note.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

_PREFIXES: dict[str, Fraction] = {
    "Ki": Fraction(1024),
    "Mi": Fraction(1024**2),
    "Gi": Fraction(1024**3),
    "Ti": Fraction(1024**4),
    "K": Fraction(10**3),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "m": Fraction(1, 10**3),
    "u": Fraction(1, 10**6),
    "µ": Fraction(1, 10**6),
    "n": Fraction(1, 10**9),
    "p": Fraction(1, 10**12),
}

# Base units ncu uses (singular and plural spellings), with the factor to the canonical base unit.
_BASES: dict[str, Fraction] = {
    "": Fraction(1),
    "1": Fraction(1),
    "%": Fraction(1),
    "s": Fraction(1),
    "sec": Fraction(1),
    "second": Fraction(1),
    "seconds": Fraction(1),
    "hz": Fraction(1),
    "Hz": Fraction(1),
    "byte": Fraction(1),
    "bytes": Fraction(1),
    "B": Fraction(1),
    "bit": Fraction(1, 8),
    "cycle": Fraction(1),
    "cycles": Fraction(1),
    "inst": Fraction(1),
    "insts": Fraction(1),
    "warp": Fraction(1),
    "warps": Fraction(1),
    "thread": Fraction(1),
    "threads": Fraction(1),
    "block": Fraction(1),
    "blocks": Fraction(1),
    "sector": Fraction(1),
    "sectors": Fraction(1),
    "request": Fraction(1),
    "requests": Fraction(1),
    "register": Fraction(1),
    "registers": Fraction(1),
    "pass": Fraction(1),
    "sample": Fraction(1),
    "samples": Fraction(1),
    "branch": Fraction(1),
    "branches": Fraction(1),
    "wavefront": Fraction(1),
    "wavefronts": Fraction(1),
    "SM": Fraction(1),
    "op": Fraction(1),
    "ops": Fraction(1),
    "flop": Fraction(1),
    "instance": Fraction(1),
}


@dataclass(frozen=True)
class Converted:
    """A value in base units."""

    value: float
    known: bool
    """False when the unit was not recognised and the value was kept unchanged."""


def _side_factor(token: str) -> Fraction | None:
    token = token.strip()
    if token in _BASES:
        return _BASES[token]
    for prefix in sorted(_PREFIXES, key=len, reverse=True):
        base = token[len(prefix) :]
        if token.startswith(prefix) and base in _BASES and base not in ("", "1", "%"):
            return _PREFIXES[prefix] * _BASES[base]
    return None


def unit_factor(unit: str | None) -> float | None:
    """The factor that turns a value in ``unit`` into base units, or None when the unit is unknown.

    Args:
        unit: the unit as ncu reports it ('ns', 'Mbyte/second', 'cycle/nsecond', '%', '').

    Returns:
        The multiplicative factor (1.0 for base units and dimensionless values).
    """
    if unit is None:
        return 1.0
    parts = unit.strip().split("/")
    if len(parts) > 2:
        return None
    numerator = _side_factor(parts[0])
    if numerator is None:
        return None
    if len(parts) == 1:
        return float(numerator)
    denominator = _side_factor(parts[1])
    if denominator is None or denominator == 0:
        return None
    return float(numerator / denominator)


def to_base_units(value: float, unit: str | None) -> Converted:
    """Convert ``value`` expressed in ``unit`` to base units.

    Args:
        value: the number as reported.
        unit: its unit (None or '' = dimensionless).

    Returns:
        The converted value; ``known=False`` (value unchanged) when the unit is not recognised.
    """
    factor = unit_factor(unit)
    if factor is None:
        return Converted(value, known=False)
    return Converted(value * factor, known=True)
