"""The one place where a ``TargetDescription``'s kind chooses the code that handles it.

Stages read the description (files, capabilities) and call the behaviour the registry gives them: an
``OptimizeWorkload`` for the loop (how the oracle and candidates are built, run and profiled), a
``ProfileTarget`` for ``perfagent.profile`` (how the file is read, built or run under a profiler). Nothing
here reads a file: the description (``describe.describe_target``, the one classification) says what it is.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from perfagent import workloads
from perfagent.target import CHECK_COMMAND_ONLY, FileRole, TargetDescription, TargetKind
from perfagent.workloads.describe import Describe, describe_target
from perfagent.workloads.model import (
    CudaProgram,
    KernelBenchModel,
    LaunchSpecKernel,
    PythonScript,
    RunnableWorkload,
    TritonScript,
)
from perfagent.workloads.targets import ProfileTarget, ProfileWay
from profilers.core_errors import BadInput

if TYPE_CHECKING:
    from perfagent.workloads.optimizable import OptimizeWorkload

_OPTIMIZE: dict[TargetKind, str] = {
    TargetKind.CUDA_KERNEL: "LaunchSpecTarget",
    TargetKind.KERNELBENCH: "KernelBenchTarget",
    TargetKind.TRITON_SCRIPT: "TritonScriptTarget",
}
"""The kinds the optimize loop rewrites, and their classes in ``workloads.optimizable``, loaded on first use
through the package: that module imports the launch-spec harness choice (numpy among it), which reading a
report or profiling a program never needs (``tests/unit/test_import_cost.py``)."""

_SCRIPT = ProfileWay(runs_script=True)
_PROFILE: dict[TargetKind, ProfileWay] = {
    TargetKind.CUDA_KERNEL: ProfileWay(default_profiler="static", is_source=True),
    TargetKind.CUDA_PROGRAM: ProfileWay(is_source=True, is_built=True),
    TargetKind.HIP_PROGRAM: ProfileWay(default_profiler="rocprof", is_source=True),
    TargetKind.NCU_REPORT: ProfileWay(tool="ncu"),
    TargetKind.NCU_CSV: ProfileWay(tool="ncu"),
    TargetKind.ROCPROF_OUTPUT: ProfileWay(default_profiler="rocprof", tool="rocprof"),
    TargetKind.RUN_RECORD: ProfileWay(),
    TargetKind.COMMAND: ProfileWay(),
    TargetKind.KERNELBENCH: _SCRIPT,
    TargetKind.TRITON_SCRIPT: _SCRIPT,
    TargetKind.PYTHON_SCRIPT: _SCRIPT,
}
"""How a profiler reads, builds or runs each kind (a kernel file without ``main()`` is analysed statically)."""


def optimize_workload(description: TargetDescription) -> OptimizeWorkload:
    """The optimize loop's handling of ``description``.

    Raises:
        BadInput: the target cannot be rewritten (its ``can_rewrite`` says why and what to do).
    """
    description.can_rewrite.require()
    name = _OPTIMIZE.get(description.kind)
    if name is None:  # a description that says it can be rewritten, of a kind the loop has no code for
        raise BadInput(f"cannot optimize a {description.kind.value} target", hint="see docs/optimize.md")
    chosen: type[OptimizeWorkload] = getattr(workloads, name)
    return chosen(description=description)


def profile_target(description: TargetDescription, command: Sequence[str] = ()) -> ProfileTarget:
    """What ``perfagent.profile`` reads or runs for ``description`` (``command``: the program's arguments,
    or the command line itself).

    Raises:
        BadInput: the target cannot be profiled (its ``can_profile`` says why and what to do).
    """
    description.can_profile.require()
    way = _PROFILE.get(description.kind)
    if way is None:
        raise BadInput(f"cannot profile a {description.kind.value} target", hint="see docs/diagnose.md")
    if way.runs_script:
        command = (sys.executable, str(description.primary), *command)
    return ProfileTarget(description=description, command=tuple(command), way=way)


def resolve_profile_target(
    target: str | Path | TargetDescription | ProfileTarget | None,
    command: Sequence[str] = (),
    describe: Describe = describe_target,
) -> ProfileTarget:
    """``target`` described once (``describe``) and its way chosen; a ``ProfileTarget`` is handed back as it
    is (a command resolves its target once and hands the result down), and a ``TargetDescription`` (a stage
    holding the run's one description: the optimize baseline's static analysis) is not described again.

    Raises:
        BadInput: nothing given, or the target cannot be profiled (a missing file, an unknown type).
    """
    if isinstance(target, ProfileTarget):
        return target
    if isinstance(target, TargetDescription):
        return profile_target(target, command)
    return profile_target(describe(target, command), command)


def reference_workload(description: TargetDescription) -> RunnableWorkload:
    """What ``verify`` and ``bench`` run as the reference: the oracle (a KernelBench ``Model``, a launch-spec
    kernel, a self-checking Triton script), or a program or script a check command judges.

    Raises:
        BadInput: it cannot be a reference (its ``can_verify`` says why: no launch spec, no ``get_inputs``,
            a candidate given first, a report, a missing file).
    """
    if description.can_verify != CHECK_COMMAND_ONLY:  # a check command judges programs and scripts
        description.can_verify.require()
    path = str(description.primary)
    backend = description.backend
    match description.kind:
        case TargetKind.CUDA_KERNEL:
            return LaunchSpecKernel(path=path, spec_path=str(description.file(FileRole.SPEC)), backend="cuda")
        case TargetKind.KERNELBENCH:
            problem = str(description.file(FileRole.PROBLEM))
            return KernelBenchModel(path=problem, class_name="Model", backend=backend)
        case TargetKind.CUDA_PROGRAM:
            return CudaProgram(path=path, backend="cuda")
        case TargetKind.TRITON_SCRIPT:
            return TritonScript(path=path, backend=backend)
        case TargetKind.PYTHON_SCRIPT:
            return PythonScript(path=path, backend=backend)
    raise BadInput(f"cannot verify a {description.kind.value} target", hint="see docs/verify.md")
