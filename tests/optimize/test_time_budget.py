"""``--time-budget``: a run stops planning before an iteration that would not fit, and a winner no later
iteration can plan from is not re-profiled (the GPU simulated: ``simulated_gpu``)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import pytest

import perfagent
from perfagent.commands.optimize import OptimizeCommand
from perfagent.commands.settings_args import settings_from_args
from perfagent.optimize.time_budget import TimeBudget
from perfagent.records import RunRecord
from profilers.core_errors import BadInput
from tests.optimize.helpers import TRANSPOSE, copy_example


def _optimize(tmp_path: Path, **options: Any) -> RunRecord:
    folder = copy_example(TRANSPOSE, tmp_path)
    options.setdefault("transform", "smem-padding")
    return perfagent.optimize(folder / "slow.cu", backend="recipes", out=tmp_path / "run", **options)


def _profiled(knobs: dict[str, Any]) -> list[str]:
    return [name for what, name in knobs["calls"] if what == "profile" and name == "source.cu"]


def test_no_budget_and_a_budget_that_fits_change_nothing() -> None:
    assert TimeBudget(0.0, spent_before_s=1e6).why_stop([1e6]) is None
    assert TimeBudget(0.0, spent_before_s=1e6).why_not_reprofile([1e6]) is None
    fits = TimeBudget(60.0, spent_before_s=15.0)
    assert fits.why_stop([20.0]) is None  # 15 + 20 <= 60
    assert fits.why_stop([]) is None  # the first iteration always runs


def test_the_next_iteration_is_estimated_by_the_longest_finished_one() -> None:
    budget = TimeBudget(60.0, spent_before_s=45.0, started=time.monotonic())
    assert budget.why_stop([10.0, 14.0]) is None
    why = budget.why_stop([10.0, 16.0])  # 45 + 16 > 60
    assert why is not None and why.startswith("time budget spent: 45.") and "~16.0 s" in why


def test_a_running_iteration_counts_as_long_as_the_next_one() -> None:
    budget = TimeBudget(60.0, spent_before_s=50.0, started=time.monotonic())
    budget.iteration_started = time.monotonic() - 11.0  # this iteration has run 11 s: the next would too
    why = budget.why_not_reprofile([])
    assert why is not None and "no later iteration" in why and "--profile-best" in why
    budget.iteration_started = time.monotonic()
    assert budget.why_not_reprofile([5.0]) is None


def test_a_run_over_its_budget_stops_after_the_first_iteration_and_says_so(
    tmp_path: Path, simulated_gpu: dict[str, Any]
) -> None:
    # a second transform keeps the plan from running out: only the budget stops the run
    record = _optimize(
        tmp_path, iterations=3, time_budget_s=0.001, transforms=["smem-padding", "restrict-pointers"]
    )
    result = record.optimize
    assert result is not None and result.iterations_used == 1
    assert result.stopped.startswith("time budget spent")
    c1 = record.candidates[0]
    assert c1.accepted and "time budget leaves no later iteration" in c1.reason
    assert _profiled(simulated_gpu) == []
    assert result.cost is not None and result.cost.reprofiles_skipped == 1


def test_a_budget_with_room_reprofiles_the_winner_a_later_iteration_plans_from(
    tmp_path: Path, simulated_gpu: dict[str, Any]
) -> None:
    record = _optimize(tmp_path, iterations=2, time_budget_s=3600)
    assert record.candidates[0].accepted and record.candidates[0].metric_after is not None
    assert _profiled(simulated_gpu) == ["source.cu"]
    assert record.optimize is not None and not record.optimize.stopped.startswith("time budget")


def test_the_flag_reaches_the_settings() -> None:
    parser = argparse.ArgumentParser()
    OptimizeCommand().prepare_parser(parser)
    assert settings_from_args(parser.parse_args(["k.cu", "--time-budget", "60"])).time_budget_s == 60.0
    assert settings_from_args(parser.parse_args(["k.cu"])).time_budget_s == 0.0
    with pytest.raises((SystemExit, BadInput)):  # a negative budget is bad usage
        settings_from_args(parser.parse_args(["k.cu", "--time-budget", "-1"]))
