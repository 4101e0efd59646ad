"""The one ``Workload`` type: what the user pointed perfagent at, one small class per kind.

Every kind answers the same questions through class attributes and methods, so that callers ask the
workload instead of comparing its ``kind`` string:

- ``describe()``: a short label for messages and records;
- ``is_recorded``: existing data (a report, a saved run) that needs no run;
- ``runs_on_cpu``: whether it can be verified without a GPU;
- ``verified_by``: 'oracle' (outputs compared with a reference), 'check-command' (a command that says
  pass or fail) or None (nothing to verify: a report);
- ``timed_by``: 'cuda-events' (perfagent's interleaved timing harness), 'ncu' (the profiler's kernel
  durations) or None.

The kinds come in two families of ``Workload`` classes, each in its own module, beside a third that is one
class:

- ``model``: what verification and timing run (a KernelBench ``Model``/``ModelNew``, a launch-spec kernel,
  a CUDA program, a Triton or Python script); pydantic, they cross into the worker process;
- ``targets``: what ``profile``/``diagnose`` read or run: one ``ProfileTarget`` (a description and the way
  the registry chose for its kind), not a ``Workload`` subclass per kind;
- ``optimizable``: what the optimize loop rewrites (launch-spec kernel, KernelBench problem, Triton script),
  with its oracle and candidates as ``model`` workloads.

An optimize target is resolved once into a ``perfagent.target.TargetDescription`` (files, hashes,
capabilities); its ``OptimizeWorkload`` is the behaviour over that description, chosen by
``perfagent.workloads.registry``.

``kind`` is the serialized name (saved records, suite manifests, the worker's request) and never changes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar, Literal

Language = Literal["cuda", "triton", "python"]
"""Source language: 'cuda' (CUDA C++), 'triton' (a Python file with @triton.jit kernels), 'python'
(PyTorch / KernelBench ``ModelNew`` without Triton, or any other Python)."""
Verification = Literal["oracle", "check-command"]
"""How a candidate is judged correct: compared with an oracle's outputs, or by a command's exit status."""
Timer = Literal["cuda-events", "ncu"]
"""What times a workload: perfagent's CUDA-event harness, or the profiler's kernel durations."""


class Workload(ABC):
    """What the user pointed perfagent at; subclasses are the kinds."""

    if TYPE_CHECKING:  # a field of the pydantic kinds, a class constant of the others

        @property
        def kind(self) -> str:
            """The kind's serialized name ('kernelbench', 'cuda-kernel', 'ncu-report', ...)."""

    is_recorded: ClassVar[bool] = False
    """Existing data (a report, a saved run) that is read, never run."""
    runs_on_cpu: ClassVar[bool] = True
    """Can be verified without a GPU (a launch-spec kernel cannot: it is launched through CUDA)."""
    verified_by: ClassVar[Verification | None] = None
    """How a candidate of this kind is judged correct (None: there is nothing to verify)."""
    timed_by: ClassVar[Timer | None] = None
    """What times it on a GPU (None: it is not timed)."""

    @abstractmethod
    def describe(self) -> str:
        """A short label for messages and records ('file.py:ModelNew', 'slow.cu:k (launch spec k.launch.toml)')."""
