"""The device half of a load_inline CUDA unit: what nvcc can compile without torch's CUDA headers.

A machine without a GPU usually lacks what torch's CUDA headers include (cuSPARSE, cuBLAS headers),
and building a whole extension takes minutes. The kernels themselves need none of it: ``device_code``
keeps the unit's own code but drops the ``#include`` lines of torch / ATen / c10 / pybind11 and every
host function (not ``__global__`` / ``__device__``) that mentions their types, so ``nvcc -cubin``
checks what a recipe changed in the kernels. The wrapper's edits are checked by the parse tree only.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._cuda import Edit

_TORCH_INCLUDE = re.compile(
    r"^[ \t]*#[ \t]*include[ \t]*[<\"](torch|ATen|c10|pybind11)/[^>\"]*[>\"][^\n]*\n?", re.M
)
_TORCH_WORDS = re.compile(r"\b(torch|at|c10|pybind11|py)::|\bTORCH_\w+|\bAT_\w+|\bC10_\w+|\bPYBIND11_\w+")


def device_code(text: str) -> str:
    """``text`` without torch includes and without the host functions that use torch."""
    tree = _cuda.parse(text)
    edits: list[Edit] = []
    data = text.encode("utf-8")
    for node in tree.root_node.named_children:
        span = _host_torch_span(node)
        if span is not None:
            start = _cuda.line_start(data, span[0])
            edits.append(Edit(start, span[1], ""))
    stripped = _cuda.apply_edits(text, edits) if edits else text
    return _TORCH_INCLUDE.sub("", stripped)


def _host_torch_span(node: object) -> tuple[int, int] | None:
    """Byte range of a top-level host function (or declaration, or macro call) that uses torch."""

    assert isinstance(node, Node)
    if node.type == "function_definition" and _cuda.is_device_code(node):
        return None
    if node.type in ("function_definition", "declaration", "expression_statement") and _TORCH_WORDS.search(
        _cuda.text(node)
    ):
        return node.start_byte, node.end_byte
    if node.type in ("template_declaration", "linkage_specification", "namespace_definition"):
        inner = [c for c in node.named_children if c.type == "function_definition"]
        if (
            inner
            and not any(_cuda.is_device_code(c) for c in inner)
            and _TORCH_WORDS.search(_cuda.text(node))
        ):
            return node.start_byte, node.end_byte
    return None
