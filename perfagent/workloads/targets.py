"""What ``profile`` and ``diagnose`` were pointed at: a recorded report or run, a source file, a script, or a
command; one ``Workload`` class per kind (``kind`` names them in messages, never in saved records)."""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal

from perfagent.workloads.base import Workload
from profilers import get_profiler
from profilers.core_errors import BadInput

_MAIN = re.compile(r"\bint\s+main\s*\(")
_GLOBAL = re.compile(r"__global__")
_LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s*"', re.M)


@dataclass(frozen=True)
class ProfileTarget(Workload):
    """What ``profile`` / ``diagnose`` read or run."""

    kind: ClassVar[str]
    path: Path | None = None
    """The file as the user gave it (recorded runs and reports, sources, scripts); None for a bare command."""
    command: list[str] = field(default_factory=list)
    """The argv to run (for programs, scripts and commands; filled after a build for sources)."""

    default_profiler: ClassVar[Literal["ncu", "rocprof", "static"]] = "ncu"
    """What ``--profiler auto`` uses when it is usable here."""
    is_source: ClassVar[bool] = False
    """``path`` is a source file the profiler gets (builds, static analysis, source correlation)."""
    is_built: ClassVar[bool] = False
    """``path`` is built into a program (nvcc) before it is run."""
    is_saved_run: ClassVar[bool] = False
    """A perfagent run: its record is loaded as it was saved (nothing is profiled, nothing saved again)."""
    tool: ClassVar[Literal["ncu", "rocprof"] | None] = None
    """A recorded report: the profiler that wrote (and reads) it."""

    @property
    def source(self) -> Path | None:
        """The source file handed to the profiler, if any."""
        return self.path if self.is_source else None

    def describe(self) -> str:
        """The path as given, else the command line."""
        if self.path is not None:
            return str(self.path)
        return shlex.join(self.command)


@dataclass(frozen=True)
class SavedRun(ProfileTarget):
    """A perfagent run (``record.json`` or its folder): loaded, never re-run."""

    kind: ClassVar[str] = "run-record"
    is_recorded: ClassVar[bool] = True
    is_saved_run: ClassVar[bool] = True


@dataclass(frozen=True)
class RecordedReport(ProfileTarget):
    """A report written by a profiler: read by the tool that wrote it, never run."""

    is_recorded: ClassVar[bool] = True


@dataclass(frozen=True)
class NcuReport(RecordedReport):
    """An Nsight Compute report (``.ncu-rep``)."""

    kind: ClassVar[str] = "ncu-report"
    tool: ClassVar[Literal["ncu", "rocprof"] | None] = "ncu"


@dataclass(frozen=True)
class NcuCsv(RecordedReport):
    """``ncu --csv`` output (raw or details page)."""

    kind: ClassVar[str] = "ncu-csv"
    tool: ClassVar[Literal["ncu", "rocprof"] | None] = "ncu"


@dataclass(frozen=True)
class RocprofOutput(RecordedReport):
    """rocprof output: a CSV, a rocpd database or a rocprof-compute workload folder."""

    kind: ClassVar[str] = "rocprof-output"
    tool: ClassVar[Literal["ncu", "rocprof"] | None] = "rocprof"
    default_profiler: ClassVar[Literal["ncu", "rocprof", "static"]] = "rocprof"


@dataclass(frozen=True)
class CudaProgramSource(ProfileTarget):
    """A ``.cu`` with ``main()``: built with nvcc, then run under ncu."""

    kind: ClassVar[str] = "cuda-program"
    is_source: ClassVar[bool] = True
    is_built: ClassVar[bool] = True


@dataclass(frozen=True)
class CudaKernelSource(ProfileTarget):
    """A ``.cu`` without ``main()``: nothing launches its kernels, so it is analysed statically."""

    kind: ClassVar[str] = "cuda-kernel"
    default_profiler: ClassVar[Literal["ncu", "rocprof", "static"]] = "static"
    is_source: ClassVar[bool] = True


@dataclass(frozen=True)
class HipProgramSource(ProfileTarget):
    """A ``.hip`` program: run under rocprof."""

    kind: ClassVar[str] = "hip-program"
    default_profiler: ClassVar[Literal["ncu", "rocprof", "static"]] = "rocprof"
    is_source: ClassVar[bool] = True


@dataclass(frozen=True)
class ScriptRun(ProfileTarget):
    """A Python script, run with this interpreter under the profiler."""

    kind: ClassVar[str] = "python-script"


@dataclass(frozen=True)
class CommandLine(ProfileTarget):
    """Any command after ``--``, run under the profiler."""

    kind: ClassVar[str] = "command"


def resolve_target(target: str | Path | ProfileTarget | None, command: Sequence[str] = ()) -> ProfileTarget:
    """Classify ``target`` (a path) or ``command`` (argv after ``--``); a ``ProfileTarget`` is already resolved
    (a command resolves its target once and hands the result down).

    Raises:
        BadInput: nothing given, the path does not exist, or its type is not supported.
    """
    if isinstance(target, ProfileTarget):
        return target
    if target is None or str(target) == "":
        if command:
            return CommandLine(command=list(command))
        raise BadInput("no target given", hint="pass a report, a .cu/.py file, or a command after `--`")
    path = Path(target)
    if not path.exists():
        raise BadInput(
            f"{path} does not exist", hint="check the path (reports: .ncu-rep, .csv; sources: .cu, .hip, .py)"
        )
    if path.is_dir():
        if (path / "record.json").is_file():
            return SavedRun(path=path / "record.json")
        if (path / "pmc_perf.csv").is_file() or get_profiler("rocprof").can_read(path):
            return RocprofOutput(path=path)
        raise BadInput(
            f"{path} is a folder that is neither a perfagent run nor a rocprof-compute workload",
            hint="pass a report file, a run folder (with record.json) or a workload folder (with pmc_perf.csv)",
        )
    suffix = path.suffix.lower()
    if suffix in (".ncu-rep", ".ncu-repz"):
        return NcuReport(path=path)
    if suffix == ".csv":
        return _csv_kind(path)(path=path)
    if suffix in (".db", ".sqlite"):
        return RocprofOutput(path=path)
    if suffix == ".json":
        return SavedRun(path=path)
    if suffix == ".cu":
        text = _text(path)
        if _MAIN.search(text):
            return CudaProgramSource(path=path, command=list(command))
        # a file that includes local sources may get its kernels from them: nvcc decides (static analysis)
        if not _GLOBAL.search(text) and not _LOCAL_INCLUDE.search(text):
            raise BadInput(
                f"{path} defines no __global__ kernel and no main()",
                hint="point at the .cu file that defines the kernels (or a program with main() that launches them)",
            )
        return CudaKernelSource(path=path, command=list(command))
    if suffix in (".hip",):
        _text(path)  # readable, text, not empty
        return HipProgramSource(path=path, command=list(command))
    if suffix == ".py":
        _text(path)
        return ScriptRun(path=path, command=[sys.executable, str(path), *command])
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


def _csv_kind(path: Path) -> type[RecordedReport]:
    try:
        with path.open(errors="replace") as fh:
            head = fh.read(4096)
    except OSError as exc:
        raise BadInput(f"cannot read {path}: {exc.strerror}", hint="check its permissions") from exc
    # ncu's raw and details pages quote every identity column; rocprof uses Kernel_Name.
    if '"Kernel Name"' in head.split("\n", 1)[0]:
        return NcuCsv
    return RocprofOutput
