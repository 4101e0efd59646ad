"""``results.jsonl`` (one row per entry, appended as it finishes, so a killed run can resume) and the
suite summary computed from those rows alone.

fast_p follows KernelBench (``src/score.py``): the fraction of ALL entries that are correct and whose
speed-up over the reference is strictly greater than p; ``fast_p_compile`` the same against
``torch.compile(Model)`` (KernelBench entries timed with it). The geometric mean is over correct entries
with a measured speed-up.
"""

from __future__ import annotations

import math
import os
import threading
from collections import Counter
from datetime import datetime
from pathlib import Path

from pydantic import ValidationError

from perfagent.suite.models import EntryResult, SuiteSummary
from profilers.core_errors import BadInput

RESULTS_FILE = "results.jsonl"
SUMMARY_FILE = "summary.json"
FAST_P = (1.0, 1.5, 2.0)


class ResultsLog:
    """The append-only results file of one suite run (thread-safe appends, tolerant reads)."""

    def __init__(self, out: Path) -> None:
        self.path = out / RESULTS_FILE
        self._lock = threading.Lock()

    def read(self) -> list[EntryResult]:
        """Every complete row; a torn last line (the run was killed mid-write) is skipped."""
        if not self.path.is_file():
            return []
        rows: list[EntryResult] = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            try:
                rows.append(EntryResult.model_validate_json(line))
            except ValidationError:
                continue
        return rows

    def finished(self) -> set[str]:
        """Names of entries with a row (what ``--resume`` skips)."""
        return {r.name for r in self.read()}

    def append(self, row: EntryResult) -> None:
        """Append one row as one complete line: a single write of the whole line, then fsync, so that a
        kill leaves at most a torn last line (which ``drop_torn_tail`` removes), never a merged one."""
        line = (row.model_dump_json() + "\n").encode("utf-8")
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                written = 0
                while written < len(line):  # os.write may write less than asked (signals, full disk)
                    written += os.write(fd, line[written:])
                os.fsync(fd)
            finally:
                os.close(fd)

    def drop_torn_tail(self) -> str | None:
        """Cut an incomplete or unreadable last line (a run killed mid-write) off the file, so that the
        next row starts on a line of its own; returns what was dropped, for the user, or None."""
        if not self.path.is_file():
            return None
        data = self.path.read_bytes()
        if not data:
            return None
        body, _, last = data.rstrip(b"\n").rpartition(b"\n")
        keep = len(body) + 1 if body else 0
        if data.endswith(b"\n") and _valid_row(last):
            return None
        with self._lock, self.path.open("r+b") as f:
            f.truncate(keep)
            f.flush()
            os.fsync(f.fileno())
        return (
            f"dropped a torn last line of {self.path.name} ({len(data) - keep} bytes: the previous run was "
            "killed while writing it); that entry runs again"
        )


def _valid_row(line: bytes) -> bool:
    try:
        EntryResult.model_validate_json(line)
    except ValidationError:
        return False
    return True


def final_speedup(row: EntryResult) -> float | None:
    """The entry's speed-up against its reference: the measured candidate, else optimize's best (1.0
    when optimize ran correctly and kept nothing: the original stays)."""
    if row.speedup is not None:
        return row.speedup
    if row.optimize_speedup is not None:
        return row.optimize_speedup
    if any(j.job == "optimize" and j.ok for j in row.jobs):
        return 1.0
    return None


def _wall(rows: list[EntryResult]) -> float | None:
    stamps = []
    for r in rows:
        try:
            end = datetime.fromisoformat(r.finished)
        except ValueError:
            continue
        stamps.append((end.timestamp() - r.elapsed_s, end.timestamp()))
    if not stamps:
        return None
    return max(e for _, e in stamps) - min(s for s, _ in stamps)


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarize(
    rows: list[EntryResult], *, workers: int | None = None, executor: str | None = None
) -> SuiteSummary:
    """The suite's figures from its rows."""
    total = len(rows)
    # fast_p's denominator: entries where some job ran (an entry this machine could do nothing with is
    # skipped, not slow).
    attempted = sum(1 for r in rows if r.jobs) or total
    correct_rows = [r for r in rows if r.correct]
    verified = [r for r in rows if r.correct is not None]
    speedups = {r.name: s for r in correct_rows if (s := final_speedup(r)) is not None and s > 0}
    fast_p = {
        f"{p:g}": (sum(1 for s in speedups.values() if s > p) / attempted if attempted else 0.0)
        for p in FAST_P
    }
    over_compile = [r.speedup_over_compile for r in correct_rows if r.speedup_over_compile is not None]
    fast_p_compile = (
        {f"{p:g}": sum(1 for s in over_compile if s > p) / total for p in FAST_P} if over_compile else {}
    )
    geomean = math.exp(sum(math.log(s) for s in speedups.values()) / len(speedups)) if speedups else None
    won = Counter(t for r in rows for t in dict.fromkeys(r.transforms_won))
    failures = Counter(r.failure for r in rows if r.failure)
    skipped = Counter(why for r in rows for why in dict.fromkeys(r.skipped.values()))
    return SuiteSummary(
        total=total,
        correct=len(correct_rows),
        verified=len(verified),
        correct_rate=len(correct_rows) / len(verified) if verified else None,
        fast_p=fast_p,
        fast_p_compile=fast_p_compile,
        geomean_speedup=geomean,
        speedups=speedups,
        mean_pct_of_roofline_before=_mean(
            [r.pct_of_roofline_before for r in rows if r.pct_of_roofline_before is not None]
        ),
        mean_pct_of_roofline_after=_mean(
            [r.pct_of_roofline_after for r in rows if r.pct_of_roofline_after is not None]
        ),
        transforms_won=dict(won.most_common()),
        failures=dict(failures.most_common()),
        skipped=dict(skipped.most_common()),
        flagged={r.name: r.flags for r in rows if r.flags},
        wall_s=_wall(rows),
        workers=workers,
        executor=executor,
    )


def is_suite_dir(path: Path) -> bool:
    """A folder written by ``perfagent suite`` (it has results.jsonl)."""
    return path.is_dir() and (path / RESULTS_FILE).is_file()


def load_suite_results(path: Path) -> tuple[list[EntryResult], SuiteSummary]:
    """Rows and summary of a suite folder (the summary recomputed when summary.json is missing)."""
    if not is_suite_dir(path):
        raise BadInput(
            f"{path} is not a suite result folder (no {RESULTS_FILE})",
            hint="run perfagent suite --out DIR first",
        )
    rows = ResultsLog(path).read()
    summary_path = path / SUMMARY_FILE
    if summary_path.is_file():
        try:
            return rows, SuiteSummary.model_validate_json(summary_path.read_text(encoding="utf-8"))
        except ValidationError:
            pass
    return rows, summarize(rows)
