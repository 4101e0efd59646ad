"""Timing rounds from a time budget: a slow workload gets fewer rounds than asked for, never fewer than the
minimum, and its noise threshold comes from the samples actually taken.

Real CPU timing workers (perf_counter) on two KernelBench problems: ``problem_add`` (microseconds a call)
and a slow one written here, whose call computes for at least 40 ms of wall time (a busy loop on the
clock: at least that long on a fast or a loaded CPU, so the counts below do not depend on the machine).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.timing import bench, bench_batch
from perfagent.timing.bench import build_result
from perfagent.timing.models import TimingSamples
from perfagent.timing.render import render_text
from perfagent.timing.stats import noise_threshold, rounds_for
from perfagent.workloads.model import KernelBenchModel
from profilers.core_errors import BadInput
from profilers.settings import TIMING, TimingBudget

ADD = Path(__file__).resolve().parents[1] / "verify" / "candidates" / "problem_add.py"

SLOW_PROBLEM = """import time

import torch
import torch.nn as nn

CALL_S = 0.04


class Model(nn.Module):
    def forward(self, a, w):
        out = a
        started = time.perf_counter()
        while time.perf_counter() - started < CALL_S:  # computes for at least CALL_S of wall time
            out = torch.tanh(out @ w)
        return out


def get_inputs():
    return [torch.randn(32, 32), torch.randn(32, 32) / 6]


def get_init_inputs():
    return []
"""

SLOW_SAME = SLOW_PROBLEM.replace("class Model(", "class ModelNew(")


def _slow(folder: Path) -> Path:
    path = folder / "slow_problem.py"
    path.write_text(SLOW_PROBLEM, encoding="utf-8")
    return path


def test_rounds_for_fills_the_budget_between_the_minimum_and_the_runs_asked() -> None:
    assert rounds_for(0.5, 0.001, 10, 50) == 50  # fast: every round asked for
    assert rounds_for(0.5, 0.02, 10, 50) == 25  # 25 rounds of 20 ms fill 0.5 s
    assert rounds_for(0.5, 0.5, 10, 50) == 10  # slow: never below the minimum
    assert rounds_for(0.5, 0.5, 10, 5) == 5  # ...unless fewer were asked for
    assert rounds_for(0.0, 0.5, 10, 50) == 50  # no budget: every round asked for


def test_a_slow_workload_gets_fewer_rounds_than_a_fast_one(tmp_path: Path) -> None:
    # a slow round (two calls) is >= 80 ms: 1.2 s holds at most 15 of them; problem_add's take microseconds
    budget = TimingBudget(budget_s=1.2, min_runs=5)
    slow = bench(_slow(tmp_path), device="cpu", runs=40, warmup=1, budget=budget)
    fast = bench(ADD, device="cpu", runs=40, warmup=1, budget=budget)
    assert fast.runs == 40 and fast.runs_asked == 40  # the budget never binds
    assert 5 <= slow.runs <= 15, slow.runs
    assert slow.runs_asked == 40 and slow.timing_budget_s == budget.budget_s
    assert slow.baseline.timing.n == slow.runs
    assert slow.baseline_repeat is not None and slow.baseline_repeat.n == slow.runs
    assert f"(of 40: the {budget.budget_s:g} s timing budget was filled)" in render_text(slow)


def test_never_fewer_rounds_than_the_minimum_and_the_threshold_is_from_those_samples(tmp_path: Path) -> None:
    same = tmp_path / "same.py"
    same.write_text(SLOW_SAME, encoding="utf-8")
    budget = TimingBudget(budget_s=1e-6, min_runs=4)  # a budget no round fits in
    [result] = bench_batch(_slow(tmp_path), [same], device="cpu", runs=30, warmup=1, budget=budget)
    assert result.runs == 4 and result.runs_asked == 30
    assert result.candidate is not None and result.candidate.timing.n == 4
    assert result.baseline_repeat is not None and result.comparison is not None
    threshold, _ = noise_threshold(result.baseline.timing.samples_s, result.baseline_repeat.samples_s)
    assert result.comparison.noise_threshold == threshold


def test_no_budget_takes_every_round_asked_for(tmp_path: Path) -> None:
    result = bench(_slow(tmp_path), device="cpu", runs=5, warmup=0, budget=TimingBudget(0.0, 3))
    assert result.runs == 5 and result.timing_budget_s == 0.0


def test_a_short_noisy_series_widens_the_threshold_it_is_recorded_with() -> None:
    ref = KernelBenchModel(path="/x/p.py", class_name="Model")
    quiet = [1e-3 * (1 + 0.001 * (i % 3)) for i in range(10)]
    noisy = [1e-3 * (1 + 0.2 * (i % 3)) for i in range(10)]
    samples = TimingSamples(
        baseline=quiet, baseline_repeat=noisy, candidate=quiet, timer="perf_counter", device="cpu"
    )
    r = build_result(samples, ref, None, runs=50, warmup=1, peaks=None, timing_budget_s=TIMING.budget_s)
    assert r.runs == 10 and r.runs_asked == 50 and r.timing_budget_s == TIMING.budget_s
    assert r.comparison is not None
    assert r.comparison.noise_threshold == noise_threshold(quiet, noisy)[0] > 0.05


def test_bad_budget_or_minimum_is_bad_input() -> None:
    with pytest.raises(BadInput, match="--min-runs must be at least 3"):
        bench(ADD, device="cpu", runs=5, budget=TimingBudget(0.5, 2))
    with pytest.raises(BadInput, match="--timing-budget must be >= 0"):
        bench(ADD, device="cpu", runs=5, budget=TimingBudget(-1.0, 10))


def test_an_optimize_candidate_records_the_rounds_its_timing_took() -> None:
    from perfagent.optimize.evaluate import _timing_fields
    from perfagent.optimize.measure import timing_from_bench

    ref = KernelBenchModel(path="/x/p.py", class_name="Model")
    base = [1e-3 * (1 + 0.01 * (i % 3)) for i in range(12)]
    samples = TimingSamples(
        baseline=base,
        baseline_repeat=base,
        candidate=[t / 2 for t in base],
        timer="perf_counter",
        device="cpu",
    )
    r = build_result(samples, ref, None, runs=50, warmup=1, peaks=None, timing_budget_s=0.5)
    assert _timing_fields(timing_from_bench(r))["timing_rounds"] == 12
