"""The bottleneck taxonomy and the transform ids: the shared vocabulary of classifier, planner and TUI."""

from __future__ import annotations

from functools import cache

from pydantic import Field

from knowledge import KnowledgeModel, load_toml
from knowledge.transforms import ExpectedEffect


class Category(KnowledgeModel):
    """A bottleneck category."""

    id: str
    title: str
    description: str
    evidence: list[ExpectedEffect] = Field(default_factory=list)
    """Profile metrics that show this bottleneck easing, and which way they move when it does (the
    optimize loop names those that improved when a faster candidate left its proxy metric unmoved)."""


@cache
def categories() -> dict[str, Category]:
    """All bottleneck categories by id, in taxonomy order."""
    raw = load_toml("taxonomy.toml")["categories"]
    return {cid: Category(id=cid, **body) for cid, body in raw.items()}


@cache
def transform_ids() -> tuple[str, ...]:
    """All transform ids, in catalog order."""
    return tuple(load_toml("taxonomy.toml")["transforms"]["ids"])


def category(cid: str) -> Category:
    """The category with id ``cid``.

    Raises:
        KeyError: unknown id.
    """
    return categories()[cid]
