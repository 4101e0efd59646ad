"""The ``Workload``: what verification and timing run, resolved from the user's paths."""

from __future__ import annotations

import os
from typing import Annotated, Literal

from pydantic import AfterValidator

from profilers.model import Frozen

WorkloadKind = Literal["kernelbench", "cuda-kernel", "cuda-program", "triton-script", "python-script"]
Backend = Literal["cuda", "triton", "pytorch", "unknown"]


def absolute(path: str) -> str:
    """``path`` made absolute against the current folder (normalised, symlinks kept).

    Every path that crosses a process boundary goes through this: workers and profilers run in other
    folders (a temporary one, ncu's), where a path relative to the user's folder names nothing.
    """
    return os.path.abspath(os.path.expanduser(path))


AbsolutePath = Annotated[str, AfterValidator(absolute)]
"""A path field that is absolute whatever the caller passed (made so when the model is built)."""


class Workload(Frozen):
    """A resolved workload: a KernelBench problem or candidate, a kernel file with its launch spec,
    a CUDA program with ``main()``, or a Python/Triton script."""

    kind: WorkloadKind
    """kernelbench: ``Model``/``ModelNew`` + ``get_inputs``; cuda-kernel: a ``__global__`` kernel launched
    from a launch spec; cuda-program: a ``.cu`` with ``main()`` (verified only through ``--check-cmd``);
    triton-script / python-script: a script without the KernelBench interface (same)."""
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

    def describe(self) -> str:
        """Short label for messages: 'file.py:ModelNew', 'fixed.cu (spec t.launch.toml)'."""
        from pathlib import Path

        name = Path(self.path).name
        if self.class_name:
            return f"{name}:{self.class_name}"
        if self.spec_path:
            entry = f":{self.kernel}" if self.kernel else ""
            return f"{name}{entry} (spec {Path(self.spec_path).name})"
        return name
