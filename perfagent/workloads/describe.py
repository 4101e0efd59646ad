"""The one classification of a target: whatever a perfagent command was pointed at, described once.

``describe_target`` turns a path (or a command line after ``--``) into a ``perfagent.target.TargetDescription``
for every entry point: ``diagnose``, ``profile``, ``report``, the TUI, the MCP tools and ``optimize``. Recorded
data (reports, saved runs) and commands are described here; the sources the loop can rewrite (``.cu``,
launch specs, Python) are described by ``detect.describe_source``, loaded on first use so that reading a
report imports no launch-spec or KernelBench code (CLI start-up, tests/unit/test_import_cost.py).

What a command cannot do with a target is said by the description's capabilities, each in that command's
words: a missing file or a type perfagent does not know is described as ``TargetKind.UNKNOWN`` whose
``can_profile`` and ``can_rewrite`` give the cause and the next step, and the command that asks raises it.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from perfagent import workloads
from perfagent.target import Capability, FileRole, TargetDescription, TargetFile, TargetKind, hashed
from profilers import get_profiler
from profilers.core_errors import BadInput

__all__ = ["Describe", "describe_target", "source_text"]

_NOT_REWRITTEN_HINT = "give a .cu kernel with a launch spec, a KernelBench problem (.py), or a Triton script"
_SOURCES = (".cu", ".cuh", ".toml", ".py")
"""What ``detect.describe_source`` reads: the kinds the loop may rewrite."""


class Describe(Protocol):
    """The one classification of a target (``describe_target``); an entry point takes it as a parameter so
    that a test hands in a spy and counts the calls."""

    def __call__(
        self,
        target: str | Path | None,
        command: Sequence[str] = (),
        *,
        problem: str | Path | None = None,
        spec: str | Path | None = None,
        report: str | Path | None = None,
    ) -> TargetDescription: ...


def describe_target(
    target: str | Path | None,
    command: Sequence[str] = (),
    *,
    problem: str | Path | None = None,
    spec: str | Path | None = None,
    report: str | Path | None = None,
) -> TargetDescription:
    """Describe what the user pointed a command at, once.

    Args:
        target: a report (.ncu-rep, ncu/rocprof CSV, rocpd database, rocprof-compute folder), a saved run
            (folder or record.json), a source (.cu, .hip, launch spec .toml, .py), or None with ``command``.
        command: the command line to run (no ``target``), or the program's arguments.
        problem: the KernelBench problem (oracle) of a ``ModelNew`` target (optimize).
        spec: the launch spec of a ``.cu`` target when it is not found beside it.
        report: a recorded report of the original (``optimize --report``), hashed with the target's files.

    Returns:
        The description; what cannot be done with the target is a capability that says why.

    Raises:
        BadInput: nothing given, or a source that cannot be read (binary, empty, invalid launch spec).
    """
    if target is None or str(target) == "":
        if command:
            return _not_a_source(TargetKind.COMMAND, shlex.join(command), (), "a command line")
        raise BadInput("no target given", hint="pass a report, a .cu/.py file, or a command after `--`")
    path = Path(target)
    if path.suffix.lower() in _SOURCES and path.is_file():
        described = workloads.describe_source(path, problem=problem, spec=spec)
        described = described.model_copy(update={"label": str(path)})
    else:
        described = _recorded_or_unknown(path)
    if report is None:
        return described
    return described.model_copy(update={"files": (*described.files, hashed(FileRole.REPORT, Path(report)))})


def _recorded_or_unknown(path: Path) -> TargetDescription:
    """A report, a saved run or a HIP program by its suffix or folder layout; else nothing known."""
    if not path.exists():
        return _unknown(
            path,
            Capability(
                able=False,
                reason=f"{path} does not exist",
                hint="check the path (reports: .ncu-rep, .csv; sources: .cu, .hip, .py)",
            ),
            f"{path} does not exist or is not a file",
            "pass the kernel source to optimize",
        )
    if path.is_dir():
        return _folder(path)
    suffix = path.suffix.lower()
    kind = {
        ".ncu-rep": TargetKind.NCU_REPORT,
        ".ncu-repz": TargetKind.NCU_REPORT,
        ".db": TargetKind.ROCPROF_OUTPUT,
        ".sqlite": TargetKind.ROCPROF_OUTPUT,
        ".json": TargetKind.RUN_RECORD,
        ".hip": TargetKind.HIP_PROGRAM,
    }.get(suffix)
    if suffix == ".csv":
        kind = _csv_kind(path)
    if kind is TargetKind.HIP_PROGRAM:
        source_text(path)  # readable, text, not empty
    if kind is None:
        return _unknown(
            path,
            Capability(
                able=False,
                reason=f"don't know how to profile '{path.name}'",
                hint="supported: .ncu-rep, ncu/rocprof .csv, .cu, .hip, .py, a run folder, or any command after `--`",
            ),
            f"cannot optimize {path.name}",
            _NOT_REWRITTEN_HINT,
            _cannot_verify(path.name),
        )
    return _not_a_source(kind, str(path), (hashed(FileRole.PRIMARY, path),), path.name)


def _folder(path: Path) -> TargetDescription:
    """A perfagent run folder (its record.json) or a rocprof-compute workload folder."""
    if (path / "record.json").is_file():
        record = path / "record.json"
        return _not_a_source(
            TargetKind.RUN_RECORD, str(record), (hashed(FileRole.PRIMARY, record),), path.name
        )
    if (path / "pmc_perf.csv").is_file() or get_profiler("rocprof").can_read(path):
        return _not_a_source(
            TargetKind.ROCPROF_OUTPUT, str(path), (hashed(FileRole.PRIMARY, path),), path.name
        )
    return _unknown(
        path,
        Capability(
            able=False,
            reason=f"{path} is a folder that is neither a perfagent run nor a rocprof-compute workload",
            hint="pass a report file, a run folder (with record.json) or a workload folder (with pmc_perf.csv)",
        ),
        f"{path} does not exist or is not a file",
        "pass the kernel source to optimize",
    )


def _not_a_source(
    kind: TargetKind, label: str, files: tuple[TargetFile, ...], name: str
) -> TargetDescription:
    """Recorded data, a HIP program or a command: profiled or read, never verified, timed or rewritten."""
    cannot = Capability(able=False, reason=f"cannot optimize {name}", hint=_NOT_REWRITTEN_HINT)
    language = "hip" if kind is TargetKind.HIP_PROGRAM else "unknown"
    return TargetDescription(
        kind=kind,
        label=label,
        language=language,
        files=files,
        can_verify=_cannot_verify(name),
        can_time=_cannot_verify(name),
        can_rewrite=cannot,
    )


def _cannot_verify(name: str) -> Capability:
    return Capability(
        able=False,
        reason=f"don't know how to verify {name}",
        hint="give a KernelBench problem (.py with Model), a launch spec (.launch.toml) or a .cu kernel file",
    )


def _unknown(
    path: Path,
    cannot_profile: Capability,
    rewrite_reason: str,
    rewrite_hint: str,
    cannot_verify: Capability | None = None,
) -> TargetDescription:
    """Nothing perfagent can work with; each command's capability says why in its own words."""
    return TargetDescription(
        kind=TargetKind.UNKNOWN,
        label=str(path),
        can_profile=cannot_profile,
        can_verify=cannot_verify or cannot_profile,
        can_time=cannot_verify or cannot_profile,
        can_rewrite=Capability(able=False, reason=rewrite_reason, hint=rewrite_hint),
    )


def source_text(path: Path) -> str:
    """A source file's text.

    Raises:
        BadInput: it is unreadable, binary or empty (nothing to profile or rewrite).
    """
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
