"""The ``recipes`` backend: asks every registered recipe (``perfagent.rewrite.recipes``) for the transform,
on the source itself or, for a Python source holding CUDA in ``load_inline`` strings, on that CUDA
(``perfagent.rewrite.embed``). It sits above both, so neither imports the other's package."""

from __future__ import annotations

from functools import partial

from perfagent.rewrite.base import RETUNED, Candidate, RewriteRequest
from perfagent.rewrite.embed.adapter import embedded_cuda
from perfagent.rewrite.recipes import RECIPES, Recipe, recipes_for
from perfagent.rewrite.recipes._cuda import ParseError


class RecipesRewriter:
    """The deterministic backend: always available, offline, same input gives the same candidates."""

    name = "recipes"

    def availability(self) -> str | None:
        """Always None: recipes need nothing beyond the installed parsers."""
        return None

    def applies(self, request: RewriteRequest) -> str | None:
        """None when some recipe for the transform applies to this source, else every recipe's reason.

        A Python source holding CUDA in ``load_inline`` strings is asked about that CUDA
        (``perfagent.rewrite.embed``).
        """
        candidates = recipes_for(request.transform)
        if not candidates:
            known = sorted({t for r in RECIPES.values() for t in r.transforms})
            return f"no deterministic recipe for transform '{request.transform}' (recipes cover: {', '.join(known)}); the llm backend can try it"
        embedded = embedded_cuda(request)
        if isinstance(embedded, str):
            return embedded
        if embedded is not None:
            why = self.applies(embedded.inner)
            parts = embedded.each_kernel() if why is not None else []
            if not parts:
                return embedded.explain(why)
            reasons = []
            for part in parts:  # several kernels, none named, and the whole unit refused: each kernel
                one = self.applies(part.inner)
                if one is None:
                    return None
                reasons.append(f"kernel {part.inner.kernel}: {part.annotate(one)}")
            return f"in {embedded.where}: {'; '.join(reasons)}"
        usable = [r for r in candidates if request.language in r.languages]
        if not usable:
            langs = sorted({lang for r in candidates for lang in r.languages})
            return f"the recipe(s) for '{request.transform}' edit {'/'.join(langs)} sources, not {request.language}"
        refused: dict[str, list[str]] = {}
        for recipe in usable:
            why = _safe_applies(recipe, request)
            if why is None:
                return None
            refused.setdefault(why, []).append(recipe.name)
        # recipes refused for one reason are named together ('a, b: no launch spec ...')
        return "; ".join(f"{', '.join(names)}: {why}" for why, names in refused.items())

    def propose(self, request: RewriteRequest) -> list[Candidate]:
        """Candidates of every applicable recipe for the transform, at most ``max_candidates``.

        A structural rewrite's re-tuned launches (``Recipe.batch``) come with it for a source launched
        by a launch spec; CUDA inside ``load_inline`` gets the rewrites alone (its wrapper computes
        the launch, and a swept block would be written into it unchecked)."""
        return self._propose(request, sweeps=True)

    def _propose(self, request: RewriteRequest, *, sweeps: bool) -> list[Candidate]:
        embedded = embedded_cuda(request)
        if isinstance(embedded, str):
            return []
        if embedded is not None:
            inner = partial(self._propose, sweeps=False)
            if self.applies(embedded.inner) is None:
                return embedded.propose(inner)
            found = [c for part in embedded.each_kernel() for c in part.propose(inner)]
            return found[: request.max_candidates]
        out: list[Candidate] = []
        retuned: list[Candidate] = []
        for recipe in recipes_for(request.transform, request.language):
            if len(out) >= request.max_candidates or _safe_applies(recipe, request) is not None:
                continue
            for cand in recipe.candidates(request) if sweeps else recipe.propose(request):
                kept = retuned if RETUNED in cand.parameters else out
                if all(c.id != cand.id for c in out + retuned) and (
                    cand.source != request.source or cand.launch is not None
                ):
                    kept.append(cand)
        return _batch(out, retuned, request.max_candidates)


def _batch(primaries: list[Candidate], sweeps: list[Candidate], most: int) -> list[Candidate]:
    """Primaries first; re-tuned launches of structural rewrites get up to half the slots, so a structural
    change is also judged at a geometry made for it (and never crowds out every other recipe)."""
    reserved = min(len(sweeps), most // 2)
    return primaries[: most - reserved] + sweeps[: most - min(len(primaries), most - reserved)]


def _safe_applies(recipe: Recipe, request: RewriteRequest) -> str | None:
    try:
        return recipe.applies(request)
    except ParseError as exc:
        return str(exc)
