"""The ``Recipe`` record every recipe module exports as ``RECIPE`` (``framework.register`` builds it)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from perfagent.rewrite.base import Candidate, RewriteRequest
from perfagent.workloads.base import Language


@dataclass(frozen=True)
class Recipe:
    """A deterministic rewrite: a precondition check and a proposer, both on a real parse tree."""

    name: str
    """Registry name (the catalog's ``recipes`` lists it)."""
    transforms: tuple[str, ...]
    """Catalog transform ids this recipe implements."""
    languages: tuple[Language, ...]
    """Source languages it edits."""
    applies: Callable[[RewriteRequest], str | None]
    """None when the precondition holds on the request's source, else why not."""
    propose: Callable[[RewriteRequest], list[Candidate]]
    """Candidates (complete new sources); empty when ``applies`` gives a reason."""
    summary: str
    """One line: what it does and when."""
    batch: Callable[[RewriteRequest], list[Candidate]] | None = None
    """``propose``'s candidates followed by the launch sweeps of those that changed the work per thread or
    per block (``framework.Retune``); None: the same as ``propose``."""

    def candidates(self, request: RewriteRequest) -> list[Candidate]:
        """The batch the backend offers: ``batch`` when the recipe has one, else ``propose``."""
        return (self.batch or self.propose)(request)
