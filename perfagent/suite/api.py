"""``run_suite``: load the entries, skip finished ones on resume, run the rest on an executor (longest
expected first), write ``results.jsonl`` as rows arrive and ``summary.json`` at the end."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from perfagent.errors import BadInput
from perfagent.suite.executors import Executor
from perfagent.suite.manifest import SuiteEntry, load_suite
from perfagent.suite.models import EntryResult, SuiteSettings, SuiteSummary
from perfagent.suite.results import SUMMARY_FILE, ResultsLog, summarize
from perfagent.suite.schedule import longest_first, read_costs, write_costs

RowCallback = Callable[[EntryResult, int, int], None]
"""Receives (row, done, total) as each entry finishes."""


def prepare_out(out: Path, *, resume: bool, force: bool) -> ResultsLog:
    """The output folder's results log; refuses to mix a new run into old results."""
    log = ResultsLog(out)
    if log.path.exists() and not (resume or force):
        raise BadInput(
            f"{out} already holds suite results",
            hint="pass --resume to continue it, or --force to start over",
        )
    out.mkdir(parents=True, exist_ok=True)
    if force and not resume:
        log.path.unlink(missing_ok=True)
        (out / SUMMARY_FILE).unlink(missing_ok=True)
    return log


def pending(entries: list[SuiteEntry], log: ResultsLog, resume: bool) -> list[SuiteEntry]:
    """Entries still to run (all of them unless resuming)."""
    if not resume:
        return entries
    done = log.finished()
    return [e for e in entries if e.name not in done]


def run_suite(
    suite: Path,
    settings: SuiteSettings,
    out: Path,
    executor: Executor,
    *,
    resume: bool = False,
    force: bool = False,
    on_row: RowCallback | None = None,
) -> SuiteSummary:
    """Run every (pending) entry of ``suite`` and return the summary of all rows in ``out``."""
    entries = load_suite(suite)
    out = out.resolve()
    log = prepare_out(out, resume=resume, force=force)
    todo = longest_first(pending(entries, log, resume), read_costs(out, settings), settings.jobs)
    done = len(entries) - len(todo)

    def record(row: EntryResult) -> None:
        nonlocal done
        log.append(row)
        done += 1
        if on_row is not None:
            on_row(row, done, len(entries))

    if todo:
        executor.run(todo, settings, out, record)
    rows = log.read()
    write_costs(out, settings, rows)
    summary = summarize(rows, workers=executor.workers, executor=executor.name)
    (out / SUMMARY_FILE).write_text(summary.model_dump_json(indent=2), encoding="utf-8")
    return summary
