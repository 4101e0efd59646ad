"""The loop's ``Services``: the real ones by default, the ones handed in first, ``using`` for a CLI run."""

from __future__ import annotations

import dataclasses

import pytest

from perfagent.optimize import measure, reprofile
from perfagent.optimize.services import DEFAULT, Services, current, using


def _probe(device: str) -> tuple[bool, str]:
    return True, f"simulated {device}"


def test_the_default_services_are_the_real_calls() -> None:
    assert current() is DEFAULT
    assert DEFAULT.verify is measure.verify_candidate and DEFAULT.time is measure.bench_timing
    assert DEFAULT.time_batch is measure.bench_timings and DEFAULT.reprofile is reprofile.reprofile
    assert DEFAULT.probe_gpu("cpu") == (False, "cpu")  # the real probe: --device cpu never asks a GPU


def test_handed_in_services_win_over_those_in_place() -> None:
    outer, given = Services(probe_gpu=_probe), Services()
    with using(outer):
        assert current() is outer and current().probe_gpu("cuda") == (True, "simulated cuda")
        assert current(given) is given
        with using(given):
            assert current() is given
        assert current() is outer
    assert current() is DEFAULT


def test_services_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT.probe_gpu = _probe  # type: ignore[misc]
