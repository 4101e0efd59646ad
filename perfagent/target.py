"""A target, resolved once: what it is, its files with their hashes, and what perfagent can do with it.

A command resolves the user's paths into one ``TargetDescription`` at its entry and hands it down; every
stage reads it instead of classifying the file again. The kind-specific behaviour (how a candidate is
built, run, profiled) is chosen from the description in one place, ``perfagent.workloads.registry``.

The files' sha256 hashes let a long run notice that the user's file changed under it
(``TargetDescription.check_unchanged``): what was measured at the start would no longer describe the file,
and ``--apply`` would overwrite the user's edit. That is bad input (exit 2), said in one line.

This module imports only the core types: it is read by the workloads and the loop above it.
"""

from __future__ import annotations

import hashlib
from enum import StrEnum
from pathlib import Path

from profilers.core_errors import BadInput
from profilers.model import Frozen

__all__ = [
    "CHECK_COMMAND_ONLY",
    "Capability",
    "FileRole",
    "TargetChanged",
    "TargetDescription",
    "TargetFile",
    "TargetKind",
    "file_sha256",
    "hashed",
]

_CHUNK = 1 << 20


class TargetKind(StrEnum):
    """What the user pointed perfagent at; the values are the serialized names saved records and suite
    manifests use."""

    CUDA_KERNEL = "cuda-kernel"
    """A ``.cu`` kernel file (no ``main()``), launched through its launch spec when it has one."""
    KERNELBENCH = "kernelbench"
    """A KernelBench problem (``Model`` + ``get_inputs``) or a ``ModelNew`` file with its problem."""
    TRITON_SCRIPT = "triton-script"
    """A Python script with ``@triton.jit`` kernels that checks itself."""
    CUDA_PROGRAM = "cuda-program"
    """A ``.cu`` with ``main()``: built and run."""
    PYTHON_SCRIPT = "python-script"
    """Any other Python script: run."""
    HIP_PROGRAM = "hip-program"
    NCU_REPORT = "ncu-report"
    NCU_CSV = "ncu-csv"
    ROCPROF_OUTPUT = "rocprof-output"
    RUN_RECORD = "run-record"
    COMMAND = "command"
    """A command line after ``--``: no file."""
    UNKNOWN = "unknown"
    """Nothing perfagent can work with (a missing path, a type it does not know): every capability says why,
    in the words of the command that asked."""

    @property
    def is_recorded(self) -> bool:
        """Existing data (a report, a saved run) that is read, never run."""
        return self in _RECORDED


_RECORDED = frozenset(
    {TargetKind.NCU_REPORT, TargetKind.NCU_CSV, TargetKind.ROCPROF_OUTPUT, TargetKind.RUN_RECORD}
)


class FileRole(StrEnum):
    """What a file is to the target."""

    PRIMARY = "primary"
    """The file the user named: the one ``--apply`` writes (a KernelBench ``ModelNew`` given with
    ``--problem`` is the primary file, its problem a related one), or the report or record read."""
    SPEC = "spec"
    """The launch spec of a ``.cu`` kernel."""
    PROBLEM = "problem"
    """The KernelBench problem whose ``Model`` is the oracle."""
    REPORT = "report"
    """A recorded report of the original (``optimize --report``), read when nothing can be profiled."""


class TargetFile(Frozen):
    """One file of the target, as it was when the target was resolved."""

    role: FileRole
    path: str
    """Absolute path."""
    sha256: str | None
    """Hex digest of the file's bytes; None for a folder (a rocprof workload, a run folder)."""

    def current_sha256(self) -> str | None:
        """The digest of the file as it is now ("" when it is gone or unreadable)."""
        return file_sha256(Path(self.path))


class Capability(Frozen):
    """Whether perfagent can do one thing with the target, and why not when it cannot."""

    able: bool
    reason: str = ""
    """Why not (empty when able): the cause, in one line."""
    hint: str = ""
    """The next step when not able."""

    def require(self) -> None:
        """Raise the reason when not able.

        Raises:
            BadInput: the target cannot do this.
        """
        if not self.able:
            raise BadInput(self.reason, hint=self.hint)


YES = Capability(able=True)
CHECK_COMMAND_ONLY = Capability(
    able=False,
    reason="perfagent has no oracle for it: only a check command can judge it",
    hint="perfagent verify REFERENCE CANDIDATE --check-cmd 'COMMAND'",
)
"""``can_verify`` of a program or script: no oracle, but a check command (``--check-cmd``) judges it."""


class TargetDescription(Frozen):
    """The one resolution of a target: every stage of a command reads this, none classifies again."""

    kind: TargetKind
    label: str = ""
    """The target as the user named it (the path as given, the command line): messages and records say it."""
    language: str = "unknown"
    """The primary file's source language: 'cuda', 'triton', 'python' or 'unknown'."""
    backend: str = "unknown"
    """What runs a Python file's kernels: 'cuda' (``load_inline`` CUDA), 'triton', 'pytorch'; 'cuda' for a
    ``.cu``; 'unknown' otherwise."""
    files: tuple[TargetFile, ...] = ()
    """The primary file first, then every related file (launch spec, KernelBench problem, recorded report)."""
    entry: str | None = None
    """A launch-spec kernel's entry point."""
    jit_kernels: tuple[str, ...] = ()
    """The Triton kernels the primary file defines."""
    has_model_new: bool = False
    """KernelBench: the primary file already defines ``ModelNew`` (the start the loop must beat)."""
    kernel_filter: str | None = None
    """Regular expression selecting the target's kernels in a profile (None: every kernel)."""
    can_profile: Capability = YES
    can_verify: Capability = YES
    can_time: Capability = YES
    can_rewrite: Capability = YES

    def file(self, role: FileRole) -> Path | None:
        """The path of the file with ``role`` (None: the target has none)."""
        found = next((f for f in self.files if f.role == role), None)
        return Path(found.path) if found is not None else None

    def sha256(self, role: FileRole) -> str | None:
        """The hash of the file with ``role`` as it was resolved (None: no such file, or not hashed)."""
        return next((f.sha256 for f in self.files if f.role == role), None)

    @property
    def primary(self) -> Path:
        """The file the user named.

        Raises:
            BadInput: the target is a command line, which has no file.
        """
        path = self.file(FileRole.PRIMARY)
        if path is None:
            raise BadInput("the target is a command line, not a file", hint="pass a file")
        return path

    def with_own_primary(self, path: Path) -> TargetDescription:
        """The target once the loop chose a new file to write (a first ``ModelNew`` beside its problem).

        That file is perfagent's own, not the user's: it is not hashed; the other files keep their hashes.
        """
        own = TargetFile(role=FileRole.PRIMARY, path=str(path.absolute()), sha256=None)
        others = tuple(f for f in self.files if f.role != FileRole.PRIMARY)
        return self.model_copy(update={"files": (own, *others)})

    def check_unchanged(self, before: str) -> None:
        """Raise when a file of the target changed since it was resolved.

        Args:
            before: the stage about to read the files ('the loop', 'apply'), for the message.

        Raises:
            TargetChanged: a file's bytes differ from those described (or it is gone).
        """
        for f in self.files:
            if f.sha256 is not None and f.current_sha256() != f.sha256:
                raise TargetChanged(f, before)


class TargetChanged(BadInput):
    """A file of the target changed while a command was working on it."""

    def __init__(self, changed: TargetFile, before: str) -> None:
        now = changed.current_sha256()
        state = (
            "is gone" if not now else f"sha256 {changed.sha256[:12] if changed.sha256 else '?'} → {now[:12]}"
        )
        super().__init__(
            f"{Path(changed.path).name} changed while perfagent was working on it ({state}), before {before}",
            hint="leave the file alone during a run, then run the command again",
        )
        self.changed = changed


def file_sha256(path: Path) -> str | None:
    """The sha256 of ``path``'s bytes; None for a folder, "" when it cannot be read."""
    if path.is_dir():
        return None
    digest = hashlib.sha256()
    try:
        with path.open("rb") as fh:
            while chunk := fh.read(_CHUNK):
                digest.update(chunk)
    except OSError:
        return ""
    return digest.hexdigest()


def hashed(role: FileRole, path: Path) -> TargetFile:
    """``path`` (made absolute) with its hash as it is now."""
    absolute = path.absolute()
    return TargetFile(role=role, path=str(absolute), sha256=file_sha256(absolute))
