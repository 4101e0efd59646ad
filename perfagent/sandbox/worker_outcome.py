"""What an ended worker left, as data: its result (checked against the run's nonce), each step's result, and
the failed check for each way it can end without one (a crash, a hang, a forged or malformed result file,
compute-sanitizer's report). ``runner`` starts the worker and hands its end here.
"""

from __future__ import annotations

import re
import secrets
import signal
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from perfagent.sandbox.jobs import Job
from perfagent.sandbox.wire import Check, WorkerRequest, WorkerResult
from profilers.core_errors import BadInput, InternalError
from profilers.process import CompletedCommand


@dataclass
class WorkerOutcome:
    """What came back from one worker run."""

    result: WorkerResult | None
    checks: list[Check] = field(default_factory=list)
    """Checks the parent adds: crash, timeout, sanitizer."""
    returncode: int | None = None
    stderr_tail: str = ""
    sandbox: str = ""
    """How the worker was confined (``confinement.Status.describe``), for the record's notes."""
    items: list[WorkerResult | None] = field(default_factory=list)
    """A sequence worker's result per step (``perfagent.sandbox.sequence``), None for a step that wrote
    none (not reached, or the one it died or hung in)."""


def _describe_exit(rc: int) -> str:
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        return f"killed by {name}"
    if rc > 128 and rc - 128 in {s.value for s in signal.Signals}:
        return f"exit status {rc} (the process ended itself, e.g. os._exit({rc}), or a crash reported as {signal.Signals(rc - 128).name})"
    return f"exit status {rc}"


def _last_progress(path: Path) -> str:
    try:
        lines = [ln for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "start-up"
    if not lines:
        return "start-up"
    last = lines[-1].split(maxsplit=1)
    return last[1] if len(last) == 2 and re.fullmatch(r"[\d.]+", last[0]) else lines[-1]


def parse_sanitizer(text: str) -> Check:
    """compute-sanitizer's memcheck summary as a check (errors with the first report lines)."""
    m = re.search(r"ERROR SUMMARY:\s*(\d+)\s+error", text)
    if m is None:
        return Check(
            name="sanitizer-memcheck",
            passed=False,
            detail="compute-sanitizer printed no ERROR SUMMARY (did it run?)",
        )
    count = int(m.group(1))
    if count == 0:
        return Check(name="sanitizer-memcheck", passed=True, detail="compute-sanitizer memcheck: 0 errors")
    reports = [
        ln.replace("========= ", "").strip()
        for ln in text.splitlines()
        if re.search(r"Invalid|out of bounds|Address|misaligned|Program hit", ln)
    ]
    return Check(
        name="sanitizer-memcheck",
        passed=False,
        detail=f"compute-sanitizer memcheck: {count} error(s): " + " | ".join(reports[:4]),
    )


def outcome(
    done: CompletedCommand,
    job: Job,
    request: WorkerRequest,
    work: Path,
    nonce: str,
    *,
    sanitizer: bool,
    sandbox_note: str,
    items: int,
) -> WorkerOutcome:
    """What a worker that ended left in ``work``: its result, the checks its exit adds, each item's result.

    Raises:
        InternalError: the worker broke inside perfagent's own checking.
        BadInput: the reference did not run cleanly.
    """
    result_path = work / "result.json"
    tail = done.tail(8)
    result, extra = read_result(result_path, nonce)
    if result is not None and result.internal_error:
        raise InternalError(
            f"the {job.mode} worker broke inside perfagent's own checking ({result.internal_error[:300]}); "
            f"{request.candidate.describe() if request.candidate else 'the reference'} was not judged",
            hint="rerun with --debug, set PERFAGENT_KEEP_WORKDIR=1 to keep the worker's folder, and report it",
        )
    if result is None and not extra:
        extra.append(_died(job, done.returncode, _last_progress(work / "progress.log"), tail))
    if result is not None and result.bad_input:
        raise BadInput(
            result.bad_input, hint="the reference must run cleanly before a candidate can be judged"
        )
    if sanitizer:
        extra.append(parse_sanitizer(done.stdout + "\n" + done.stderr))
    steps = [read_result(item_result_path(result_path, i), nonce)[0] for i in range(items)]
    return WorkerOutcome(
        result=result,
        checks=extra,
        returncode=done.returncode,
        stderr_tail=tail,
        sandbox=sandbox_note,
        items=steps,
    )


def timed_out(progress_path: Path, backstop_s: float) -> WorkerOutcome:
    """The whole worker ran past ``backstop_s``: a failed check, or bad input when the reference hung.

    Raises:
        BadInput: the reference was running when the worker was killed.
    """
    where = _last_progress(progress_path)
    if where.startswith("reference"):
        raise BadInput(
            f"the reference did not finish ({where})", hint="raise --timeout or use smaller inputs"
        ) from None
    check = Check(
        name="candidate-runs",
        passed=False,
        detail=f"timeout: the worker was killed after {backstop_s:g} s while running: {where}",
    )
    return WorkerOutcome(result=None, checks=[check])


def item_result_path(result_path: str | Path, index: int) -> Path:
    """Where a sequence worker writes the result of its step ``index`` (beside its own result)."""
    return Path(f"{result_path}.step{index}")


def read_result(result_path: Path, nonce: str) -> tuple[WorkerResult | None, list[Check]]:
    """The worker's result when it is well-formed and carries ``nonce``; else None and the check that says why."""
    if not result_path.is_file():
        return None, []
    try:
        result = WorkerResult.model_validate_json(result_path.read_text())
    except ValidationError:
        return None, [
            Check(
                name="worker",
                passed=False,
                detail="the worker's result file is malformed (written by the candidate?)",
            )
        ]
    if not secrets.compare_digest(result.nonce, nonce):
        return None, [
            Check(
                name="worker",
                passed=False,
                detail="the result file was not written by perfagent (nonce mismatch): the candidate tampered with it",
            )
        ]
    return result, []


def _died(job: Job, returncode: int, where: str, tail: str) -> Check:
    """The check for a worker that ended without writing a result, during the call ``where``.

    Raises:
        InternalError: it died before any user code ran (the worker itself could not start).
        BadInput: it died while the reference was running.
    """
    if where == "start-up":  # no user code had run yet: the worker itself could not start
        raise InternalError(
            f"the {job.mode} worker died before running any code ({_describe_exit(returncode)}): "
            f"{tail[-300:] or '(no output)'}",
            hint="check that this Python can import perfagent (PYTHONPATH, the install), and report it",
        )
    how = (
        _describe_exit(returncode)
        if returncode != 0
        else "exit status 0 without writing a result (sys.exit/os._exit from user code?)"
    )
    if where.startswith("reference"):
        raise BadInput(
            f"the reference crashed ({how}) during {where}",
            hint=f"fix the reference first; worker output: {tail[-300:]}",
        )
    return Check(
        name="candidate-runs",
        passed=False,
        detail=f"the candidate process died ({how}) during {where}; last output: {tail[-300:] or '(none)'}",
    )
