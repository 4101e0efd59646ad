"""The ``recipes`` backend: deterministic, offline rewrites on real parse trees.

Each recipe module exports ``applies(request) -> str | None`` (None = its precondition holds) and
``propose(request) -> list[Candidate]``, and registers a ``Recipe`` here;
the backend that asks them (and CUDA embedded in Python) is ``perfagent.rewrite.recipes_backend``. CUDA recipes work on the
tree-sitter-cuda tree, Triton recipes on Python's ``ast``; every edit is a byte range taken from the
tree, and the edited source is re-parsed (no ERROR nodes, or it compiles as Python) before it is
returned. Recipes never guess: when a precondition fails they say which and where.
"""

from __future__ import annotations

from perfagent.rewrite.recipes import (
    chunk_interleave,
    cooperative_row,
    cooperative_scan,
    grid_swizzle,
    launch_config,
    launch_geometry,
    loop_unroll,
    privatize_atomics,
    register_tiling,
    restrict_pointers,
    sequential_reduction,
    smem_padding,
    smem_tiling,
    thread_map_swap,
    transpose_tile,
    triton_config,
    vectorize_access,
)
from perfagent.rewrite.recipes.registry import Recipe

__all__ = ["RECIPES", "Recipe", "recipes_for"]

RECIPES: dict[str, Recipe] = {
    r.name: r
    for r in (
        smem_padding.RECIPE,
        launch_config.RECIPE,
        launch_geometry.RECIPE,
        triton_config.RECIPE,
        grid_swizzle.RECIPE,
        restrict_pointers.RECIPE,
        loop_unroll.RECIPE,
        vectorize_access.RECIPE,
        thread_map_swap.RECIPE,
        chunk_interleave.RECIPE,
        transpose_tile.RECIPE,
        cooperative_row.RECIPE,
        cooperative_scan.RECIPE,
        sequential_reduction.RECIPE,
        smem_tiling.RECIPE,
        register_tiling.RECIPE,
        privatize_atomics.RECIPE,
    )
}
"""Every recipe by name."""


def recipes_for(transform: str, language: str | None = None) -> list[Recipe]:
    """Recipes implementing ``transform`` (for ``language`` when given)."""
    return [
        r
        for r in RECIPES.values()
        if transform in r.transforms and (language is None or language in r.languages)
    ]
