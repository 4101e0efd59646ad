"""What a recipe's ``match`` reads and its ``plan`` returns: the parsed ``Source``, ``Variant`` and ``Retune``.

Kept apart from ``framework`` (the recipe base classes and ``register``) so that the shared tail
(``_tail``) and the shared analyses (``_threads``) can speak of them without importing the framework.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import TypeVar

from tree_sitter import Node, Tree

from perfagent.rewrite.base import LaunchContext, ParamValue, RewriteRequest
from perfagent.rewrite.recipes import _cuda, _python
from perfagent.rewrite.recipes._cuda import Edit
from perfagent.workloads.base import Language
from perfagent.workloads.launch_spec import Expr, LaunchOverride

T = TypeVar("T")


def at(node: Node, why: str) -> str:
    """A refusal reason that names the line of ``node``: 'line 12: why'."""
    return f"line {_cuda.line_of(node)}: {why}"


@dataclass(frozen=True)
class Retune:
    """A variant changed the work per thread or per block: sweep the launch of the new kernel.

    The tail emits one extra candidate per block size in ``blocks`` (other than the variant's own),
    keeping those that are multiples of ``multiple`` (and powers of two when ``power_of_two``). The grid
    follows the block: with ``threads`` (the total threads along x the new kernel needs, an expression
    of the spec's names) it becomes ``ceil_div(threads, block)``; without, it is kept (the work is per
    block: one block per row, per tile). ``grid_stride``: the new kernel covers any grid, so grids of a
    few blocks per SM are swept too. Only the x dimension is swept.
    """

    per: str
    """'thread' or 'block': what the structural change made larger (said in the candidates)."""
    threads: Expr | None = None
    multiple: int = 32
    power_of_two: bool = False
    blocks: tuple[int, ...] = (128, 256, 512, 1024)
    grid_stride: bool = False
    max_block: int = 1024


@dataclass(frozen=True)
class Variant:
    """One planned rewrite: byte-range edits of the original source (or a whole new source) and its story."""

    description: str
    edits: tuple[Edit, ...] | list[Edit] = ()
    source: str | None = None
    """A complete new source, for rewrites built in several passes (then ``edits`` is empty); re-parsed too."""
    parameters: dict[str, ParamValue] = field(default_factory=dict)
    launch: LaunchOverride | None = None
    """The launch geometry the new kernel needs (None: the spec's)."""
    defines: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] | list[str] = ()
    retune: Retune | None = None


@lru_cache(maxsize=16)
def _parsed_python(text: str) -> ast.Module:
    # one parse serves the backend's ``applies`` and ``propose`` and every recipe of a request
    return _python.parse(text)


class Source:
    """The request and its parse, made once: every accessor parses (or searches) on first use only."""

    def __init__(self, request: RewriteRequest) -> None:
        self.request = request
        self.text = request.source
        self.language: Language = request.language
        self.launch: LaunchContext | None = request.launch

    @cached_property
    def tree(self) -> Tree:
        """The clean tree-sitter-cuda tree (raises ``ParseError`` when it has ERROR nodes)."""
        return _cuda.require_clean(self.text)

    @cached_property
    def module(self) -> ast.Module:
        """The Python ``ast`` (raises ``ParseError`` on a syntax error); recipes read it, never change it."""
        return _parsed_python(self.text)

    @cached_property
    def kernel(self) -> Node | str:
        """The kernel the request is about (named, or the only one), or why there is none to edit."""
        return _cuda.select_kernel(self.tree, self.request.kernel)

    @cached_property
    def kernel_body(self) -> tuple[Node, Node] | str:
        """The request's kernel and its body (the compound statement), or why there is none."""
        kernel = self.kernel
        if isinstance(kernel, str):
            return kernel
        body = kernel.child_by_field_name("body")
        return "the kernel has no body" if body is None else (kernel, body)

    def on_kernel(self, analyse: Callable[[Node], T | str]) -> T | str:
        """``analyse`` of the request's kernel, or why there is no kernel to analyse."""
        kernel = self.kernel
        return kernel if isinstance(kernel, str) else analyse(kernel)

    @cached_property
    def constants(self) -> dict[str, _cuda.Constant]:
        return _cuda.constants(self.tree)

    @cached_property
    def smap(self) -> _python.SourceMap:
        return _python.SourceMap(self.text)
