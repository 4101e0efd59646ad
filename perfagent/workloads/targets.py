"""What ``profile`` and ``diagnose`` read or run: a target's description and the way its kind is profiled.

The kind's way (read with which tool, built, analysed statically, run as a script) is chosen in one place,
``perfagent.workloads.registry.profile_target``; ``ProfileTarget`` only carries it beside the description, so
``perfagent.api`` asks the target instead of comparing kinds.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from perfagent.target import FileRole, TargetDescription, TargetKind

ProfilerName = Literal["ncu", "rocprof", "static"]


@dataclass(frozen=True)
class ProfileWay:
    """How a kind is profiled."""

    default_profiler: ProfilerName = "ncu"
    """What ``--profiler auto`` uses when it is usable here."""
    is_source: bool = False
    """The primary file is a source the profiler gets (builds, static analysis, source correlation)."""
    is_built: bool = False
    """The source is built into a program (nvcc) before it is run."""
    runs_script: bool = False
    """A Python file: run with this interpreter under the profiler."""
    tool: Literal["ncu", "rocprof"] | None = None
    """A recorded report: the profiler that wrote (and reads) it."""


@dataclass(frozen=True)
class ProfileTarget:
    """What ``profile`` / ``diagnose`` read or run: the description, the argv to run and the kind's way."""

    description: TargetDescription
    command: tuple[str, ...] = ()
    """The argv to run (programs, scripts and commands; a source's program is built first)."""
    way: ProfileWay = field(default_factory=ProfileWay)

    @property
    def kind(self) -> TargetKind:
        """The description's kind (a report, a source, a command, ...)."""
        return self.description.kind

    @property
    def path(self) -> Path | None:
        """The file read or run (a saved run's record.json); None for a bare command."""
        return self.description.file(FileRole.PRIMARY)

    @property
    def source(self) -> Path | None:
        """The source file handed to the profiler, if any."""
        return self.path if self.way.is_source else None

    @property
    def is_recorded(self) -> bool:
        """Existing data (a report, a saved run) that is read, never run."""
        return self.kind.is_recorded

    @property
    def is_saved_run(self) -> bool:
        """A perfagent run: its record is loaded as it was saved (nothing profiled, nothing saved again)."""
        return self.kind is TargetKind.RUN_RECORD

    def describe(self) -> str:
        """The target as the user named it (the path as given), else the command line."""
        if self.description.label:
            return self.description.label
        return str(self.path) if self.path is not None else shlex.join(self.command)
