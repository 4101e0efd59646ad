"""The ``auto`` backend when an endpoint is configured: the recipes and the model in one loop.

A recipe that applies costs nothing and is deterministic; the model covers what no recipe does. So for
each request the recipes answer the transforms they cover, the model answers the rest, and on a
*structural* transform (catalog ``kind = "structural"``: a rewrite of the kernel's work, where a recipe's
one fixed shape may not be the best) the model adds its own sample beside the recipe's. Every candidate
keeps its own ``backend`` ('recipes' or 'llm'); the loop judges them all under the one accept rule, and
the record says which backend produced each candidate and which won each plan step.

A model that fails while a recipe produced candidates does not stop the batch: the recipe candidates go
on, and the error is kept for the loop (``take_errors``) so the record shows it.
"""

from __future__ import annotations

from knowledge.transforms import catalog
from perfagent.rewrite.base import Candidate, RewriteRequest
from perfagent.rewrite.llm import LLMRewriter
from perfagent.rewrite.recipes_backend import RecipesRewriter
from profilers.core_errors import LLMError

__all__ = ["CombinedRewriter"]


class CombinedRewriter:
    """Recipes for the transforms they cover, the LLM for the rest and as an extra sample on structural ones."""

    name = "auto"

    def __init__(self, recipes: RecipesRewriter, llm: LLMRewriter) -> None:
        self.recipes = recipes
        self.llm = llm
        self._errors: list[str] = []

    @property
    def progress(self) -> object:
        return self.llm.progress

    @progress.setter
    def progress(self, sink: object) -> None:
        self.llm.progress = sink  # type: ignore[assignment]

    def availability(self) -> str | None:
        """None: the recipes are always there (the model's own availability decides its share)."""
        return None

    def applies(self, request: RewriteRequest) -> str | None:
        """None when either backend may propose; else both reasons."""
        by_recipe = self.recipes.applies(request)
        if by_recipe is None:
            return None
        by_model = self.llm.applies(request)
        if by_model is None:
            return None
        return f"recipes: {by_recipe}; llm: {by_model}"

    def askers(self, request: RewriteRequest) -> list[str]:
        """Which backends this request goes to: 'recipes' where a recipe applies, 'llm' where no recipe
        does, or the transform is structural (the model's sample competes with the recipe's)."""
        out = []
        recipe_applies = self.recipes.applies(request) is None
        if recipe_applies:
            out.append("recipes")
        entry = catalog().get(request.transform)
        structural = entry is not None and entry.kind == "structural"
        if self.llm.applies(request) is None and (not recipe_applies or structural):
            out.append("llm")
        return out

    def propose(self, request: RewriteRequest) -> list[Candidate]:
        """The recipes' candidates first, then the model's (both within ``request.max_candidates`` each).

        Raises:
            LLMError: the model failed and no recipe produced a candidate.
        """
        askers = self.askers(request)
        out: list[Candidate] = []
        if "recipes" in askers:
            # leave room for the model's samples: the loop keeps at most max_candidates of the batch
            share = self.llm_share(request) if "llm" in askers else 0
            room = max(1, request.max_candidates - share)
            out.extend(self.recipes.propose(request.model_copy(update={"max_candidates": room})))
        if "llm" in askers:
            try:
                out.extend(self.llm.propose(request))
            except LLMError as exc:
                if not out:
                    raise
                self._errors.append(str(exc))
        return out

    def llm_share(self, request: RewriteRequest) -> int:
        """How many of a batch's candidates the model's samples take."""
        config = self.llm.config
        return min(max(config.samples, config.candidates), request.max_candidates)

    def repair(
        self, request: RewriteRequest, candidate: Candidate, feedback: str, *, round_: int = 1
    ) -> Candidate:
        """The model's repair of ``candidate`` (recipes are deterministic: the loop repairs llm ones only)."""
        return self.llm.repair(request, candidate, feedback, round_=round_)

    def take_errors(self) -> list[str]:
        """LLM errors swallowed since the last call (recipe candidates went on without the model's)."""
        errors, self._errors = self._errors, []
        return errors
