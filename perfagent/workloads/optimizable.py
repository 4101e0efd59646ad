"""The three kinds the optimize loop rewrites, each with its oracle and its candidates.

- ``LaunchSpecTarget`` (``cuda-kernel``): a ``.cu`` kernel file with a launch spec (or the spec itself). The
  original is the oracle; candidates are launched through the same spec (their ``-D`` macros in a
  per-candidate copy).
- ``KernelBenchTarget`` (``kernelbench``): a KernelBench problem (``Model`` + ``get_inputs``), optionally with
  ``ModelNew`` in the same file, or a ``ModelNew`` file given with ``problem=`` (the oracle). Candidates are
  ModelNew files.
- ``TritonScriptTarget`` (``triton-script``): a Python script with ``@triton.jit`` kernels and no KernelBench
  interface; it is its own correctness check (run it: exit 0 = correct), timed through the profiler's kernel
  durations.

``perfagent.workloads.describe.describe_target`` resolves the user's paths into a ``TargetDescription``, once;
``perfagent.workloads.registry.optimize_workload`` chooses the class from it.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal, cast

from perfagent.target import FileRole, TargetDescription
from perfagent.workloads.base import Language, Timer, Verification, Workload
from perfagent.workloads.harness_choice import HarnessChoice, choose_harness, torch_harness
from perfagent.workloads.model import (
    KernelBenchModel,
    LaunchSpecKernel,
    RunnableWorkload,
    TritonScript,
    absolute,
)
from perfagent.workloads.python_ast import parse_module
from perfagent.workloads.triton_script import jit_kernels
from profilers.base import workload_nvtx_include
from profilers.core_errors import BadInput

HARNESS = "perfagent.workloads.run_spec"
"""The module ncu profiles a launch-spec kernel or a KernelBench problem through (torch); a launch-spec
kernel goes through ``torch_free_harness`` instead where ``harness_choice`` finds it serves the spec."""
PROFILE_REPEAT = 2
"""Launches the harness makes under ncu (each is profiled and aggregated)."""
SCRIPT_REPEAT = 3
"""EXAMPLE_REPS for a Triton script under ncu (the examples read it; others ignore it)."""
REPORT_COMMAND = "perfagent profile --save-report base.ncu-rep -- python3"
"""How a report of the original is recorded on a GPU machine (``--report``), before the workload's own argv."""
ShowPath = Callable[[Path], str]


@dataclass(frozen=True)
class OptimizeWorkload(Workload):
    """A resolved optimize target: the behaviour of one kind over its ``TargetDescription`` (the user's file,
    its oracle, and how candidates are built and run). ``perfagent.workloads.registry`` chooses the class."""

    kind: ClassVar[Literal["cuda-kernel", "kernelbench", "triton-script"]]
    description: TargetDescription
    """The target as it was resolved, once: files and hashes, entry, Triton kernels, capabilities."""

    @property
    def file(self) -> Path:
        """The user's file the loop rewrites (absolute). ``--apply`` writes here, nowhere else."""
        return self.description.primary

    @property
    def language(self) -> Language:
        return cast(Language, self.description.language)

    @property
    def spec_path(self) -> Path | None:
        """cuda-kernel: the launch spec (the oracle's launch contract); None for every other kind."""
        return self.description.file(FileRole.SPEC)

    @property
    def problem(self) -> Path | None:
        """kernelbench: the problem file whose ``Model`` is the oracle."""
        return self.description.file(FileRole.PROBLEM)

    @property
    def entry(self) -> str | None:
        """cuda-kernel: the kernel's entry point."""
        return self.description.entry

    @property
    def jit_kernels(self) -> tuple[str, ...]:
        """Triton kernels the file defines (the profile is filtered to them)."""
        return self.description.jit_kernels

    @property
    def has_model_new(self) -> bool:
        """kernelbench: the file already defines ``ModelNew`` (the starting point the loop must beat)."""
        return self.description.has_model_new

    statically_analysable: ClassVar[bool] = False
    """Without a GPU, nvcc/ptxas can still diagnose the original (a ``.cu`` file)."""
    kernels_in_candidate: ClassVar[bool] = False
    """The kernels to diagnose live in the candidate file, not the oracle's (KernelBench: ``Model`` is PyTorch)."""
    shares_timing_worker: ClassVar[bool] = False
    """Candidates may be timed together in one process: they carry device code only, no host code that
    could patch what times the others. Python candidates (a ``ModelNew``, a Triton script) run their
    module at import, so each is timed in a fresh process."""
    candidate_may_build_extension: ClassVar[bool] = False
    """A candidate may build a CUDA extension (``load_inline``) when its module is imported: without a GPU
    it can be neither built nor run, which is the machine's failure, not the code's."""

    def retargeted(self, file: Path | None = None, **facts: object) -> OptimizeWorkload:
        """This workload after the loop changed its target: ``file``, a new file perfagent writes (a first
        ``ModelNew``); ``facts``, description fields the loop learnt (``language``, ``jit_kernels``, ...)."""
        described = self.description if file is None else self.description.with_own_primary(file)
        changed = dataclasses.replace(self, description=described.model_copy(update=facts))
        filtered = changed.description.model_copy(update={"kernel_filter": changed.kernel_regex()})
        return dataclasses.replace(changed, description=filtered)

    @property
    def suffix(self) -> str:
        return self.file.suffix

    @property
    def is_plain_pytorch(self) -> bool:
        """A KernelBench problem with no kernel yet (no ``ModelNew``, no Triton or CUDA): nothing to rewrite."""
        return False

    @property
    def start_file(self) -> Path | None:
        """The file whose speed-up over the oracle the loop starts from (None: the oracle itself)."""
        return None

    @abstractmethod
    def reference(self, spec_path: Path | None = None) -> RunnableWorkload:
        """The oracle as a verification/timing workload (``spec_path``: a per-candidate spec copy)."""

    @abstractmethod
    def candidate(self, path: Path, spec_path: Path | None = None) -> RunnableWorkload:
        """A candidate file as a verification/timing workload."""

    def profile_harness(self, spec: Path | None) -> HarnessChoice | None:
        """The perfagent harness ncu starts for this workload, and why (None: the workload is its own program)."""
        return None

    @abstractmethod
    def harness_command(
        self, python: list[str], file: Path, spec: Path | None, harness: HarnessChoice | None = None
    ) -> list[str]:
        """The command ncu profiles for ``file`` (the original or a candidate); ``python`` runs the harness,
        ``harness`` (from ``profile_harness``; None: ``HARNESS``) says which module."""

    @abstractmethod
    def report_command(self, shown: ShowPath) -> str:
        """How to record a report of the original on a GPU machine, for ``--report``."""

    def nvtx_include(self) -> list[str]:
        """ncu NVTX filters for ``harness_command`` (none: every kernel of the run)."""
        return []

    def kernel_regex(self, source: str | None = None) -> str | None:
        """Regular expression selecting this workload's kernels in a profile (None: every kernel)."""
        names = _jit_names(source) if source is not None else self.jit_kernels
        if names:
            return "^(" + "|".join(re.escape(n) for n in names) + ")$"
        return None


@dataclass(frozen=True)
class LaunchSpecTarget(OptimizeWorkload):
    """A ``.cu`` kernel launched through its launch spec (verified and timed on a GPU only)."""

    kind: ClassVar[Literal["cuda-kernel"]] = "cuda-kernel"
    runs_on_cpu: ClassVar[bool] = False
    verified_by: ClassVar[Verification | None] = "oracle"
    timed_by: ClassVar[Timer | None] = "cuda-events"
    statically_analysable: ClassVar[bool] = True
    shares_timing_worker: ClassVar[bool] = True

    def describe(self) -> str:
        return f"{self.file.name}:{self.entry} (launch spec {self.spec_path.name if self.spec_path else '?'})"

    def reference(self, spec_path: Path | None = None) -> RunnableWorkload:
        return LaunchSpecKernel(
            path=str(self.file), spec_path=str(spec_path or self.spec_path), backend="cuda"
        )

    def candidate(self, path: Path, spec_path: Path | None = None) -> RunnableWorkload:
        return LaunchSpecKernel(path=str(path), spec_path=str(spec_path or self.spec_path), backend="cuda")

    def profile_harness(self, spec: Path | None) -> HarnessChoice | None:
        return choose_harness(spec or self.spec_path or self.file)

    def harness_command(
        self, python: list[str], file: Path, spec: Path | None, harness: HarnessChoice | None = None
    ) -> list[str]:
        assert spec is not None
        kernel_file = absolute(str(file))
        return [
            *python,
            "-m",
            harness.module if harness else HARNESS,
            absolute(str(spec)),
            "--kernel-file",
            kernel_file,
            "--repeat",
            str(PROFILE_REPEAT),
        ]

    def report_command(self, shown: ShowPath) -> str:
        spec = shown(self.spec_path or self.file)
        return f"{REPORT_COMMAND} -m {HARNESS} {spec} --kernel-file {shown(self.file)}"

    def kernel_regex(self, source: str | None = None) -> str | None:
        if not self.entry:
            return super().kernel_regex(source)
        # ncu names a template instance's function without its arguments (`f`, not `f<double, 2>`).
        return f"^{re.escape(self.entry.split('<', 1)[0].strip())}$"


@dataclass(frozen=True)
class KernelBenchTarget(OptimizeWorkload):
    """A KernelBench problem or ``ModelNew`` file; the problem's ``Model`` is the oracle."""

    kind: ClassVar[Literal["kernelbench"]] = "kernelbench"
    verified_by: ClassVar[Verification | None] = "oracle"
    timed_by: ClassVar[Timer | None] = "cuda-events"
    kernels_in_candidate: ClassVar[bool] = True
    candidate_may_build_extension: ClassVar[bool] = True

    @property
    def is_plain_pytorch(self) -> bool:
        return self.language == "python" and not self.has_model_new

    @property
    def start_file(self) -> Path | None:
        return self.file if self.has_model_new else None

    def describe(self) -> str:
        oracle = self.problem.name if self.problem else "?"
        return f"{self.file.name} (KernelBench, oracle {oracle}:Model)"

    def reference(self, spec_path: Path | None = None) -> RunnableWorkload:
        assert self.problem is not None
        return KernelBenchModel(path=str(self.problem), class_name="Model", backend="pytorch")

    def candidate(self, path: Path, spec_path: Path | None = None) -> RunnableWorkload:
        return KernelBenchModel(path=str(path), class_name="ModelNew", backend="triton")

    def profile_harness(self, spec: Path | None) -> HarnessChoice | None:
        return torch_harness("a KernelBench problem's Model runs through torch")

    def harness_command(
        self, python: list[str], file: Path, spec: Path | None, harness: HarnessChoice | None = None
    ) -> list[str]:
        assert self.problem is not None
        cmd = [*python, "-m", HARNESS, absolute(str(self.problem)), "--repeat", str(PROFILE_REPEAT)]
        if file != self.problem or self.has_model_new:
            cmd += ["--candidate", absolute(str(file))]
        return cmd

    def report_command(self, shown: ShowPath) -> str:
        problem = shown(self.problem or self.file)
        extra = f" --candidate {shown(self.file)}" if self.problem != self.file or self.has_model_new else ""
        return f"{REPORT_COMMAND} -m {HARNESS} {problem}{extra}"

    def nvtx_include(self) -> list[str]:
        """Only the ``forward()`` calls (the harness wraps each in an NVTX range), not the kernels that prepare
        inputs or build the model."""
        return [workload_nvtx_include()]


@dataclass(frozen=True)
class TritonScriptTarget(OptimizeWorkload):
    """A Triton script that checks itself (exit 0 = correct), timed through ncu's kernel durations."""

    kind: ClassVar[Literal["triton-script"]] = "triton-script"
    verified_by: ClassVar[Verification | None] = "check-command"
    timed_by: ClassVar[Timer | None] = "ncu"

    def describe(self) -> str:
        return f"{self.file.name} (Triton script: {', '.join(self.jit_kernels)})"

    def reference(self, spec_path: Path | None = None) -> RunnableWorkload:
        return TritonScript(path=str(self.file), backend="triton")

    def candidate(self, path: Path, spec_path: Path | None = None) -> RunnableWorkload:
        return TritonScript(path=str(path), backend="triton")

    def harness_command(
        self, python: list[str], file: Path, spec: Path | None, harness: HarnessChoice | None = None
    ) -> list[str]:
        return ["env", f"EXAMPLE_REPS={SCRIPT_REPEAT}", sys.executable, absolute(str(file))]

    def report_command(self, shown: ShowPath) -> str:
        return f"{REPORT_COMMAND} {shown(self.file)}"


KINDS: dict[str, type[OptimizeWorkload]] = {
    cls.kind: cls for cls in (LaunchSpecTarget, KernelBenchTarget, TritonScriptTarget)
}
"""The optimize kinds by their serialized name (suite manifests and run records name them)."""


def kind_class(kind: str) -> type[OptimizeWorkload]:
    """The class of a serialized optimize kind ('cuda-kernel', 'kernelbench', 'triton-script').

    Raises:
        BadInput: ``kind`` names no optimize kind.
    """
    try:
        return KINDS[kind]
    except KeyError:
        raise BadInput(f"unknown workload kind '{kind}'", hint=f"one of: {', '.join(KINDS)}") from None


def _jit_names(source: str) -> tuple[str, ...]:
    try:
        return tuple(jit_kernels(parse_module(source)))
    except SyntaxError:
        return ()
