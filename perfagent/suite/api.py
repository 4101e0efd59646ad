"""``run_suite``: load the entries, skip finished ones on resume, run the rest on an executor (longest
expected first), write ``results.jsonl`` as rows arrive and ``summary.json`` at the end."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from perfagent.suite.executors import Executor
from perfagent.suite.manifest import SuiteEntry, load_suite
from perfagent.suite.models import EntryResult, SuiteSettings, SuiteSummary
from perfagent.suite.results import SUMMARY_FILE, ResultsLog, summarize
from perfagent.suite.schedule import longest_first, read_costs, write_costs
from profilers.core_errors import NOTE_PREFIX, BadInput

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


def repair(log: ResultsLog, on_note: Callable[[str], None] | None) -> list[str]:
    """Drop a torn last row before any new row is appended (else the two would merge into one invalid
    line and an entry would vanish); the note is told now and kept for the summary."""
    note = log.drop_torn_tail()
    if note is None:
        return []
    if on_note is not None:
        on_note(note)
    return [note]


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
    on_note: Callable[[str], None] | None = None,
) -> SuiteSummary:
    """Run every (pending) entry of ``suite`` and return the summary of all rows in ``out``.

    Raises:
        KeyboardInterrupt: interrupted; the finished rows are kept, ``summary.json`` says ``partial``
            and the exception carries a note naming the folder and ``--resume``.
    """
    entries = load_suite(suite)
    out = out.resolve()
    log = prepare_out(out, resume=resume, force=force)
    notes = repair(log, on_note)
    todo = longest_first(pending(entries, log, resume), read_costs(out, settings), settings.jobs)
    done = len(entries) - len(todo)

    def record(row: EntryResult) -> None:
        nonlocal done
        log.append(row)
        done += 1
        if on_row is not None:
            on_row(row, done, len(entries))

    try:
        if todo:
            executor.run(todo, settings, out, record)
    except KeyboardInterrupt as exc:
        summary = _write_summary(out, settings, log, executor, notes, partial=True)
        exc.add_note(
            f"{NOTE_PREFIX}{summary.total} of {len(entries)} entries finished, kept in {out} "
            f"(summary.json marked partial); rerun with --resume to finish the rest"
        )
        raise
    return _write_summary(out, settings, log, executor, notes, partial=False)


def _write_summary(
    out: Path,
    settings: SuiteSettings,
    log: ResultsLog,
    executor: Executor,
    notes: list[str],
    *,
    partial: bool,
) -> SuiteSummary:
    rows = log.read()
    write_costs(out, settings, rows)
    summary = summarize(rows, workers=executor.workers, executor=executor.name).model_copy(
        update={"partial": partial, "notes": notes}
    )
    tmp = out / (SUMMARY_FILE + ".tmp")
    tmp.write_text(summary.model_dump_json(indent=2), encoding="utf-8")
    tmp.replace(out / SUMMARY_FILE)  # atomic: an interrupt while writing leaves the old summary whole
    return summary
