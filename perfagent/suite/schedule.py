"""The order entries are handed to workers: longest expected first.

Workers take entries in list order, so one long entry (a ``load_inline`` build is a minute of ninja) that
happens to come last runs alone while every other GPU idles: on 4 H200s that tail was 30 % of a suite's
wall time. Longest-processing-time-first bounds the tail by the longest single entry. The expected cost
of an entry is what it took the last time this output folder ran it with the same jobs
(``entry_costs.json``, kept across ``--force``), else a rough guess from what the entry has to build.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from perfagent.suite.manifest import SuiteEntry
from perfagent.suite.models import EntryResult, SuiteSettings

COSTS_FILE = "entry_costs.json"

# Guesses (s) per job for entries never run here, by what the entry is, from the 4 x H200 suite runs
# (tests/gpu/h200x4_2026-11-26b/suite_optimize/, BENCHMARKS.md): only their order matters. An inline
# C++/CUDA extension is compiled by ninja (a minute, once per source); Python targets import torch (and
# Triton compiles); a launch-spec pair is two NVRTC builds; verify needs a candidate; a Triton script is
# optimized through ncu-timed runs, so without a candidate it is still one of the longest with optimize.
GUESS_S: dict[str, dict[str, float]] = {
    "inline-extension": {"verify": 55.0, "bench": 5.0, "optimize": 100.0},
    "python-pair": {"verify": 11.0, "bench": 7.0, "optimize": 45.0},
    "triton-script": {"bench": 1.0, "optimize": 75.0},
    "python-problem": {"bench": 4.0, "optimize": 27.0},
    "kernel-pair": {"verify": 5.0, "bench": 5.0, "optimize": 45.0},
    "kernel": {"bench": 5.0, "optimize": 35.0},
}
DEFAULT_JOBS = ("verify", "bench")
_INLINE_EXTENSION = re.compile(r"\b(load_inline|cpp_extension)\b")
_TRITON_JIT = re.compile(r"@triton\.(jit|autotune)")
_MODEL_CLASS = re.compile(r"^class\s+Model\b", re.M)


def jobs_key(settings: SuiteSettings) -> str:
    """Costs are kept per job list: an entry's verify-only time says little about its optimize time."""
    return ",".join(sorted(settings.jobs))


def _text(path: Path | None) -> str:
    if path is None or path.suffix != ".py":
        return ""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def entry_kind(entry: SuiteEntry) -> str:
    """What the entry has to build and run, as far as the guesses tell kinds apart (a ``GUESS_S`` key)."""
    target, candidate = _text(entry.target), _text(entry.candidate)
    if _INLINE_EXTENSION.search(target) or _INLINE_EXTENSION.search(candidate):
        return "inline-extension"
    if entry.target.suffix == ".py":
        if entry.candidate is not None:
            return "python-pair"
        return (
            "triton-script"
            if _TRITON_JIT.search(target) and not _MODEL_CLASS.search(target)
            else "python-problem"
        )
    return "kernel-pair" if entry.candidate is not None else "kernel"


def guess_cost(entry: SuiteEntry, jobs: Iterable[str] = DEFAULT_JOBS) -> float:
    """A rough cost for an entry without history: its kind's guess for each job (seconds; only comparisons
    between guesses matter)."""
    guesses = GUESS_S[entry_kind(entry)]
    return sum(guesses.get(job, 0.0) for job in jobs)


def longest_first(
    entries: Sequence[SuiteEntry], known: dict[str, float] | None = None, jobs: Iterable[str] = DEFAULT_JOBS
) -> list[SuiteEntry]:
    """``entries`` by expected cost (``known`` history, else the guess for ``jobs``), longest first; equal
    costs keep the manifest's order."""
    known = known or {}
    jobs = tuple(jobs)
    order = {e.name: i for i, e in enumerate(entries)}
    return sorted(entries, key=lambda e: (-known.get(e.name, guess_cost(e, jobs)), order[e.name]))


def read_costs(out: Path, settings: SuiteSettings) -> dict[str, float]:
    """Elapsed seconds per entry name from earlier runs into ``out`` with the same jobs ({} if none)."""
    try:
        data = json.loads((out / COSTS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    costs = data.get(jobs_key(settings), {}) if isinstance(data, dict) else {}
    return {str(k): float(v) for k, v in costs.items() if isinstance(v, int | float)}


def write_costs(out: Path, settings: SuiteSettings, rows: Iterable[EntryResult]) -> None:
    """Remember each finished entry's elapsed time for the next run's order (timeouts included: long)."""
    path = out / COSTS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            data = {}
    except (OSError, ValueError):
        data = {}
    costs = dict(data.get(jobs_key(settings), {}))
    costs |= {r.name: round(r.elapsed_s, 2) for r in rows}
    data[jobs_key(settings)] = costs
    path.write_text(json.dumps(data, indent=2, sort_keys=True), encoding="utf-8")
