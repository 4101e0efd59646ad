"""KernelBench problems: ``Model``, ``get_inputs``, ``get_init_inputs`` and a candidate ``ModelNew``.

Two sides. The parent inspects files statically (``inspect_python``: classes, functions, backend)
without importing them, so that a broken or hostile candidate never runs inside perfagent. The
worker process imports them (``load_module``) to run them.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from perfagent.workloads import extension_cache
from perfagent.workloads.model import Backend
from perfagent.workloads.python_ast import parse_module
from perfagent.workloads.triton_script import jit_kernels
from profilers.core_errors import BadInput
from profilers.errors import ProfilerError
from profilers.process import run_command


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
        tree = parse_module(text, filename=str(p))
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
    """Import a Python file under ``module_name`` (registered in ``sys.modules``; worker side only).

    Its ``load_inline``/``load`` extensions build in folders keyed by their content
    (``extension_cache``): built once per source, never mixed up with another candidate's build; a
    build the confined build step made for this file (``extension_builds``) is loaded, read-only.
    """
    extension_cache.install()
    p = Path(path).resolve()
    spec = importlib.util.spec_from_file_location(module_name, p)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {p}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    with extension_cache.loading(p):  # its extensions come from its own build folder (extension_builds)
        spec.loader.exec_module(module)
    return module


_DESCRIBE_INPUTS = r"""
import json, sys
import torch
torch.set_default_device("meta")  # shapes and dtypes only: nothing is allocated
from perfagent.workloads.kernelbench import load_module
m = load_module(sys.argv[1], "perfagent_problem_inputs")
def d(x):
    if isinstance(x, torch.Tensor):
        return str(x.dtype).replace("torch.", "") + "[" + ", ".join(str(s) for s in x.shape) + "]"
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(d(v) for v in x) + "]"
    return repr(x)[:80]
init = m.get_init_inputs() if hasattr(m, "get_init_inputs") else []
print(json.dumps({"inputs": [d(x) for x in m.get_inputs()], "init": [d(x) for x in init]}))
"""


DESCRIBE_TIMEOUT_S = 120.0
"""Limit of the child that imports torch and evaluates ``get_inputs()`` on the meta device."""


def describe_inputs(path: str | Path, *, timeout_s: float = DESCRIBE_TIMEOUT_S) -> list[str]:
    """What a KernelBench problem's ``forward`` and constructor receive, as prompt lines:
    ``get_inputs()`` and ``get_init_inputs()`` evaluated in a child process on PyTorch's ``meta`` device
    (dtypes and shapes, no memory), e.g. ``forward(float32[65536], float32[65536])``. When the problem
    cannot be evaluated that way, one line says so (the reference's source still shows ``get_inputs``)."""
    repo = str(Path(__file__).resolve().parents[2])
    env_path = os.pathsep.join(p for p in (repo, os.environ.get("PYTHONPATH", "")) if p)
    argv = [
        "env",
        f"PYTHONPATH={env_path}",
        sys.executable,
        "-c",
        _DESCRIBE_INPUTS,
        str(Path(path).resolve()),
    ]
    why = ""
    try:
        done = run_command(argv, timeout_s=timeout_s)
    except ProfilerError as exc:
        why = exc.message
    else:
        lines = done.stdout.strip().splitlines()
        if done.ok and lines:
            try:
                data = json.loads(lines[-1])
            except json.JSONDecodeError:
                why = "unreadable output"
            else:
                init = ", ".join(data.get("init") or []) or "none"
                return [
                    f"forward receives (get_inputs()): {', '.join(data.get('inputs') or []) or 'nothing'}",
                    f"the constructor receives (get_init_inputs()): {init}",
                ]
        else:
            why = (done.stderr.strip().splitlines() or ["exit " + str(done.returncode)])[-1][:200]
    return [f"input shapes not determined ({why}): see get_inputs() in the reference"]
