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

# Guesses (s) for entries never run here, from the H200 suite runs (BENCHMARKS.md): only their order
# matters. An inline C++/CUDA extension is compiled by ninja; Python targets import torch (and Triton
# compiles); a launch-spec pair is two NVRTC builds; an entry without a candidate skips its pair jobs.
GUESS_INLINE_EXTENSION_S = 60.0
GUESS_PYTHON_S = 18.0
GUESS_KERNEL_PAIR_S = 12.0
GUESS_NO_CANDIDATE_S = 6.0
_INLINE_EXTENSION = re.compile(r"\b(load_inline|cpp_extension)\b")


def jobs_key(settings: SuiteSettings) -> str:
    """Costs are kept per job list: an entry's verify-only time says little about its optimize time."""
    return ",".join(sorted(settings.jobs))


def _builds_extension(path: Path | None) -> bool:
    if path is None or path.suffix != ".py":
        return False
    try:
        return bool(_INLINE_EXTENSION.search(path.read_text(encoding="utf-8", errors="replace")))
    except OSError:
        return False


def guess_cost(entry: SuiteEntry) -> float:
    """A rough cost for an entry without history (seconds; only comparisons between guesses matter)."""
    if _builds_extension(entry.candidate) or _builds_extension(entry.target):
        return GUESS_INLINE_EXTENSION_S
    if entry.target.suffix == ".py":
        return GUESS_PYTHON_S if entry.candidate is not None else GUESS_NO_CANDIDATE_S
    return GUESS_KERNEL_PAIR_S if entry.candidate is not None else GUESS_NO_CANDIDATE_S


def longest_first(entries: Sequence[SuiteEntry], known: dict[str, float] | None = None) -> list[SuiteEntry]:
    """``entries`` by expected cost, longest first; equal costs keep the manifest's order."""
    known = known or {}
    order = {e.name: i for i, e in enumerate(entries)}
    return sorted(entries, key=lambda e: (-known.get(e.name, guess_cost(e)), order[e.name]))


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
