"""SI formatting helpers: one table per helper."""

from __future__ import annotations

import math

import pytest

from perfagent.render.units import (
    NA,
    fmt_bandwidth,
    fmt_bytes,
    fmt_count,
    fmt_flop,
    fmt_flops,
    fmt_hz,
    fmt_number,
    fmt_pct,
    fmt_quantity,
    fmt_seconds,
    fmt_share,
    fmt_speedup,
    sig,
    split_quantity,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (48.2e-6, "48.2 µs"),
        (41.79e-6, "41.8 µs"),
        (4.82e-3, "4.82 ms"),
        (1.1e-3, "1.1 ms"),
        (999.6e-6, "1 ms"),  # rounding carries into the next prefix
        (850e-9, "850 ns"),
        (0.3e-9, "0.3 ns"),
        (2.5, "2.5 s"),
        (125.0, "125 s"),
        (0.0, "0 s"),
        (-6.41e-6, "-6.41 µs"),
        (None, NA),
        (math.nan, NA),
    ],
)
def test_seconds(value: float | None, expected: str) -> None:
    assert fmt_seconds(value) == expected


@pytest.mark.parametrize(
    ("value", "binary", "expected"),
    [
        (512, False, "512 B"),
        (1.4e8, False, "140 MB"),
        (80e9, False, "80 GB"),
        (1500, False, "1.5 KB"),
        (49152, True, "48 KiB"),
        (50 * 2**20, True, "50 MiB"),
        (0, True, "0 B"),
        (None, False, NA),
    ],
)
def test_bytes(value: float | None, binary: bool, expected: str) -> None:
    assert fmt_bytes(value, binary=binary) == expected


@pytest.mark.parametrize(
    ("helper", "value", "expected"),
    [
        (fmt_bandwidth, 2.9e12, "2.9 TB/s"),
        (fmt_bandwidth, 3.35e12, "3.35 TB/s"),
        (fmt_bandwidth, 8.5e11, "850 GB/s"),
        (fmt_bandwidth, None, NA),
        (fmt_flops, 6.69e13, "66.9 TFLOP/s"),
        (fmt_flops, 9.89e14, "989 TFLOP/s"),
        (fmt_flops, 4.36e12, "4.36 TFLOP/s"),
        (fmt_flops, 7.5e11, "750 GFLOP/s"),
        (fmt_flop, 2 * 2048.0**3, "17.2 GFLOP"),
        (fmt_hz, 1.59e9, "1.59 GHz"),
        (fmt_hz, 877e6, "877 MHz"),
    ],
)
def test_rates(helper: object, value: float | None, expected: str) -> None:
    assert callable(helper)
    assert helper(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(86.666, "86.7 %"), (100.0, "100 %"), (99.96, "100 %"), (4.5, "4.5 %"), (0.05, "0.05 %"), (None, NA)],
)
def test_pct(value: float | None, expected: str) -> None:
    assert fmt_pct(value) == expected


def test_share_speedup_count_number() -> None:
    assert fmt_share(0.867) == "86.7 %"
    assert fmt_share(None) == NA
    assert fmt_speedup(1.8) == "1.8×"
    assert fmt_speedup(1.234) == "1.23×"
    assert fmt_speedup(None) == NA
    assert fmt_count(524288) == "524,288"
    assert fmt_count(1.5e9) == "1.5 G"
    assert fmt_count(None) == NA
    assert fmt_number(1024) == "1024"
    assert fmt_number(12345) == "12.3 k"
    assert fmt_number(0.000123) == "0.000123"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.0, "0"),
        (1.0, "1"),
        (2.9, "2.9"),
        (2.96, "2.96"),
        (2.999, "3"),
        (123.4, "123"),
        (1024.0, "1024"),
        (-0.5, "-0.5"),
    ],
)
def test_sig(value: float, expected: str) -> None:
    assert sig(value) == expected


@pytest.mark.parametrize(
    ("value", "unit", "expected"),
    [
        (48.2e-6, "s", "48.2 µs"),
        (2.9e12, "B/s", "2.9 TB/s"),
        (64.0, "B", "64 B"),
        (8.0, "B/sector", "8 B/sector"),  # not a bare SI unit: kept as given
        (86.7, "%", "86.7 %"),
        (1.8, "x", "1.8×"),
        (128.0, "", "128"),
        ("registers", "", "registers"),
        (None, "s", NA),
    ],
)
def test_quantity(value: float | str | None, unit: str, expected: str) -> None:
    assert fmt_quantity(value, unit) == expected


def test_threshold_uses_the_value_prefix() -> None:
    assert split_quantity(48.2e-6, "s") == ("48.2", "µs")
    assert split_quantity(2e-3, "s", scale_like=48.2e-6) == ("2000", "µs")
    assert split_quantity(2.68e12, "B/s", scale_like=2.9e12) == ("2.68", "TB/s")
