"""Timing results: pydantic, frozen, ``extra="forbid"``. Times in seconds, rates per second.

The worker's raw ``TimingSamples`` are part of the wire format (``perfagent.sandbox.wire``), re-exported here.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from perfagent.sandbox.wire import Timer, TimingSamples
from profilers.model import Frozen

SCHEMA_VERSION = 1
__all__ = [
    "SCHEMA_VERSION",
    "BenchEntry",
    "BenchResult",
    "Comparison",
    "CompileBaseline",
    "PlausibilityFlag",
    "RooflineEstimate",
    "Timer",
    "TimingSamples",
    "TimingStats",
]
PlausibilityFlag = Literal[
    "below-speed-of-light",
    "above-peak-bandwidth",
    "above-peak-flops",
    "excessive-speedup",
    "work-after-end-event",
    "cpu-timing",
    "no-roofline",
]


class TimingStats(Frozen):
    """Summary of one series of timed calls."""

    label: str
    """Which series: 'baseline', 'baseline (repeat)', 'candidate'."""
    n: int
    """Timed calls."""
    median_s: float
    """Median time per call, s."""
    p25_s: float
    """25th percentile, s."""
    p75_s: float
    """75th percentile, s."""
    iqr_s: float
    """Interquartile range p75 - p25, s."""
    mean_s: float
    min_s: float
    max_s: float
    samples_s: list[float] = Field(default_factory=list)
    """Every timed call, s, in run order."""


class RooflineEstimate(Frozen):
    """Achieved rates of one workload and how close they are to the device's speed of light."""

    flops: float | None = None
    """FLOP per call."""
    bytes: float | None = None
    """Minimum DRAM bytes per call, byte."""
    achieved_bytes_per_s: float | None = None
    """bytes / median time, byte/s."""
    achieved_flops_per_s: float | None = None
    """flops / median time, FLOP/s."""
    sol_time_s: float | None = None
    """Speed-of-light time max(flops / peak FLOP/s, bytes / peak bandwidth), s."""
    pct_of_roofline: float | None = None
    """sol_time / median time, %."""
    bound: Literal["memory", "compute"] | None = None
    """Which term sets the speed of light."""
    peak_bytes_per_s: float | None = None
    peak_flops_per_s: float | None = None
    peaks_source: str | None = None
    """Where the peaks came from ('knowledge:h100-sxm', 'given')."""


class BenchEntry(Frozen):
    """One timed workload."""

    workload: str
    timing: TimingStats
    roofline: RooflineEstimate | None = None


class Comparison(Frozen):
    """Candidate against baseline, with the noise that bounds what counts as a change."""

    speedup: float
    """baseline median / candidate median (>1 = candidate faster)."""
    noise_threshold: float
    """Relative change below which results are noise (fraction, e.g. 0.02 = 2 %)."""
    baseline_drift: float
    """|median(baseline) / median(baseline repeat) - 1|: how much two runs of the same code differ."""
    significant: bool
    """True when |speedup - 1| exceeds the noise threshold and the interquartile ranges do not overlap."""
    verdict: Literal["faster", "slower", "no-change"]
    plausibility: list[PlausibilityFlag] = Field(default_factory=list)
    """Reasons to review the result by hand (faster than the roofline, > 10x, ...)."""


class CompileBaseline(Frozen):
    """The reference under ``torch.compile(Model)`` (default mode), timed against eager in its own run
    (compile time excluded: it happens in the warm-up calls). ``perfagent.timing.compiled``."""

    mode: str = "default"
    """The ``torch.compile`` mode."""
    time_s: float | None = None
    """Median time per call of the compiled reference, s (None: unavailable)."""
    eager_time_s: float | None = None
    """Median time of the eager reference in the same run, s."""
    speedup_over_eager: float | None = None
    """Eager time / compiled time in that run (>1: torch.compile is faster than eager)."""
    timer: str | None = None
    device: str | None = None
    unavailable: str | None = None
    """Why there is no compiled time (no C compiler for inductor on a CPU, a failing compile, ...)."""


class BenchResult(Frozen):
    """What ``perfagent bench`` measured."""

    schema_version: int = SCHEMA_VERSION
    device: str
    device_name: str | None = None
    timer: Timer
    """cuda-events (start/end events around the call, queued behind the L2 flush) or perf_counter (CPU timing: not GPU evidence)."""
    runs: int
    """Interleaved rounds taken: each series has this many samples."""
    warmup: int
    runs_asked: int | None = None
    """The most rounds asked for (``--runs``); ``runs`` is fewer when the time budget stopped the rounds
    sooner. None in records written before the budget (they took every round asked for)."""
    timing_budget_s: float | None = None
    """Wall time the rounds could fill, s (0: no budget; None: before the budget)."""
    l2_flush_bytes: int = 0
    interleaved: bool = True
    baseline: BenchEntry
    baseline_repeat: TimingStats | None = None
    candidate: BenchEntry | None = None
    comparison: Comparison | None = None
    flags: list[PlausibilityFlag] = Field(default_factory=list)
    implausible: list[PlausibilityFlag] = Field(default_factory=list)
    """The candidate's flags no real kernel can earn (faster than its speed of light, above a peak):
    its timing FAILS (``perfagent bench`` exits 4; optimize never accepts it)."""
    notes: list[str] = Field(default_factory=list)
    environment: dict[str, str] = Field(default_factory=dict)
    elapsed_s: float = 0.0
    """Wall time of the whole benchmark, s."""
    compiled: CompileBaseline | None = None
    """KernelBench: the reference under torch.compile (None: not asked for, or not a KernelBench problem)."""
    speedup_over_compile: float | None = None
    """The candidate's speed-up over torch.compile(Model): its speed-up over eager / torch.compile's."""
