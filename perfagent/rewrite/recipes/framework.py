"""The recipe framework: every recipe is ``match -> plan -> edits``, and one shared tail does the rest.

How to write a recipe (one module under ``perfagent/rewrite/recipes/`` plus its tests)::

    class _Hoist(CudaRecipe[_Match]):          # PythonRecipe for Triton / Python sources (``ast``)
        name = "hoist-loads"                   # registry name (the catalog's ``recipes`` lists it)
        transforms = ("hoist-loads",)          # catalog transform ids it implements
        summary = "one line: what it does and when"
        needs_launch = True                    # refuse without a launch spec (and say so)
        launch_dims = 1                        # refuse unless grid and block have this many dimensions

        def match(self, src: Source) -> _Match | str:
            kernel = src.kernel                # the request's kernel, already found (or why not: a str)
            if isinstance(kernel, str):
                return kernel
            ...                                # prove the precondition on the tree
            return at(node, "why not")         # refusal with the line: 'line 12: why not'

        def plan(self, src: Source, m: _Match) -> list[Variant]:
            return [Variant(edits=[Edit(a, b, "new")], description="...", parameters={...},
                            launch=LaunchOverride(...), retune=Retune(...))]

    RECIPE = register(_Hoist())
    applies, propose = RECIPE.applies, RECIPE.propose

``register`` builds the ``Recipe`` record the registry lists (``perfagent.rewrite.recipes`` finds every
public module of this package that defines ``RECIPE``: no list to edit). What the framework does so a
recipe does not:

- **parse once**: ``Source`` parses the request's source on first use (``src.tree``, ``src.kernel``,
  ``src.constants``), and ``match`` runs once per ``propose``; parses are cached by source text, so the
  backend's ``applies`` then ``propose`` read one tree.
- **the gates**: language, launch spec present, launch dimensions (``needs_launch``, ``launch_dims``),
  each refused in the same words for every recipe (``gate``).
- **the tail** (``_tail.finish``): apply a variant's byte-range edits and re-parse (tree-sitter-cuda: no
  ERROR/MISSING node; Python: ``compile``), the compile check (``_compile_check``: NVRTC where
  ``cuda.core`` is importable, nvcc on request), the launch override copied into the candidate (the
  loop writes it into the candidate's launch-spec copy), the candidate's id and diff, ``max_candidates``.
- **re-tuning** (``Retune``): a variant that changes the work per thread or per block says so; the tail
  adds launch sweeps of the new kernel (block size swept, grid re-derived) to the batch
  (``Recipe.batch``), so a correct structural change is not judged at the old geometry only.

Shared analyses live once: ``_cuda`` (tree, constants, kernels, launch sites), ``_launch`` (launch-spec
algebra: evaluating the spec's expressions, ``ceil_div`` grids, block-free index analysis), ``_threads``
(thread built-ins, flattened thread indices, loop shapes).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import ClassVar, Generic, TypeVar

from perfagent.rewrite.base import Candidate, RewriteRequest
from perfagent.rewrite.recipes import _tail
from perfagent.rewrite.recipes._cuda import Edit, ParseError
from perfagent.rewrite.recipes._variant import Retune, Source, Variant, at
from perfagent.rewrite.recipes.registry import Recipe
from perfagent.workloads.base import Language

__all__ = [
    "CudaRecipe",
    "Edit",
    "ParseError",
    "PythonRecipe",
    "Retune",
    "Source",
    "Variant",
    "at",
    "collect",
    "register",
]

M = TypeVar("M")


class _Base(ABC, Generic[M]):
    """What every recipe declares; ``match`` and ``plan`` are its whole job."""

    name: ClassVar[str]
    transforms: ClassVar[tuple[str, ...]]
    languages: ClassVar[tuple[Language, ...]]
    summary: ClassVar[str]
    needs_launch: ClassVar[bool] = False
    no_launch: ClassVar[str] = "no launch spec: the grid is set in the source's own launch"
    """The refusal when ``needs_launch`` and the request has none (some recipes name what to do instead)."""
    launch_dims: ClassVar[int | None] = None
    """Grid and block must have this many dimensions (None: any)."""
    wrong_language: ClassVar[str] = "not a CUDA source"

    @abstractmethod
    def match(self, src: Source) -> M | str:
        """The proven precondition (whatever ``plan`` needs), or why the recipe does not apply."""

    @abstractmethod
    def plan(self, src: Source, m: M) -> list[Variant]:
        """The rewrites, best guess first (the tail turns them into candidates)."""

    def gate(self, src: Source) -> str | None:
        """Why the request is not for this recipe at all (language, launch spec), in shared words."""
        if src.language not in self.languages:
            return self.wrong_language
        if not self.needs_launch:
            return None
        if src.launch is None:
            return self.no_launch
        dims = self.launch_dims
        if dims is not None and (len(src.launch.grid) != dims or len(src.launch.block) != dims):
            return (
                "the launch spec's grid or block has more than one dimension"
                if dims == 1
                else f"the launch spec's grid and block are not both {dims}-D"
            )
        return None

    def matched(self, src: Source) -> M | str:
        """``match`` behind the gates; a source that does not parse cleanly is refused with its line."""
        why = self.gate(src)
        if why is not None:
            return why
        try:
            return self.match(src)
        except ParseError as exc:
            return str(exc)


class CudaRecipe(_Base[M]):
    """A recipe that edits CUDA C++ on the tree-sitter-cuda tree."""

    languages: ClassVar[tuple[Language, ...]] = ("cuda",)


class PythonRecipe(_Base[M]):
    """A recipe that edits Python (Triton) on ``ast``."""

    languages: ClassVar[tuple[Language, ...]] = ("triton", "python")
    wrong_language: ClassVar[str] = "not a Triton/Python source"


T = TypeVar("T")


def collect(results: Iterable[T | str]) -> tuple[list[T], list[str]] | str:
    """For a recipe that edits every target it can (each kernel, each array): the targets that matched and
    the reasons of the others (for its notes), or every reason joined when none matched."""
    found: list[T] = []
    reasons: list[str] = []
    for result in results:
        if isinstance(result, str):
            reasons.append(result)
        else:
            found.append(result)
    return (found, reasons) if found else "; ".join(reasons)


def register(recipe: _Base[M]) -> Recipe:
    """The registry record of ``recipe``: ``applies``, ``propose`` (primary candidates) and ``batch``
    (primaries, then the launch sweeps of every variant that declared a ``Retune``)."""

    def applies(request: RewriteRequest) -> str | None:
        m = recipe.matched(Source(request))
        return m if isinstance(m, str) else None

    def propose(request: RewriteRequest) -> list[Candidate]:
        return _tail.primaries(recipe.name, *_planned(recipe, request))

    def batch(request: RewriteRequest) -> list[Candidate]:
        return _tail.with_sweeps(recipe.name, *_planned(recipe, request))

    return Recipe(
        name=recipe.name,
        transforms=recipe.transforms,
        languages=recipe.languages,
        applies=applies,
        propose=propose,
        summary=recipe.summary,
        batch=batch,
    )


def _planned(recipe: _Base[M], request: RewriteRequest) -> tuple[Source, list[Variant]]:
    src = Source(request)
    m = recipe.matched(src)
    if isinstance(m, str):
        return src, []
    return src, recipe.plan(src, m)
