"""Messages: how work done in threads (loading a run, probing the machine, the optimize loop) and the
user's decisions reach the screens. Workers never touch widgets; they post one of these."""

from __future__ import annotations

from pathlib import Path

from textual.message import Message

from perfagent.records import CandidateOutcome, RunRecord
from tui.candidate_view import Outcome
from tui.optimize_bridge import Capabilities


class LoadProgress(Message):
    """A progress line from ``perfagent.diagnose`` while a target is read or profiled."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class RecordLoaded(Message):
    """The run is ready to show."""

    def __init__(self, record: RunRecord) -> None:
        super().__init__()
        self.record = record


class LoadFailed(Message):
    """Loading failed; ``message`` and ``hint`` are the CLI's one-line error split in two."""

    def __init__(self, error: BaseException, message: str, hint: str) -> None:
        super().__init__()
        self.error = error
        self.message = message
        self.hint = hint


class KernelOpened(Message):
    """The user opened a kernel's detail (``index`` into ``record.kernels``)."""

    def __init__(self, index: int) -> None:
        super().__init__()
        self.index = index


class CapabilitiesProbed(Message):
    """What this machine can do for the optimize loop (loop present, GPU, LLM endpoint)."""

    def __init__(self, capabilities: Capabilities) -> None:
        super().__init__()
        self.capabilities = capabilities


class OptimizeProgress(Message):
    """One progress event of the optimize loop."""

    def __init__(self, text: str, step: int | None = None, total: int | None = None) -> None:
        super().__init__()
        self.text = text
        self.step = step
        self.total = total


class OptimizeFinished(Message):
    """The optimize loop returned its candidates."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__()
        self.outcome = outcome


class OptimizeFailed(Message):
    """The optimize loop could not run or raised; ``message`` says why and what to do."""

    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message


class CandidateAccepted(Message):
    """The user accepted a candidate: ``path`` was rewritten, the original kept at ``backup``."""

    def __init__(self, candidate: CandidateOutcome, path: Path, backup: Path, backup_created: bool) -> None:
        super().__init__()
        self.candidate = candidate
        self.path = path
        self.backup = backup
        self.backup_created = backup_created


class CandidateRejected(Message):
    """The user rejected a candidate; nothing was written."""

    def __init__(self, candidate: CandidateOutcome) -> None:
        super().__init__()
        self.candidate = candidate
