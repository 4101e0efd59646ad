"""Human-readable numbers for every renderer: SI prefixes, three significant figures, ``n/a`` for None.

All renderers (text, Markdown, HTML, the roofline chart, the TUI) format numbers through these helpers
so that a value reads the same everywhere. Units follow the canonical model (``profilers.model``):
seconds, bytes, byte/s, FLOP, FLOP/s, hertz, and percent where a name says ``_pct``. Byte multiples
are decimal (1 KB = 1000 B) unless ``binary=True`` asks for KiB/MiB (used for on-chip capacities such
as shared memory, which hardware documents in powers of two).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = [
    "NA",
    "fmt_bandwidth",
    "fmt_bytes",
    "fmt_count",
    "fmt_flop",
    "fmt_flops",
    "fmt_hz",
    "fmt_number",
    "fmt_pct",
    "fmt_quantity",
    "fmt_seconds",
    "fmt_share",
    "fmt_speedup",
    "sig",
    "split_quantity",
]

NA = "n/a"
"""How every helper shows a missing value."""

_Steps = Sequence[tuple[float, str]]
"""(factor, label) pairs, largest factor first; the last one is used for anything smaller."""

_TIME: _Steps = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))
_BYTES: _Steps = ((1e15, "PB"), (1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "KB"), (1.0, "B"))
_BYTES_BIN: _Steps = ((2.0**40, "TiB"), (2.0**30, "GiB"), (2.0**20, "MiB"), (2.0**10, "KiB"), (1.0, "B"))
_BANDWIDTH: _Steps = ((1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "KB/s"), (1.0, "B/s"))
_FLOPS: _Steps = ((1e15, "PFLOP/s"), (1e12, "TFLOP/s"), (1e9, "GFLOP/s"), (1e6, "MFLOP/s"), (1.0, "FLOP/s"))
_FLOP: _Steps = (
    (1e15, "PFLOP"),
    (1e12, "TFLOP"),
    (1e9, "GFLOP"),
    (1e6, "MFLOP"),
    (1e3, "kFLOP"),
    (1.0, "FLOP"),
)
_HZ: _Steps = ((1e9, "GHz"), (1e6, "MHz"), (1e3, "kHz"), (1.0, "Hz"))
_PLAIN: _Steps = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))

# Unit spellings (lower-cased) that scale with SI prefixes, mapped to their prefix ladder.
_FAMILIES: dict[str, _Steps] = {
    "s": _TIME,
    "sec": _TIME,
    "second": _TIME,
    "seconds": _TIME,
    "b": _BYTES,
    "byte": _BYTES,
    "bytes": _BYTES,
    "b/s": _BANDWIDTH,
    "byte/s": _BANDWIDTH,
    "bytes/s": _BANDWIDTH,
    "flop/s": _FLOPS,
    "flops/s": _FLOPS,
    "flop": _FLOP,
    "flops": _FLOP,
    "hz": _HZ,
}
_PERCENT = {"%", "pct", "percent"}


def sig(x: float, digits: int = 3) -> str:
    """``x`` rounded to ``digits`` significant figures, trailing zeros dropped, never in e-notation.

    Integers with more digits than ``digits`` keep them (``sig(1024) == "1024"``).
    """
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    if x == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(x)))
    decimals = max(0, digits - 1 - magnitude)
    text = f"{x:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _pick(x: float, steps: _Steps) -> tuple[float, str]:
    """The (factor, label) that shows ``x`` with a mantissa in [1, 1000) after rounding."""
    rounded = abs(float(f"{x:.3g}"))
    for factor, label in steps:
        if rounded >= factor:
            return factor, label
    return steps[-1]


def _si(x: float | None, steps: _Steps) -> str:
    if x is None or math.isnan(x):
        return NA
    if math.isinf(x) or x == 0:
        unit = next(label for factor, label in steps if factor == 1.0)
        return f"{sig(x)} {unit}".rstrip()
    factor, label = _pick(x, steps)
    return f"{sig(x / factor)} {label}".rstrip()


def fmt_seconds(s: float | None) -> str:
    """Seconds as ns/µs/ms/s: ``48.2 µs``."""
    return _si(s, _TIME)


def fmt_bytes(b: float | None, *, binary: bool = False) -> str:
    """Bytes as B/KB/MB/GB/TB (decimal) or B/KiB/MiB/GiB (``binary=True``)."""
    return _si(b, _BYTES_BIN if binary else _BYTES)


def fmt_bandwidth(bps: float | None) -> str:
    """Byte/s as GB/s, TB/s, ...: ``2.9 TB/s``."""
    return _si(bps, _BANDWIDTH)


def fmt_flops(fps: float | None) -> str:
    """FLOP/s as GFLOP/s, TFLOP/s, ...: ``67 TFLOP/s``."""
    return _si(fps, _FLOPS)


def fmt_flop(n: float | None) -> str:
    """A FLOP count as MFLOP, GFLOP, ...: ``17.2 GFLOP``."""
    return _si(n, _FLOP)


def fmt_hz(hz: float | None) -> str:
    """Hertz as MHz/GHz: ``1.98 GHz``."""
    return _si(hz, _HZ)


def fmt_pct(pct: float | None) -> str:
    """A percentage (already ×100): ``86.7 %``."""
    if pct is None or math.isnan(pct):
        return NA
    return f"{sig(pct)} %"


def fmt_share(fraction: float | None) -> str:
    """A fraction in 0..1 shown as a percentage: ``0.867 -> 86.7 %``."""
    if fraction is None or math.isnan(fraction):
        return NA
    return fmt_pct(fraction * 100.0)


def fmt_speedup(x: float | None) -> str:
    """A speed-up factor: ``1.8×``."""
    if x is None or math.isnan(x):
        return NA
    return f"{sig(x)}×"


def fmt_count(n: float | None) -> str:
    """A count: exact with thousands separators below a million (``524,288``), else ``1.5 G``."""
    if n is None or math.isnan(n):
        return NA
    if math.isfinite(n) and float(n).is_integer() and abs(n) < 1e6:
        return f"{int(n):,}"
    return fmt_number(n)


def fmt_number(x: float | None) -> str:
    """A plain number: three significant figures, k/M/G/T suffixes from 10 000 up."""
    if x is None or math.isnan(x):
        return NA
    if math.isinf(x) or abs(x) < 1e4:
        return sig(x)
    return _si(x, _PLAIN)


def _family(unit: str) -> _Steps | None:
    return _FAMILIES.get(unit.strip().lower())


def fmt_quantity(value: float | str | None, unit: str = "") -> str:
    """A value with its unit, SI-scaled when the unit is one of ours: ``(4.82e-3, "s") -> "4.82 ms"``.

    Strings pass through; None is ``n/a``; unknown units are appended as given (``8 B/sector``
    keeps its unit because only the bare SI spellings scale).
    """
    number, shown = split_quantity(value, unit)
    if number == NA or not shown:
        return number
    return f"{number}{shown}" if shown == "×" else f"{number} {shown}"


def split_quantity(
    value: float | str | None, unit: str = "", *, scale_like: float | None = None
) -> tuple[str, str]:
    """``value`` as (number text, unit text), scaled to a readable SI prefix.

    Args:
        value: the number (or a string, which passes through unchanged, or None -> ``n/a``).
        unit: the canonical unit ('s', 'B', 'B/s', 'FLOP/s', 'FLOP', 'Hz', '%', or anything else).
        scale_like: pick the prefix from this number instead of ``value``, so that a threshold
            shows in the same prefix as the measured value it is compared with.

    Returns:
        The number and the unit to show next to it (``("48.2", "µs")``).
    """
    if isinstance(value, str):
        return value, unit
    if value is None or math.isnan(value):
        return NA, unit
    steps = _family(unit)
    if steps is not None and math.isfinite(value) and value != 0:
        basis = value if scale_like is None or math.isnan(scale_like) or scale_like == 0 else scale_like
        factor, label = _pick(basis, steps)
        return sig(value / factor), label
    if unit.strip().lower() in _PERCENT:
        return sig(value), "%"
    if unit.strip().lower() in ("x", "×"):
        return sig(value), "×"
    return fmt_number(value), unit
