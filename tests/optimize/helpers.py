"""Shared helpers for the optimize tests: example paths, copies of examples, a scripted rewriter."""

from __future__ import annotations

import shutil
from pathlib import Path

from perfagent.rewrite.base import Candidate, RewriteRequest, make_candidate

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
REPORTS = EXAMPLES / "reports"
KB = EXAMPLES / "kernelbench"
TRANSPOSE = EXAMPLES / "cuda" / "02_transpose_bank_conflicts"


def copy_example(folder: Path, dest: Path) -> Path:
    """A private copy of an example folder (tests that may write into the user's files use it)."""
    target = dest / folder.name
    shutil.copytree(folder, target)
    return target


class ScriptedRewriter:
    """A rewriter that returns prepared sources in order (one per ``propose``) and records requests.

    It stands in for a backend where a test needs a candidate no recipe would write (a build error).
    """

    name = "recipes"

    def __init__(self, sources: list[str], transform: str = "loop-unroll", per_call: int = 1) -> None:
        self.sources = list(sources)
        self.transform = transform
        self.per_call = per_call
        self.requests: list[RewriteRequest] = []

    def availability(self) -> str | None:
        return None

    def applies(self, request: RewriteRequest) -> str | None:
        return None if request.transform == self.transform and self.sources else "nothing scripted"

    def propose(self, request: RewriteRequest) -> list[Candidate]:
        self.requests.append(request)
        batch, self.sources = self.sources[: self.per_call], self.sources[self.per_call :]
        return [
            make_candidate(request, backend="recipes", source=s, description="scripted", recipe="scripted")
            for s in batch
        ]
