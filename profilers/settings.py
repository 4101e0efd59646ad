"""The settings vocabulary every layer shares, spelled once: where candidate code runs (``Device``) and how
long each kind of step may take (``Timeouts``, with their defaults).

``OptimizeSettings`` (``perfagent.optimize.settings``) builds its ``--device`` and timeout options on these;
the other commands' flags, the MCP tools, ``verify``/``bench``, the worker request and the profilers take
their choices and defaults from here too, so a default is changed in one place. The module sits at the
bottom of perfagent's layers, beside the core types, so that the sandbox and the profilers can read it, and
imports nothing (no pydantic either): the CLI reads its defaults while it parses, before any command runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

__all__ = [
    "DEVICES",
    "RESOLVED_DEVICES",
    "TIMEOUTS",
    "TIMING",
    "Device",
    "ResolvedDevice",
    "TimingBudget",
    "Timeouts",
]

Device = Literal["auto", "cpu", "cuda"]
"""Where candidate code runs, as asked: auto (a CUDA GPU when one is usable, else the CPU), cpu, or cuda (a
CUDA GPU, or the run fails with the reason)."""
DEVICES: tuple[Device, ...] = get_args(Device)
"""The choices of every ``--device`` flag, in this order."""
ResolvedDevice = Literal["cpu", "cuda"]
"""A ``Device`` once 'auto' is resolved: what a worker process actually runs on."""
RESOLVED_DEVICES: tuple[ResolvedDevice, ...] = get_args(ResolvedDevice)


@dataclass(frozen=True)
class Timeouts:
    """Wall-clock limits, s, by kind of step; the defaults below are the project's (every flag's default).
    Values a user gives are validated where they are given (``OptimizeSettings``, the CLI's flags)."""

    call_s: float = 60.0
    """One call of the reference or a candidate while verifying and timing (``--timeout`` of optimize,
    verify and bench)."""
    compile_s: float = 600.0
    """Import, build, JIT compilation and the first call, which may compile (``--compile-timeout``)."""
    profile_s: float = 600.0
    """One profiler run, and any external command not given a limit of its own (``--profile-timeout`` of
    optimize, ``--timeout`` of profile and diagnose)."""
    suite_entry_s: float = 900.0
    """All the jobs of one suite entry (``suite --entry-timeout``)."""
    llm_request_s: float = 120.0
    """One LLM request, connect and read (``--llm-timeout``, ``PERFAGENT_LLM_TIMEOUT``)."""
    probe_s: float = 20.0
    """A short question to the machine: nvidia-smi, a sandbox probe, a doctor check."""


TIMEOUTS = Timeouts()
"""The defaults."""


@dataclass(frozen=True)
class TimingBudget:
    """How many interleaved timing rounds a timing takes: as many as fill ``budget_s`` of wall time, at most
    the ``runs`` asked for and never fewer than ``min_runs`` (``triton.testing.do_bench`` fills its ``rep``
    the same way). A fast kernel keeps every round asked for; a slow one (a 22 ms original timed twice a
    round) stops early instead of spending seconds per timing. The noise threshold is computed from the
    rounds actually taken, so a short noisy series widens it rather than claiming more than was measured."""

    budget_s: float = 0.5
    """Wall time the timed rounds may fill, s, judged on the first ``min_runs`` rounds (``--timing-budget``
    of bench; 0: always every round asked for)."""
    min_runs: int = 10
    """Rounds taken whatever the budget (``--min-runs`` of bench), unless fewer were asked for."""


TIMING = TimingBudget()
"""The defaults."""
