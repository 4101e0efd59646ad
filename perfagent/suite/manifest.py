"""What a suite is: entries read from a ``suite.toml`` or found in a folder.

``suite.toml``::

    [[entry]]
    name = "vector_add"                          # unique
    target = "kernelbench/01_vector_add.py"      # problem, kernel (.cu with a launch spec) or spec; relative to the file
    candidate = "kernelbench/01_vector_add_triton.py"   # optional: the rewrite to verify / bench
    options = { iterations = 2 }                 # optional per-entry options (see ``EntryOptions``)

A folder is searched recursively for the same three kinds the single-target commands take:
KernelBench problems (a ``.py`` with ``class Model`` and ``get_inputs``) with every ``ModelNew`` file
whose name starts with the problem's stem as a candidate; ``.cu`` kernels with a ``*.launch.toml``
spec beside them (``slow.cu`` with ``fixed.cu`` as its candidate when both exist); and Triton scripts
(a ``.py`` with ``@triton.jit`` and no ``Model``).
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

from pydantic import Field, ValidationError

from perfagent.workloads.optimizable import KernelBenchTarget, LaunchSpecTarget, TritonScriptTarget
from perfagent.workloads.python_ast import parse_module
from profilers.core_errors import BadInput
from profilers.model import Frozen

SUITE_FILE = "suite.toml"


class EntryOptions(Frozen):
    """Per-entry options; anything unset takes the suite command's value."""

    iterations: int | None = None
    """optimize: rewrite rounds."""
    backend: str | None = None
    """optimize: recipes | llm | auto."""
    transform: str | None = None
    """optimize: one transform id instead of the plan."""
    runs: int | None = None
    """bench: timed rounds."""
    seeds: int | None = None
    """verify: fresh seeds."""
    timeout_s: float | None = None
    """Wall-clock limit of the whole entry, s."""
    kernel: str | None = None
    """diagnose/optimize: kernel name regex."""


class SuiteEntry(Frozen):
    """One unit of work: a target and, optionally, a candidate rewrite of it."""

    name: str
    target: Path
    """Absolute: problem .py, kernel .cu (with spec), spec .launch.toml or Triton script."""
    candidate: Path | None = None
    """Absolute: ``ModelNew`` .py or rewritten .cu."""
    kind: str
    """'kernelbench', 'cuda-kernel' or 'triton-script' (what the target is)."""
    options: EntryOptions = Field(default_factory=EntryOptions)


class _TomlEntry(Frozen):
    name: str
    target: str
    candidate: str | None = None
    options: EntryOptions = Field(default_factory=EntryOptions)


class _TomlSuite(Frozen):
    entry: list[_TomlEntry] = Field(default_factory=list)


def kind_of(target: Path) -> str:
    """The entry kind of a target path (by extension and content)."""
    if target.suffix in {".cu", ".cuh"} or target.name.endswith(".launch.toml"):
        return LaunchSpecTarget.kind
    if target.suffix == ".py":
        return KernelBenchTarget.kind if _defines(target, "Model") else TritonScriptTarget.kind
    raise BadInput(
        f"{target} is not a suite target", hint="targets are .py problems/scripts, .cu kernels or specs"
    )


def _defines(path: Path, cls: str) -> bool:
    try:
        tree = parse_module(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, OSError):
        return False
    return any(isinstance(n, ast.ClassDef) and n.name == cls for n in tree.body)


def load_manifest(path: Path) -> list[SuiteEntry]:
    """Entries of a ``suite.toml`` (paths relative to the file, checked to exist)."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
        suite = _TomlSuite.model_validate(raw)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BadInput(
            f"{path} is not valid TOML: {exc}", hint="see README 'perfagent suite' for the format"
        ) from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise BadInput(
            f"{path}: {where}: {first['msg']}", hint="each [[entry]] needs name and target"
        ) from exc
    base = path.parent.resolve()
    entries: list[SuiteEntry] = []
    for e in suite.entry:
        target = _existing(base / e.target, path, e.name)
        candidate = _existing(base / e.candidate, path, e.name) if e.candidate else None
        entries.append(
            SuiteEntry(
                name=e.name, target=target, candidate=candidate, kind=kind_of(target), options=e.options
            )
        )
    return _unique(entries, path)


def _existing(p: Path, manifest: Path, name: str) -> Path:
    if not p.exists():
        raise BadInput(
            f"{manifest}: entry {name!r}: {p} does not exist", hint="paths are relative to the suite file"
        )
    return p.resolve()


def _unique(entries: list[SuiteEntry], source: Path) -> list[SuiteEntry]:
    seen: set[str] = set()
    for e in entries:
        if e.name in seen:
            raise BadInput(f"{source}: entry name {e.name!r} appears twice", hint="names must be unique")
        seen.add(e.name)
    if not entries:
        raise BadInput(
            f"{source} holds no suite entries", hint="add [[entry]] tables, or point at a folder of targets"
        )
    return entries


def discover(folder: Path) -> list[SuiteEntry]:
    """Entries found in ``folder`` (recursively), named by their path relative to it."""
    root = folder.resolve()
    entries = list(_kernelbench_entries(root)) + list(_cuda_entries(root)) + list(_triton_entries(root))
    return _unique(sorted(entries, key=lambda e: e.name), folder)


def _rel(root: Path, p: Path) -> str:
    return p.relative_to(root).as_posix()


def _python_files(root: Path) -> Iterator[Path]:
    yield from (
        p for p in sorted(root.rglob("*.py")) if "__pycache__" not in p.parts and not p.name.startswith("_")
    )


def _kernelbench_entries(root: Path) -> Iterator[SuiteEntry]:
    files = list(_python_files(root))
    problems = [p for p in files if _defines(p, "Model") and not _defines(p, "ModelNew")]
    for problem in problems:
        # `name.py` pairs with `name_<anything>.py`; `name_problem.py` also with `name_solution.py`.
        prefix = problem.stem.removesuffix("_problem") + "_"
        candidates = [
            p
            for p in files
            if p != problem
            and p.parent == problem.parent
            and p.stem.startswith(prefix)
            and _defines(p, "ModelNew")
        ]
        if not candidates:
            yield SuiteEntry(name=_rel(root, problem), target=problem, kind=KernelBenchTarget.kind)
        for cand in candidates:
            yield SuiteEntry(
                name=_rel(root, cand), target=problem, candidate=cand, kind=KernelBenchTarget.kind
            )


def _cuda_entries(root: Path) -> Iterator[SuiteEntry]:
    for spec in sorted(root.rglob("*.launch.toml")):
        folder = spec.parent
        slow = folder / "slow.cu"
        if slow.is_file():
            fixed = folder / "fixed.cu"
            yield SuiteEntry(
                name=_rel(root, slow),
                target=slow,
                candidate=fixed if fixed.is_file() else None,
                kind=LaunchSpecTarget.kind,
            )
            continue
        for cu in sorted(folder.glob("*.cu")):
            yield SuiteEntry(name=_rel(root, cu), target=cu, kind=LaunchSpecTarget.kind)
            break


_TRITON_JIT = re.compile(r"@triton\.jit|@triton\.autotune")


def _triton_entries(root: Path) -> Iterator[SuiteEntry]:
    for p in _python_files(root):
        if _defines(p, "Model") or _defines(p, "ModelNew"):
            continue
        try:
            text = p.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if _TRITON_JIT.search(text):
            yield SuiteEntry(name=_rel(root, p), target=p, kind=TritonScriptTarget.kind)


def load_suite(path: Path) -> list[SuiteEntry]:
    """Entries of a suite file, or of a folder (its ``suite.toml`` if it has one, else discovered)."""
    if not path.exists():
        raise BadInput(f"{path} does not exist", hint="give a suite.toml or a folder of targets")
    if path.is_dir():
        manifest = path / SUITE_FILE
        return load_manifest(manifest) if manifest.is_file() else discover(path)
    if path.suffix != ".toml":
        raise BadInput(f"{path} is not a suite", hint="give a suite.toml or a folder of targets")
    return load_manifest(path)
