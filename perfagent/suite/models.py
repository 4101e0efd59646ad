"""The suite's records: settings, one result row per entry (``results.jsonl``) and the summary."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from profilers.model import Frozen
from profilers.settings import TIMEOUTS, Device

SUITE_SCHEMA_VERSION = 1

Job = Literal["diagnose", "verify", "bench", "optimize"]
JOBS: tuple[Job, ...] = ("diagnose", "verify", "bench", "optimize")

FailureCause = Literal[
    "bad-input", "profiler", "incorrect", "inconclusive", "timeout", "crash", "llm", "perfagent-error"
]
"""Why an entry (or one of its jobs) did not produce its figures."""


class SuiteSettings(Frozen):
    """How every entry is run (per-entry ``options`` override the matching fields)."""

    jobs: list[Job]
    device: Device = "auto"
    backend: str = "recipes"
    iterations: int = 3
    runs: int = 50
    seeds: int = 3
    entry_timeout_s: float = TIMEOUTS.suite_entry_s
    """Wall-clock limit of one entry (all its jobs), s; the worker process is killed past it."""
    cooldown_s: float = 0.0
    """Pause after an entry's timing jobs, s (lets clocks and temperature settle)."""
    profiler: str = "auto"


class JobOutcome(Frozen):
    """One job of one entry."""

    job: Job
    ok: bool
    elapsed_s: float
    failure: FailureCause | None = None
    message: str = ""
    """One line: the failure's cause, or a short summary of the result."""


class GpuClock(Frozen):
    """SM clock of the entry's GPU, read with nvidia-smi around its measurements."""

    before_mhz: float | None = None
    after_mhz: float | None = None
    max_mhz: float | None = None
    throttled: bool = False
    """The clock after was more than 10 % below the clock before (or below 80 % of max)."""
    reasons: str | None = None
    """nvidia-smi's clocks_event_reasons.active bit field, as reported."""


class EntryResult(Frozen):
    """One row of ``results.jsonl``: everything measured for one entry, and where."""

    schema_version: int = SUITE_SCHEMA_VERSION
    name: str
    kind: str
    target: str
    candidate: str | None = None
    jobs: list[JobOutcome] = Field(default_factory=list)
    correct: bool | None = None
    """verify: the candidate passed (None: not verified)."""
    verdict: str | None = None
    """verify: pass | fail | inconclusive."""
    baseline_s: float | None = None
    """bench: the target's median time, s."""
    candidate_s: float | None = None
    speedup: float | None = None
    """bench: baseline / candidate median (or optimize: best accepted candidate's speed-up)."""
    speedup_over_compile: float | None = None
    """KernelBench: the speed-up over torch.compile(Model) (bench: measured beside; optimize: the best's)."""
    significant: bool | None = None
    noise_threshold: float | None = None
    """bench: relative change below which two medians are the same (fraction)."""
    spread: float | None = None
    """bench: interquartile range / median of the entry's time (the candidate's, else the target's)
    series (fraction): the run-to-run noise ``compare`` allows for, with ``noise_threshold``."""
    flags: list[str] = Field(default_factory=list)
    """Plausibility flags (bench/optimize) and timing hygiene (e.g. 'sm-clock-throttled')."""
    top_finding: str | None = None
    """diagnose: the first kernel's top finding ('category: title')."""
    pct_of_roofline_before: float | None = None
    pct_of_roofline_after: float | None = None
    transforms_won: list[str] = Field(default_factory=list)
    """optimize: transforms of accepted candidates."""
    optimize_speedup: float | None = None
    optimize_run: str | None = None
    """optimize: the run folder."""
    optimize_stages: dict[str, float] = Field(default_factory=dict)
    """optimize: the run's wall seconds by stage (``OptimizeResult.cost.stages``; empty: not recorded)."""
    failure: FailureCause | None = None
    """The first job failure's cause (None when every job ran)."""
    skipped: dict[str, str] = Field(default_factory=dict)
    """Requested jobs that do not apply to this entry → why (e.g. verify without a candidate)."""
    host: str = ""
    gpu: str | None = None
    gpu_index: str | None = None
    """CUDA_VISIBLE_DEVICES of the worker that ran it."""
    driver: str | None = None
    clock: GpuClock | None = None
    versions: dict[str, str] = Field(default_factory=dict)
    worker: str = ""
    """Which worker (local slot or Ray actor) ran it."""
    elapsed_s: float = 0.0
    finished: str = ""
    """ISO time the row was written."""


class SuiteSummary(Frozen):
    """``summary.json``: the suite's figures, computed from ``results.jsonl`` alone."""

    schema_version: int = SUITE_SCHEMA_VERSION
    total: int
    correct: int
    """Entries whose candidate passed verification."""
    verified: int
    """Entries with a verification verdict."""
    correct_rate: float | None = None
    fast_p: dict[str, float] = Field(default_factory=dict)
    """p → fraction of ALL entries that are correct and faster than p× (KernelBench's fast_p)."""
    fast_p_compile: dict[str, float] = Field(default_factory=dict)
    """fast_p against torch.compile(Model): p → fraction of ALL entries correct and faster than p× over it
    (empty: no entry had a torch.compile baseline)."""
    geomean_speedup: float | None = None
    """Geometric mean of the measured speed-ups of correct entries."""
    speedups: dict[str, float] = Field(default_factory=dict)
    """Entry name → measured speed-up (what the distribution plot shows)."""
    mean_pct_of_roofline_before: float | None = None
    mean_pct_of_roofline_after: float | None = None
    transforms_won: dict[str, int] = Field(default_factory=dict)
    """Transform → entries where it was accepted, most first."""
    failures: dict[str, int] = Field(default_factory=dict)
    """Failure cause → entries."""
    flagged: dict[str, list[str]] = Field(default_factory=dict)
    """Entry → its plausibility/hygiene flags, for review."""
    skipped: dict[str, int] = Field(default_factory=dict)
    """Why a job was skipped (this machine cannot do it, or it does not apply) → entries; skipped work
    counts in no rate."""
    partial: bool = False
    """The run was interrupted: only the entries with a row are summarised (``--resume`` finishes it)."""
    notes: list[str] = Field(default_factory=list)
    """What the run noticed on its way (e.g. a torn last row of results.jsonl that was dropped)."""
    wall_s: float | None = None
    """Wall time of the suite run (first start to last finish), s."""
    workers: int | None = None
    executor: str | None = None
