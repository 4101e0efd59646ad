"""Robust aggregation of repeated dispatches: warm-up and gross outliers are dropped and said.

Inputs here are plain duration lists (ns) exercising the rules; the real-data case (MI300A trace) is in
test_rocprof_fixtures.py.
"""

from __future__ import annotations

from profilers.rocprof.dispatch import GROSS_RATIO, WARMUP_RATIO, drop_note, format_ns, split_outliers


def test_first_dispatch_700x_slower_is_dropped() -> None:
    durations = [700e6, 1.00e6, 1.01e6, 0.99e6, 1.00e6]
    split = split_outliers(durations)
    assert split.dropped == [0] and split.warmup == [0]
    assert split.kept == [1, 2, 3, 4]
    assert drop_note("saxpy", durations, split) == (
        "saxpy: dropped 1 warm-up dispatch of 5 (first took 700 ms vs median 1 ms of the rest)"
    )


def test_two_dispatches_only_a_gross_first_one_goes() -> None:
    assert split_outliers([700e6, 1e6]).dropped == [0]
    assert split_outliers([1.5e6, 1e6]).dropped == []  # 1.5x of one sample is not evidence


def test_first_must_be_slower_than_every_later_dispatch() -> None:
    # 1.3x the median of the rest, but one later dispatch is slower still: noise, not warm-up.
    assert split_outliers([130.0, 100.0, 100.0, 140.0, 100.0]).dropped == []


def test_several_leading_warmups() -> None:
    split = split_outliers([10.0, 9.0, 8.0, 7.0, 7.0, 7.0, 7.0])
    assert split.warmup == [0, 1]  # 8 is not > 1.25 x 7
    assert drop_note("k", [10.0, 9.0, 8.0, 7.0, 7.0, 7.0, 7.0], split) == (
        "k: dropped 2 warm-up dispatches of 7 (first took 10 ns vs median 7 ns of the rest)"
    )


def test_gross_outlier_in_the_middle() -> None:
    durations = [5.0, 5.0, 5.0, 500.0, 5.0]
    split = split_outliers(durations)
    assert split.dropped == [3] and split.warmup == []
    note = drop_note("k", durations, split)
    assert (
        note
        == f"k: dropped 1 outlier dispatch of 5 slower than {GROSS_RATIO:g}x the median (slowest took 500 ns)"
    )


def test_never_more_than_a_minority_is_dropped() -> None:
    split = split_outliers([1000.0, 900.0, 800.0, 1.0, 1.0])
    assert len(split.dropped) <= (5 - 1) // 2


def test_untimed_dispatches_are_kept_and_ignored() -> None:
    split = split_outliers([None, 8292.0, 5528.0, 5488.0])
    assert split.dropped == [1] and split.kept == [0, 2, 3]


def test_single_or_steady_dispatches_stay() -> None:
    assert split_outliers([5.0]).dropped == []
    assert split_outliers([100.0, 101.0, 99.0, 100.0]).dropped == []
    assert WARMUP_RATIO == 1.25


def test_format_ns() -> None:
    assert format_ns(8292) == "8.29 µs"
    assert format_ns(700e6) == "700 ms"
    assert format_ns(412) == "412 ns"
    assert format_ns(2.5e9) == "2.5 s"
