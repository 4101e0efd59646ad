"""Which of the three optimizable workload kinds a target is, and what the loop needs to know about it.

- ``cuda-kernel``: a ``.cu`` kernel file with a launch spec (or the spec itself). The original is the
  oracle; candidates are launched through the same spec (their ``-D`` macros in a per-candidate copy).
- ``kernelbench``: a KernelBench problem (``Model`` + ``get_inputs``), optionally with ``ModelNew`` in
  the same file, or a ``ModelNew`` file given with ``problem=`` (the oracle). Candidates are ModelNew files.
- ``triton-script``: a Python script with ``@triton.jit`` kernels and no KernelBench interface; it is
  its own correctness check (run it: exit 0 = correct), timed through the profiler's kernel durations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from perfagent.errors import BadInput
from perfagent.rewrite.base import Language
from perfagent.workloads.detect import detect_reference
from perfagent.workloads.kernelbench import inspect_python
from perfagent.workloads.launch_spec import choose_entry, load_launch_spec, override_for
from perfagent.workloads.model import Workload

Kind = Literal["cuda-kernel", "kernelbench", "triton-script"]


@dataclass(frozen=True)
class OptimizeWorkload:
    """A resolved optimize target."""

    kind: Kind
    file: Path
    """The user's file the loop rewrites (absolute). ``--apply`` writes here, nowhere else."""
    language: Language
    spec_path: Path | None = None
    """cuda-kernel: the launch spec (the oracle's launch contract)."""
    problem: Path | None = None
    """kernelbench: the problem file whose ``Model`` is the oracle."""
    entry: str | None = None
    """cuda-kernel: the kernel's entry point."""
    jit_kernels: tuple[str, ...] = ()
    """Triton kernels the file defines (the profile is filtered to them)."""
    has_model_new: bool = False
    """kernelbench: the file already defines ``ModelNew`` (the starting point the loop must beat)."""

    @property
    def suffix(self) -> str:
        return self.file.suffix

    def describe(self) -> str:
        if self.kind == "cuda-kernel":
            return f"{self.file.name}:{self.entry} (launch spec {self.spec_path.name if self.spec_path else '?'})"
        if self.kind == "kernelbench":
            oracle = self.problem.name if self.problem else "?"
            return f"{self.file.name} (KernelBench, oracle {oracle}:Model)"
        return f"{self.file.name} (Triton script: {', '.join(self.jit_kernels)})"

    def reference(self, spec_path: Path | None = None) -> Workload:
        """The oracle as a verification/timing workload (``spec_path``: a per-candidate spec copy)."""
        if self.kind == "cuda-kernel":
            return Workload(
                kind="cuda-kernel",
                path=str(self.file),
                spec_path=str(spec_path or self.spec_path),
                backend="cuda",
            )
        if self.kind == "kernelbench":
            assert self.problem is not None
            return Workload(kind="kernelbench", path=str(self.problem), class_name="Model", backend="pytorch")
        return Workload(kind="triton-script", path=str(self.file), backend="triton")

    def candidate(self, path: Path, spec_path: Path | None = None) -> Workload:
        """A candidate file as a verification/timing workload."""
        if self.kind == "cuda-kernel":
            return Workload(
                kind="cuda-kernel", path=str(path), spec_path=str(spec_path or self.spec_path), backend="cuda"
            )
        if self.kind == "kernelbench":
            return Workload(kind="kernelbench", path=str(path), class_name="ModelNew", backend="triton")
        return Workload(kind="triton-script", path=str(path), backend="triton")

    def kernel_regex(self, source: str | None = None) -> str | None:
        """Regular expression selecting this workload's kernels in a profile (None: every kernel)."""
        if self.kind == "cuda-kernel" and self.entry:
            return f"^{re.escape(self.entry)}$"
        names = _jit_names(source) if source is not None else self.jit_kernels
        if names:
            return "^(" + "|".join(re.escape(n) for n in names) + ")$"
        return None


def _jit_names(source: str) -> tuple[str, ...]:
    import ast

    from perfagent.workloads.triton_script import jit_kernels

    try:
        return tuple(jit_kernels(ast.parse(source)))
    except SyntaxError:
        return ()


def resolve(
    target: str | Path, *, problem: str | Path | None = None, spec: str | Path | None = None
) -> OptimizeWorkload:
    """Resolve what the user pointed at.

    Args:
        target: a ``.cu`` kernel file (launch spec beside it or ``spec``), a launch spec ``.toml``,
            a KernelBench problem ``.py``, a ``ModelNew`` file (with ``problem``), or a Triton script.
        problem: the KernelBench problem (oracle) for a ``ModelNew`` target.
        spec: the launch spec of a ``.cu`` target when it is not found beside it.

    Raises:
        BadInput: the file is missing, or of a kind the loop cannot verify (a ``.cu`` program with
            ``main()``, a plain Python script) — with the next step.
    """
    path = Path(target)
    if not path.is_file():
        raise BadInput(f"{path} does not exist or is not a file", hint="pass the kernel source to optimize")
    suffix = path.suffix.lower()
    if suffix in (".cu", ".cuh", ".toml"):
        ref = detect_reference(path, spec=spec)
        if ref.kind != "cuda-kernel" or ref.spec_path is None:
            raise BadInput(
                f"{path.name} is a CUDA program with main(): perfagent cannot launch and verify its kernels itself",
                hint="optimize a kernel file with a launch spec (e.g. examples/cuda/02_*/slow.cu), see docs/verify.md",
            )
        spec_file = Path(ref.spec_path)
        loaded = load_launch_spec(spec_file)
        file = Path(ref.path).resolve()
        entry = choose_entry(
            loaded,
            file,
            override_for(loaded, file) if file != (spec_file.parent / loaded.source).resolve() else None,
            None,
        )
        return OptimizeWorkload(
            kind="cuda-kernel", file=file, language="cuda", spec_path=spec_file.resolve(), entry=entry
        )
    if suffix != ".py":
        raise BadInput(
            f"cannot optimize {path.name}",
            hint="give a .cu kernel with a launch spec, a KernelBench problem (.py), or a Triton script",
        )
    info = inspect_python(path)
    jits = tuple(info.jit_kernels)
    language: Language = "triton" if jits else "python"
    if problem is not None:
        prob = Path(problem)
        pinfo = inspect_python(prob)
        if not pinfo.is_problem:
            raise BadInput(
                f"{prob.name} is not a KernelBench problem (no Model / get_inputs)",
                hint="--problem takes the problem file",
            )
        if "ModelNew" not in info.classes:
            raise BadInput(
                f"{path.name} defines no ModelNew",
                hint="the file to optimize is a KernelBench candidate (class ModelNew)",
            )
        return OptimizeWorkload(
            kind="kernelbench",
            file=path.resolve(),
            language=language,
            problem=prob.resolve(),
            jit_kernels=jits,
            has_model_new=True,
        )
    if info.is_problem:
        return OptimizeWorkload(
            kind="kernelbench",
            file=path.resolve(),
            language=language,
            problem=path.resolve(),
            jit_kernels=jits,
            has_model_new="ModelNew" in info.classes,
        )
    if "ModelNew" in info.classes:
        raise BadInput(
            f"{path.name} defines ModelNew but no Model: the loop needs the problem as the oracle",
            hint="pass the KernelBench problem with --problem PROBLEM.py",
        )
    if jits:
        return OptimizeWorkload(
            kind="triton-script", file=path.resolve(), language="triton", jit_kernels=jits
        )
    raise BadInput(
        f"{path.name} is a Python script with no Triton kernel and no KernelBench interface",
        hint="wrap it as a KernelBench problem (Model, get_inputs) so that candidates can be verified",
    )
