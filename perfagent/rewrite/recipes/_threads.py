"""Thread built-ins shared by the recipes: flattened thread indices, and how a kernel uses its coordinates.

``analyse`` classifies a 1-D kernel's use of ``threadIdx``/``blockIdx``/``blockDim``/``gridDim`` on its
tree: a grid-stride loop (any grid computes the same result) and a block-free index (only
``blockIdx.x * blockDim.x + threadIdx.x``: any block size does, with the grid re-derived). The
launch-geometry recipe sweeps launches from it, and ``block_free_retune`` lets a structural recipe
declare the launch sweep of its new kernel (``framework.Retune``) when the original's index allows it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.base import LaunchContext
from perfagent.rewrite.recipes import _cuda, _launch
from perfagent.rewrite.recipes._variant import Retune

FLAT_THREAD = "(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z))"
"""This thread's index in its block, whatever the block's shape."""
BLOCK_THREADS = "(blockDim.x * blockDim.y * blockDim.z)"
"""Threads per block, whatever the block's shape."""


@dataclass(frozen=True)
class Uses:
    """How the kernel uses the built-in index variables."""

    grid_stride: bool
    """gridDim.x appears, only as gridDim.x * blockDim.x, and blockIdx.x only as blockIdx.x * blockDim.x."""
    block_free: bool
    """blockDim.x / threadIdx.x only in the global index, no shared memory or barriers, no launch bounds."""
    blocker: str | None
    """Why neither case holds (None when one does)."""


def _strip_up(node: Node) -> Node:
    while node.parent is not None and node.parent.type in ("parenthesized_expression", "cast_expression"):
        node = node.parent
    return node


def strip_down(node: Node) -> Node:
    while node.type in ("parenthesized_expression", "cast_expression"):
        inner = node.child_by_field_name("value") if node.type == "cast_expression" else None
        node = inner if inner is not None else node.named_children[-1]
    return node


def _operation(node: Node, operator: str) -> Node | None:
    """The ``a <operator> b`` expression ``node`` (casts and parentheses around it allowed) is an operand of."""
    parent = _strip_up(node).parent
    if parent is None or parent.type != "binary_expression":
        return None
    op = parent.child_by_field_name("operator")
    return parent if op is not None and _cuda.text(op) == operator else None


def _product_partner(node: Node) -> str | None:
    """'blockDim.x' when ``node`` is one factor of ``a * b`` and the other is that built-in (casts allowed)."""
    product = _operation(node, "*")
    if product is None:
        return None
    up = _strip_up(node)
    left, right = product.child_by_field_name("left"), product.child_by_field_name("right")
    other = right if left is not None and left.id == up.id else left
    if other is None:
        return None
    found = _cuda.builtin_axis(strip_down(other))
    return f"{found[0]}.{found[1]}" if found else None


def _in_index_sum(node: Node) -> bool:
    """``threadIdx.x`` added to ``blockIdx.x * blockDim.x`` (either order, casts allowed)."""
    total = _operation(node, "+")
    if total is None:
        return False
    names = {f"{b[0]}.{b[1]}" for n in _cuda.walk(total) if (b := _cuda.builtin_axis(n)) is not None}
    return names == {"blockIdx.x", "blockDim.x", "threadIdx.x"}


def analyse(kernel: Node) -> Uses:
    """Classify the kernel's use of the built-ins (see the module docstring)."""
    body = kernel.child_by_field_name("body") or kernel
    text = _cuda.text(body)
    uses = [(n, b) for n in _cuda.walk(body) if (b := _cuda.builtin_axis(n)) is not None]
    for node, (name, field) in uses:
        if field != "x":
            return Uses(False, False, f"{name}.{field} on line {_cuda.line_of(node)}: not a 1-D launch")
    grid_stride, blocker = True, None
    grid_dims = [n for n, (name, _) in uses if name == "gridDim"]
    if not grid_dims:
        grid_stride, blocker = False, "no grid-stride loop (gridDim.x is not used)"
    for node in grid_dims:
        if _product_partner(node) != "blockDim.x":
            grid_stride = False
            blocker = f"gridDim.x on line {_cuda.line_of(node)} is used other than as gridDim.x * blockDim.x"
            break
    for node, (name, _) in uses:
        if name == "blockIdx" and _product_partner(node) != "blockDim.x":
            return Uses(
                False,
                False,
                f"blockIdx.x on line {_cuda.line_of(node)} is used as a block id (not only blockIdx.x * blockDim.x): "
                "the result may depend on the grid",
            )
    block_free, why_block = True, None
    if _cuda.launch_bounds(kernel) is not None:
        block_free, why_block = False, "__launch_bounds__ fixes the block size"
    elif any(True for _ in _cuda.shared_arrays(body)) or "__shared__" in text:
        block_free, why_block = False, "shared memory is sized or indexed per block"
    elif re.search(r"\b__sync(?:threads|warp)\b|\bcooperative_groups\b", text):
        block_free, why_block = False, "block-level synchronisation"
    else:
        for node, (name, _) in uses:
            if name == "blockDim" and _product_partner(node) not in ("blockIdx.x", "gridDim.x"):
                block_free = False
                why_block = f"blockDim.x on line {_cuda.line_of(node)} is used outside the global index"
                break
            if name == "threadIdx" and not _in_index_sum(node):
                block_free = False
                why_block = f"threadIdx.x on line {_cuda.line_of(node)} is used outside the global index"
                break
    return Uses(grid_stride, block_free, None if grid_stride or block_free else f"{blocker}; {why_block}")


def block_free_retune(kernel: Node, launch: LaunchContext | None, per: str) -> Retune | None:
    """The launch sweep a structural rewrite of ``kernel`` may declare: the original's 1-D index is
    block-free (any block, grid re-derived to keep the threads) or grid-stride (any grid too); None when
    neither holds or there is no launch spec to sweep."""
    if launch is None or len(launch.grid) != 1 or len(launch.block) != 1:
        return None
    uses = analyse(kernel)
    if not (uses.block_free or uses.grid_stride):
        return None
    threads = _launch.threads_x(launch.grid[0], launch.block[0]) if uses.block_free else None
    return Retune(per=per, threads=threads, multiple=32, grid_stride=uses.grid_stride)
