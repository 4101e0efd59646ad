"""What the user pointed perfagent at: a report, a source file, a script, or a command."""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from perfagent.errors import BadInput

_MAIN = re.compile(r"\bint\s+main\s*\(")
_GLOBAL = re.compile(r"__global__")
_LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s*"', re.M)


class TargetKind(StrEnum):
    NCU_REPORT = "ncu-report"
    NCU_CSV = "ncu-csv"
    ROCPROF_OUTPUT = "rocprof-output"
    RUN_RECORD = "run-record"
    CUDA_PROGRAM = "cuda-program"
    CUDA_KERNEL = "cuda-kernel"
    HIP_PROGRAM = "hip-program"
    PYTHON_SCRIPT = "python-script"
    COMMAND = "command"

    @property
    def is_recorded(self) -> bool:
        """True when the target is existing data that needs no run."""
        return self in (
            TargetKind.NCU_REPORT,
            TargetKind.NCU_CSV,
            TargetKind.ROCPROF_OUTPUT,
            TargetKind.RUN_RECORD,
        )


@dataclass(frozen=True)
class Target:
    """A resolved target."""

    kind: TargetKind
    path: Path | None = None
    command: list[str] = field(default_factory=list)
    """The argv to run (for programs, scripts and commands; filled after a build for sources)."""

    def describe(self) -> str:
        if self.path is not None:
            return str(self.path)
        return shlex.join(self.command)


def resolve_target(target: str | Path | None, command: Sequence[str] = ()) -> Target:
    """Classify ``target`` (a path) or ``command`` (argv after ``--``).

    Raises:
        BadInput: nothing given, the path does not exist, or its type is not supported.
    """
    if target is None or str(target) == "":
        if command:
            return Target(TargetKind.COMMAND, command=list(command))
        raise BadInput("no target given", hint="pass a report, a .cu/.py file, or a command after `--`")
    path = Path(target)
    if not path.exists():
        raise BadInput(
            f"{path} does not exist", hint="check the path (reports: .ncu-rep, .csv; sources: .cu, .hip, .py)"
        )
    if path.is_dir():
        if (path / "record.json").is_file():
            return Target(TargetKind.RUN_RECORD, path=path / "record.json")
        from profilers import get_profiler

        if (path / "pmc_perf.csv").is_file() or get_profiler("rocprof").can_read(path):
            return Target(TargetKind.ROCPROF_OUTPUT, path=path)
        raise BadInput(
            f"{path} is a folder that is neither a perfagent run nor a rocprof-compute workload",
            hint="pass a report file, a run folder (with record.json) or a workload folder (with pmc_perf.csv)",
        )
    suffix = path.suffix.lower()
    if suffix in (".ncu-rep", ".ncu-repz"):
        return Target(TargetKind.NCU_REPORT, path=path)
    if suffix == ".csv":
        return Target(_csv_kind(path), path=path)
    if suffix in (".db", ".sqlite"):
        return Target(TargetKind.ROCPROF_OUTPUT, path=path)
    if suffix == ".json":
        return Target(TargetKind.RUN_RECORD, path=path)
    if suffix == ".cu":
        text = _text(path)
        kind = TargetKind.CUDA_PROGRAM if _MAIN.search(text) else TargetKind.CUDA_KERNEL
        # a file that includes local sources may get its kernels from them: nvcc decides (static analysis)
        if kind is TargetKind.CUDA_KERNEL and not _GLOBAL.search(text) and not _LOCAL_INCLUDE.search(text):
            raise BadInput(
                f"{path} defines no __global__ kernel and no main()",
                hint="point at the .cu file that defines the kernels (or a program with main() that launches them)",
            )
        return Target(kind, path=path, command=list(command))
    if suffix in (".hip",):
        _text(path)  # readable, text, not empty
        return Target(TargetKind.HIP_PROGRAM, path=path, command=list(command))
    if suffix == ".py":
        _text(path)
        return Target(TargetKind.PYTHON_SCRIPT, path=path, command=[sys.executable, str(path), *command])
    raise BadInput(
        f"don't know how to profile '{path.name}'",
        hint="supported: .ncu-rep, ncu/rocprof .csv, .cu, .hip, .py, a run folder, or any command after `--`",
    )


def _text(path: Path) -> str:
    """A source file's text; ``BadInput`` when it is unreadable, binary or empty (nothing to profile)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BadInput(f"cannot read {path}: {exc.strerror}", hint="check its permissions") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = ""
        if b"\x00" not in data:
            text = data.decode("latin-1")  # an old encoding: compilers cope, so do we
    if "\x00" in text or (data and not text):
        raise BadInput(f"{path} is not a source file (binary content)", hint="pass the source text")
    if not text.strip():
        raise BadInput(f"{path} is empty", hint="pass a source file that defines kernels or runs them")
    return text


def _csv_kind(path: Path) -> TargetKind:
    try:
        with path.open(errors="replace") as fh:
            head = fh.read(4096)
    except OSError as exc:
        raise BadInput(f"cannot read {path}: {exc.strerror}", hint="check its permissions") from exc
    # ncu's raw and details pages quote every identity column; rocprof uses Kernel_Name.
    if '"Kernel Name"' in head.split("\n", 1)[0]:
        return TargetKind.NCU_CSV
    return TargetKind.ROCPROF_OUTPUT
