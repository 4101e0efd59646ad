"""KernelBench problems: ``Model``, ``get_inputs``, ``get_init_inputs`` and a candidate ``ModelNew``.

Two sides. The parent inspects files statically (``inspect_python``: classes, functions, backend)
without importing them, so that a broken or hostile candidate never runs inside perfagent. The
worker process imports them (``load_module``) to run them.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from perfagent.errors import BadInput
from perfagent.workloads.model import Backend
from perfagent.workloads.triton_script import jit_kernels


@dataclass(frozen=True)
class PythonInfo:
    """What a Python file defines, read from its syntax tree."""

    path: Path
    text: str
    tree: ast.Module
    classes: frozenset[str]
    functions: frozenset[str]
    jit_kernels: tuple[str, ...] = ()
    backend: Backend = "pytorch"
    cuda_sources: tuple[str, ...] = field(default=())
    """String literals that contain CUDA kernels (``__global__``)."""

    @property
    def is_problem(self) -> bool:
        """Defines ``Model`` and ``get_inputs``: a KernelBench problem."""
        return "Model" in self.classes and "get_inputs" in self.functions


def inspect_python(path: str | Path) -> PythonInfo:
    """Parse ``path`` (never import it).

    Raises:
        BadInput: missing, unreadable, or not valid Python.
    """
    p = Path(path)
    try:
        text = p.read_text()
    except FileNotFoundError:
        raise BadInput(f"{p} does not exist", hint="check the path") from None
    except UnicodeDecodeError:
        raise BadInput(
            f"{p} is not a text file (not UTF-8: binary?)", hint="pass the Python source"
        ) from None
    except OSError as exc:
        raise BadInput(
            f"cannot read {p}: {exc.strerror or exc}", hint="check the file's permissions"
        ) from None
    try:
        tree = ast.parse(text, filename=str(p))
    except SyntaxError as exc:
        raise BadInput(
            f"{p} is not valid Python (line {exc.lineno}: {exc.msg})", hint="fix the syntax"
        ) from None
    classes = frozenset(n.name for n in tree.body if isinstance(n, ast.ClassDef))
    functions = frozenset(n.name for n in tree.body if isinstance(n, ast.FunctionDef))
    jits = tuple(jit_kernels(tree))
    cuda = tuple(
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and "__global__" in n.value
    )
    backend: Backend
    if cuda or re.search(r"\bload_inline\b|cpp_extension", text):
        backend = "cuda"
    elif jits:
        backend = "triton"
    else:
        backend = "pytorch"
    return PythonInfo(
        path=p,
        text=text,
        tree=tree,
        classes=classes,
        functions=functions,
        jit_kernels=jits,
        backend=backend,
        cuda_sources=cuda,
    )


def load_module(path: str | Path, module_name: str) -> ModuleType:
    """Import a Python file under ``module_name`` (registered in ``sys.modules``; worker side only)."""
    p = Path(path).resolve()
    spec = importlib.util.spec_from_file_location(module_name, p)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {p}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module
