"""The one place where a ``TargetDescription``'s kind chooses the code that handles it.

Stages read the description (files, capabilities) and call the behaviour the registry gives them: an
``OptimizeWorkload`` for the loop (how the oracle and candidates are built, run and profiled), a
``ProfileTarget`` for ``perfagent.profile`` (how the file is read, built or run under a profiler). Nothing
here reads a file: the description already says what the file is.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from perfagent.target import TargetDescription, TargetKind
from perfagent.workloads.optimizable import (
    KernelBenchTarget,
    LaunchSpecTarget,
    OptimizeWorkload,
    TritonScriptTarget,
)
from perfagent.workloads.targets import (
    CudaKernelSource,
    CudaProgramSource,
    HipProgramSource,
    NcuCsv,
    NcuReport,
    ProfileTarget,
    RocprofOutput,
    SavedRun,
    ScriptRun,
)
from profilers.core_errors import BadInput

_OPTIMIZE: dict[TargetKind, type[OptimizeWorkload]] = {
    TargetKind.CUDA_KERNEL: LaunchSpecTarget,
    TargetKind.KERNELBENCH: KernelBenchTarget,
    TargetKind.TRITON_SCRIPT: TritonScriptTarget,
}
"""The kinds the optimize loop rewrites."""

_RUN_AS_SCRIPT = (TargetKind.KERNELBENCH, TargetKind.TRITON_SCRIPT, TargetKind.PYTHON_SCRIPT)
"""Python files: the profiler runs them with this interpreter."""

_PROFILE: dict[TargetKind, Callable[..., ProfileTarget]] = {
    TargetKind.CUDA_KERNEL: CudaKernelSource,
    TargetKind.CUDA_PROGRAM: CudaProgramSource,
    TargetKind.HIP_PROGRAM: HipProgramSource,
    TargetKind.NCU_REPORT: NcuReport,
    TargetKind.NCU_CSV: NcuCsv,
    TargetKind.ROCPROF_OUTPUT: RocprofOutput,
    TargetKind.RUN_RECORD: SavedRun,
}
"""The kinds a profiler reads, builds or runs as a file (the command is handed over as given)."""


def optimize_workload(description: TargetDescription) -> OptimizeWorkload:
    """The optimize loop's handling of ``description``.

    Raises:
        BadInput: the target cannot be rewritten (its ``can_rewrite`` says why and what to do).
    """
    description.can_rewrite.require()
    chosen = _OPTIMIZE.get(description.kind)
    if chosen is None:  # a description that says it can be rewritten, of a kind the loop has no code for
        raise BadInput(f"cannot optimize a {description.kind.value} target", hint="see docs/optimize.md")
    return chosen(description=description)


def profile_target(description: TargetDescription, command: Sequence[str] = ()) -> ProfileTarget:
    """What ``perfagent.profile`` reads or runs for ``description`` (``command``: the program's arguments).

    Raises:
        BadInput: the target cannot be profiled (its ``can_profile`` says why and what to do).
    """
    description.can_profile.require()
    path = description.primary
    if description.kind in _RUN_AS_SCRIPT:
        return ScriptRun(path=path, command=[sys.executable, str(path), *command])
    chosen = _PROFILE.get(description.kind)
    if chosen is None:
        raise BadInput(f"cannot profile a {description.kind.value} target", hint="see docs/diagnose.md")
    return chosen(path=path, command=list(command))
