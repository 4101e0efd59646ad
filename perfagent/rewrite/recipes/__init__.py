"""The ``recipes`` backend: deterministic, offline rewrites on real parse trees.

Every recipe is one public module of this package that defines ``RECIPE`` (built by
``framework.register``; read ``perfagent.rewrite.recipes.framework`` for how to write one): it is found
here by its module, with no list to edit. Modules starting with ``_`` are shared helpers. The backend that
asks the recipes (and CUDA embedded in Python) is ``perfagent.rewrite.recipes_backend``. CUDA recipes work
on the tree-sitter-cuda tree, Triton recipes on Python's ``ast``; every edit is a byte range taken from
the tree, and the edited source is re-parsed (no ERROR nodes, or it compiles as Python) before it is
returned. Recipes never guess: when a precondition fails they say which and where.
"""

from __future__ import annotations

import importlib
import pkgutil

from perfagent.rewrite.recipes.registry import Recipe

__all__ = ["RECIPES", "Recipe", "recipes_for"]

_NOT_RECIPES = frozenset({"framework", "registry"})
_FIRST = (
    "smem_padding",
    "launch_config",
    "launch_geometry",
    "triton_config",
    "grid_swizzle",
    "restrict_pointers",
    "loop_unroll",
    "vectorize_access",
    "thread_map_swap",
    "chunk_interleave",
    "transpose_tile",
    "cooperative_row",
    "cooperative_scan",
    "sequential_reduction",
    "smem_tiling",
    "register_tiling",
    "privatize_atomics",
)
"""The order the backend asks recipes in (their candidates come in this order); recipes not named here
follow in module-name order."""


def _discover() -> dict[str, Recipe]:
    names = [m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")]
    ordered = [n for n in _FIRST if n in names] + sorted(n for n in names if n not in _FIRST)
    found: dict[str, Recipe] = {}
    for module_name in ordered:
        if module_name in _NOT_RECIPES:
            continue
        recipe = getattr(importlib.import_module(f"{__name__}.{module_name}"), "RECIPE", None)
        if isinstance(recipe, Recipe):
            found[recipe.name] = recipe
    return found


RECIPES: dict[str, Recipe] = _discover()
"""Every recipe by name."""


def recipes_for(transform: str, language: str | None = None) -> list[Recipe]:
    """Recipes implementing ``transform`` (for ``language`` when given)."""
    return [
        r
        for r in RECIPES.values()
        if transform in r.transforms and (language is None or language in r.languages)
    ]
