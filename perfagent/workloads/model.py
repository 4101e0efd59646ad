"""The workloads verification and timing run, resolved from the user's paths: one class per kind.

They cross into the worker process inside its request (``AnyRunnable`` reads the right class back by
``kind``), so they are pydantic models with the same fields whatever the kind.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, ClassVar, Literal

from pydantic import AfterValidator, Field

from perfagent.workloads.base import Timer, Verification, Workload
from profilers.core_errors import BadInput
from profilers.model import Frozen

WorkloadKind = Literal["kernelbench", "cuda-kernel", "cuda-program", "triton-script", "python-script"]
Backend = Literal["cuda", "triton", "pytorch", "unknown"]
Runner = Literal["kernelbench", "launch-spec"]
"""How perfagent's own worker runs a workload: 'kernelbench' imports the module and calls ``Model``/``ModelNew``
on seeded inputs; 'launch-spec' compiles the kernel and launches it as its spec says."""


def absolute(path: str) -> str:
    """``path`` made absolute against the current folder (normalised, symlinks kept).

    Every path that crosses a process boundary goes through this: workers and profilers run in other
    folders (a temporary one, ncu's), where a path relative to the user's folder names nothing.
    """
    return os.path.abspath(os.path.expanduser(path))


AbsolutePath = Annotated[str, AfterValidator(absolute)]
"""A path field that is absolute whatever the caller passed (made so when the model is built)."""


class RunnableWorkload(Frozen, Workload):
    """A file verification and timing can run: the reference (oracle) or a candidate."""

    kind: WorkloadKind
    path: AbsolutePath
    """Absolute path of the source file (a relative one is made absolute against the current folder)."""
    class_name: str | None = None
    """kernelbench: the class to instantiate ('Model' for a reference, 'ModelNew' for a candidate)."""
    spec_path: AbsolutePath | None = None
    """cuda-kernel: absolute path of the launch spec."""
    kernel: str | None = None
    """cuda-kernel: explicit entry-point name (else chosen from the spec)."""
    backend: Backend = "unknown"
    """How the code computes: CUDA (``__global__``/``load_inline``), Triton (``@triton.jit``), plain PyTorch."""

    runner: ClassVar[Runner | None] = None
    """How perfagent's worker runs it (None: it cannot; a check command judges it)."""
    reruns_in_float64: ClassVar[bool] = False
    """The oracle can be rerun in float64 to measure its own rounding (a PyTorch ``Model`` by a cast, a
    launch-spec kernel by promoting its source to double when ``double_promotion`` can vouch for it)."""

    def describe(self) -> str:
        """Short label for messages: the file name."""
        return Path(self.path).name

    def candidate_for(self, path: Path, *, kernel: str | None = None) -> RunnableWorkload:
        """A rewrite of this reference at ``path`` (``kernel``: a ``.cu`` candidate's entry point).

        Raises:
            BadInput: ``path`` cannot be a candidate of this kind.
        """
        return type(self).model_validate({"path": str(path), "backend": self.backend})


class KernelBenchModel(RunnableWorkload):
    """A KernelBench ``Model`` (the reference) or ``ModelNew`` (a candidate) with ``get_inputs``."""

    kind: Literal["kernelbench"] = "kernelbench"
    verified_by: ClassVar[Verification | None] = "oracle"
    timed_by: ClassVar[Timer | None] = "cuda-events"
    runner: ClassVar[Runner | None] = "kernelbench"
    reruns_in_float64: ClassVar[bool] = True

    def describe(self) -> str:
        """'file.py:ModelNew'."""
        name = Path(self.path).name
        return f"{name}:{self.class_name}" if self.class_name else name


class LaunchSpecKernel(RunnableWorkload):
    """A ``__global__`` kernel launched from a launch spec (CUDA only: it needs a GPU to run)."""

    kind: Literal["cuda-kernel"] = "cuda-kernel"
    runs_on_cpu: ClassVar[bool] = False
    verified_by: ClassVar[Verification | None] = "oracle"
    timed_by: ClassVar[Timer | None] = "cuda-events"
    runner: ClassVar[Runner | None] = "launch-spec"
    reruns_in_float64: ClassVar[bool] = True

    def describe(self) -> str:
        """'fixed.cu:entry (spec t.launch.toml)'."""
        name = Path(self.path).name
        if not self.spec_path:
            return name
        entry = f":{self.kernel}" if self.kernel else ""
        return f"{name}{entry} (spec {Path(self.spec_path).name})"

    def candidate_for(self, path: Path, *, kernel: str | None = None) -> RunnableWorkload:
        """A ``.cu`` rewrite launched through this reference's spec."""
        if path.suffix.lower() not in (".cu", ".cuh"):
            raise BadInput(
                f"{path.name} is not a .cu file",
                hint="the candidate of a launch-spec kernel is a .cu rewrite",
            )
        return LaunchSpecKernel(path=str(path), spec_path=self.spec_path, kernel=kernel, backend="cuda")


class CudaProgram(RunnableWorkload):
    """A ``.cu`` with ``main()``: perfagent cannot launch its kernels itself (a check command verifies it)."""

    kind: Literal["cuda-program"] = "cuda-program"
    verified_by: ClassVar[Verification | None] = "check-command"


class TritonScript(RunnableWorkload):
    """A Python script with ``@triton.jit`` kernels and no KernelBench interface (a check command verifies it)."""

    kind: Literal["triton-script"] = "triton-script"
    verified_by: ClassVar[Verification | None] = "check-command"


class PythonScript(RunnableWorkload):
    """Any other Python script (a check command verifies it)."""

    kind: Literal["python-script"] = "python-script"
    verified_by: ClassVar[Verification | None] = "check-command"


AnyRunnable = Annotated[
    KernelBenchModel | LaunchSpecKernel | CudaProgram | TritonScript | PythonScript,
    Field(discriminator="kind"),
]
"""A pydantic field holding any runnable workload (read back as the class its ``kind`` names)."""
