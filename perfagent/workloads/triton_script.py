"""Triton source helpers: which ``@triton.jit`` kernels a file defines and which it launches."""

from __future__ import annotations

import ast
import re

_JIT_DECORATORS = {"jit", "autotune", "heuristics"}


def jit_kernels(tree: ast.AST) -> list[str]:
    """Names of functions decorated with ``triton.jit`` / ``triton.autotune`` (or bare ``jit``)."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for dec in node.decorator_list:
                target = dec.func if isinstance(dec, ast.Call) else dec
                leaf = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
                if leaf in _JIT_DECORATORS:
                    names.append(node.name)
                    break
    return names


def launched_kernels(tree: ast.AST, kernels: list[str]) -> set[str]:
    """Which of ``kernels`` are launched (``kernel[grid](...)``) or called from another kernel."""
    launched: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if (
                isinstance(func, ast.Subscript)
                and isinstance(func.value, ast.Name)
                and func.value.id in kernels
            ):
                launched.add(func.value.id)
            elif isinstance(func, ast.Name) and func.id in kernels:
                launched.add(func.id)  # called from inside another jit function (inlined)
    return launched


def is_triton_source(text: str) -> bool:
    """True when ``text`` imports triton and defines a jit kernel."""
    return bool(re.search(r"^\s*(import triton|from triton)", text, re.M)) and bool(
        re.search(r"@\s*(triton\.)?(jit|autotune)", text)
    )
