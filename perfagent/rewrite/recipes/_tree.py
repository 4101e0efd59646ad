"""Parsing CUDA with tree-sitter-cuda (one parse per source text), walking trees and byte-range edits.

Recipes express every change as an ``Edit`` (a byte range of the original source and its replacement);
``apply_edits`` applies them and re-parses the result, refusing ERROR/MISSING nodes, so a recipe can never
hand back source that tree-sitter cannot read.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

import tree_sitter_cuda
from tree_sitter import Language, Node, Parser, Tree


class ParseError(ValueError):
    """The source (or an edited version of it) does not parse cleanly."""


@cache
def _parser() -> Parser:

    return Parser(Language(tree_sitter_cuda.language()))


def parse(source: str | bytes) -> Tree:
    """Parse CUDA C++ source (the same text is parsed once: trees are cached by their bytes)."""
    data = source.encode("utf-8") if isinstance(source, str) else source
    return _parse_bytes(data)


@lru_cache(maxsize=64)
def _parse_bytes(data: bytes) -> Tree:
    # a tree is never edited in place here (every change is a new source), so one parse serves every
    # recipe and both the backend's ``applies`` and ``propose`` of one request
    return _parser().parse(data)


def first_error(tree: Tree) -> Node | None:
    """The first ERROR or MISSING node, or None when the tree is clean."""
    if not tree.root_node.has_error:
        return None
    for node in walk(tree.root_node):
        if node.type == "ERROR" or node.is_missing:
            return node
    return tree.root_node


def require_clean(source: str) -> Tree:
    """Parse ``source`` and insist on a clean tree.

    Raises:
        ParseError: the tree has ERROR/MISSING nodes (the message gives the line).
    """
    tree = parse(source)
    bad = first_error(tree)
    if bad is not None:
        raise ParseError(
            f"tree-sitter-cuda cannot parse the source cleanly (line {bad.start_point[0] + 1}); "
            "recipes only edit clean parse trees"
        )
    return tree


def walk(node: Node) -> Iterator[Node]:
    """Every node under ``node`` (included), depth first, in source order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def text(node: Node) -> str:
    return (node.text or b"").decode("utf-8")


def line_of(node: Node) -> int:
    """1-based line of the node's start."""
    return node.start_point[0] + 1


@dataclass(frozen=True)
class Edit:
    """Replace bytes [start, end) of the original source with ``new``."""

    start: int
    end: int
    new: str


def splice(source: str, edits: Sequence[Edit]) -> str:
    """``source`` with non-overlapping byte-range edits applied (no parse check).

    Raises:
        ValueError: two edits overlap.
    """
    data = source.encode("utf-8")
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    for a, b in zip(ordered, ordered[1:], strict=False):
        if b.start < a.end:
            raise ValueError(f"overlapping edits at bytes {a.start}-{a.end} and {b.start}-{b.end}")
    for edit in reversed(ordered):
        data = data[: edit.start] + edit.new.encode("utf-8") + data[edit.end :]
    return data.decode("utf-8")


def apply_edits(source: str, edits: Sequence[Edit]) -> str:
    """Apply non-overlapping edits and check that the result parses cleanly.

    Raises:
        ValueError: two edits overlap.
        ParseError: the edited source has ERROR/MISSING nodes.
    """
    result = splice(source, edits)
    tree = parse(result)
    bad = first_error(tree)
    if bad is not None:
        raise ParseError(f"the edited source does not parse (line {bad.start_point[0] + 1})")
    return result
