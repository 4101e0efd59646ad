"""Recipe ``divergent-reduction``: the ``avoid-divergence`` transform for the one divergent form that has a
deterministic fix, the interleaved tree reduction whose active threads are picked by
``tid % (2*s) == 0`` / ``(tid & (2*s - 1)) == 0`` (Harris' reduction kernels 1-2, PMPP ch. 10).

The proof and the edit are ``sequential_reduction``'s (sequential addressing makes the active threads
contiguous, so whole warps retire together); this module only files them under ``avoid-divergence``,
which the classifier names for a low active-lanes-per-instruction finding. Data-dependent branches
(per-element special cases, early exits on values) have no shape-only rewrite: the catalog sends them
to the llm backend.
"""

from __future__ import annotations

from perfagent.rewrite.recipes import sequential_reduction
from perfagent.rewrite.recipes.registry import Recipe

RECIPE = Recipe(
    name="divergent-reduction",
    transforms=("avoid-divergence",),
    languages=("cuda",),
    applies=sequential_reduction.RECIPE.applies,
    propose=sequential_reduction.RECIPE.propose,
    batch=sequential_reduction.RECIPE.batch,
    summary="tid % (2s) / tid & (2s-1) tree reductions (divergent warps) -> sequential addressing, contiguous active threads",
)
