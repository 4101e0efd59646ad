"""Turn the user's paths into ``Workload`` objects (reference and candidate), or say why not.

Rules (all errors are ``BadInput`` with the next step):

- ``*.py`` with ``class Model`` and ``get_inputs``: a KernelBench problem. Its candidate is a
  ``.py`` with ``class ModelNew`` (or the problem file itself, when it defines ``ModelNew``).
- ``*.toml``: a launch spec; the reference is the spec's ``source``.
- ``*.cu``: a kernel file launched from a spec: ``--spec``, else ``<stem>.launch.toml`` beside
  it, else the one ``*.launch.toml`` in its folder that names the file (as ``source`` or a
  variant). Without a spec, a file with ``main()`` is a CUDA program (check-command only).
- any other ``*.py``: a Triton or Python script (check-command only).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from perfagent.errors import BadInput
from perfagent.workloads.kernelbench import inspect_python
from perfagent.workloads.launch_spec import load_launch_spec
from perfagent.workloads.model import Workload

_MAIN = re.compile(r"\bint\s+main\s*\(")
_CUDA_SUFFIXES = (".cu", ".cuh")


def detect_reference(path: str | Path, *, spec: str | Path | None = None) -> Workload:
    """Resolve the reference (the oracle) from a path.

    Raises:
        BadInput: the file is missing or of no supported kind.
    """
    p = _existing(path)
    suffix = p.suffix.lower()
    if suffix == ".toml":
        s = load_launch_spec(p)
        return Workload(
            kind="cuda-kernel", path=str((p.parent / s.source).resolve()), spec_path=str(p), backend="cuda"
        )
    if suffix in _CUDA_SUFFIXES:
        spec_path = Path(spec).resolve() if spec is not None else find_spec_for(p)
        if spec_path is not None:
            load_launch_spec(spec_path)
            return Workload(kind="cuda-kernel", path=str(p), spec_path=str(spec_path), backend="cuda")
        if _MAIN.search(p.read_text(errors="replace")):
            return Workload(kind="cuda-program", path=str(p), backend="cuda")
        raise BadInput(
            f"{p.name} is a kernel file without a launch spec",
            hint=f"write {p.stem}.launch.toml beside it (format: docs/verify.md) or pass --spec PATH",
        )
    if suffix == ".py":
        info = inspect_python(p)
        if info.is_problem:
            return Workload(kind="kernelbench", path=str(p), class_name="Model", backend=info.backend)
        if "ModelNew" in info.classes and "Model" not in info.classes:
            raise BadInput(
                f"{p.name} defines ModelNew but no Model: it is a candidate, not a reference",
                hint="the reference comes first: perfagent verify PROBLEM.py CANDIDATE.py",
            )
        if "Model" in info.classes:
            raise BadInput(
                f"{p.name} defines Model but no get_inputs()",
                hint="a KernelBench problem needs get_inputs() (and get_init_inputs() when Model takes arguments)",
            )
        kind = "triton-script" if info.jit_kernels else "python-script"
        return Workload(kind=kind, path=str(p), backend=info.backend)
    raise BadInput(
        f"don't know how to verify {p.name}",
        hint="give a KernelBench problem (.py with Model), a launch spec (.launch.toml) or a .cu kernel file",
    )


def detect_candidate(path: str | Path | None, reference: Workload, *, kernel: str | None = None) -> Workload:
    """Resolve the candidate (a rewrite) against its reference.

    Args:
        path: the candidate file; None means "the reference file's own ModelNew".
        reference: the resolved reference.
        kernel: explicit entry point of a ``.cu`` candidate.

    Raises:
        BadInput: missing file, wrong kind for this reference, or no ``ModelNew``.
    """
    if reference.kind == "kernelbench":
        p = _existing(path) if path is not None else Path(reference.path)
        info = inspect_python(p)
        if "ModelNew" not in info.classes:
            where = "the candidate" if path is not None else f"{p.name} (no CANDIDATE was given)"
            raise BadInput(
                f"{where} defines no class ModelNew",
                hint="a KernelBench candidate is `class ModelNew(nn.Module)`",
            )
        return Workload(kind="kernelbench", path=str(p), class_name="ModelNew", backend=info.backend)
    if path is None:
        raise BadInput("no CANDIDATE given", hint="pass the rewritten file after the reference")
    p = _existing(path)
    if reference.kind == "cuda-kernel":
        if p.suffix.lower() not in _CUDA_SUFFIXES:
            raise BadInput(
                f"{p.name} is not a .cu file", hint="the candidate of a launch-spec kernel is a .cu rewrite"
            )
        return Workload(
            kind="cuda-kernel", path=str(p), spec_path=reference.spec_path, kernel=kernel, backend="cuda"
        )
    return Workload(kind=reference.kind, path=str(p), backend=reference.backend)


def find_spec_for(kernel_file: Path) -> Path | None:
    """The launch spec that serves ``kernel_file``: ``<stem>.launch.toml`` or the one in its folder naming it."""
    own = kernel_file.with_name(kernel_file.stem + ".launch.toml")
    if own.is_file():
        return own.resolve()
    naming: list[Path] = []
    for candidate in sorted(kernel_file.parent.glob("*.launch.toml")):
        try:
            data = tomllib.loads(candidate.read_text())
        except (OSError, tomllib.TOMLDecodeError):
            continue
        variants = data.get("variants", {})
        if data.get("source") == kernel_file.name or (
            isinstance(variants, dict) and kernel_file.name in variants
        ):
            naming.append(candidate)
    if len(naming) == 1:
        return naming[0].resolve()
    if len(naming) > 1:
        raise BadInput(
            f"several launch specs name {kernel_file.name}: {', '.join(p.name for p in naming)}",
            hint="choose one with --spec PATH",
        )
    return None


def _existing(path: str | Path) -> Path:
    p = Path(path)
    if not p.exists():
        raise BadInput(f"{p} does not exist", hint="check the path")
    if p.is_dir():
        raise BadInput(f"{p} is a folder", hint="pass a file")
    return p.resolve()
