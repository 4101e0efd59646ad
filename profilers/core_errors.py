"""perfagent's exception tree and the documented exit-code contract.

Codes: 0 ok, 1 the tool failed, 2 bad usage or bad input, 3 profiler unavailable or failed,
4 verification failed, 5 LLM unavailable or failed, 130 interrupted. Every error carries a one-line
cause and a ``hint`` with the next step; the CLI prints both and hides the traceback unless --debug.
This module is at the bottom of the layers and imports nothing of the project: the profiler layer's
errors (``profilers.errors``) subclass its root, so one ``except PerfAgentError`` catches them all.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = [
    "NOTE_PREFIX",
    "BadInput",
    "ExitCode",
    "InternalError",
    "LLMError",
    "NotOnThisMachine",
    "PerfAgentError",
    "ToolFailure",
    "VerificationFailed",
    "exit_code_for",
    "one_line",
    "saved_note",
]


class ExitCode(IntEnum):
    """The CLI's documented exit codes (this module's docstring says what each means)."""

    OK = 0
    FAILURE = 1
    USAGE = 2
    PROFILER = 3
    VERIFICATION = 4
    LLM = 5
    INTERRUPTED = 130


class PerfAgentError(Exception):
    """Root of every error perfagent raises on purpose, the profiler layer's included."""

    exit_code: ExitCode = ExitCode.FAILURE

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} — {self.hint}" if self.hint else self.message


class BadInput(PerfAgentError):
    """The user's target, file or option value is unusable."""

    exit_code = ExitCode.USAGE


class NotOnThisMachine(BadInput):
    """The work needs what this machine lacks (a CUDA GPU for a launch-spec kernel, a CUDA toolkit):
    nothing is wrong with the input. Exit code 2 for the command asked to do it; a suite records the
    job as skipped (with this message as the why), never as a failure of the entry."""


class ToolFailure(PerfAgentError):
    """perfagent itself could not finish (a bug, or a step that failed for an internal reason)."""

    exit_code = ExitCode.FAILURE


class InternalError(ToolFailure):
    """perfagent's own machinery broke (a harness crash, a worker that cannot import perfagent).

    Never a verdict on the user's code: a candidate whose check hit this was not judged, and the
    optimize loop stops instead of recording it (or telling the rewriter) as a failed attempt.
    """


class VerificationFailed(PerfAgentError):
    """A candidate is incorrect, or not faster."""

    exit_code = ExitCode.VERIFICATION


class LLMError(PerfAgentError):
    """The LLM endpoint is unavailable or replied unusably."""

    exit_code = ExitCode.LLM


def exit_code_for(exc: BaseException) -> int:
    """Map any exception to the documented exit code."""
    if isinstance(exc, KeyboardInterrupt):
        return ExitCode.INTERRUPTED
    if isinstance(exc, PerfAgentError):
        return int(exc.exit_code)
    return ExitCode.FAILURE


def one_line(exc: BaseException) -> str:
    """'perfagent: <cause> — <next step>' for the terminal; 'perfagent failed: ...' when perfagent itself broke."""
    prefix = "perfagent: "
    if isinstance(exc, ToolFailure):
        prefix = "perfagent failed: "
        text = exc.message + (f" — {exc.hint}" if exc.hint else "")
    elif isinstance(exc, PerfAgentError):
        text = exc.message + (f" — {exc.hint}" if exc.hint else "")
    else:
        prefix = "perfagent failed: "
        text = f"internal error: {type(exc).__name__}: {exc} — rerun with --debug for the traceback and report it"
    return prefix + " ".join(text.split()) + saved_note(exc)


def saved_note(exc: BaseException) -> str:
    """' (<notes>)' for the notes perfagent attached to ``exc`` (e.g. where a partial run was saved), or ''."""
    notes = [n for n in getattr(exc, "__notes__", ()) if isinstance(n, str) and n.startswith(NOTE_PREFIX)]
    return f" ({'; '.join(n[len(NOTE_PREFIX) :] for n in notes)})" if notes else ""


NOTE_PREFIX = "perfagent: "
"""Notes perfagent adds to an exception on its way out (``exc.add_note(NOTE_PREFIX + ...)``) start so."""
