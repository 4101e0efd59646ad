"""Proposals made on one machine and replayed on another: ``StoredProposal`` and ``ProposalsRewriter``.

``perfagent optimize --propose-only`` runs the rewriters where the model is and stores every candidate
with what it was proposed from (the parent, its ``-D`` macros and launch geometry, the finding, the
request). ``perfagent optimize --evaluate RUN`` runs the ordinary loop on the GPU machine with a
``ProposalsRewriter``: it answers each transform's request with the candidates stored for it, once, in
the order they were proposed, so that building, verifying, timing, re-profiling and deciding are the
same code as in a one-machine run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import Field

from perfagent.rewrite.base import Candidate, RewriteRequest
from profilers.model import Finding, Frozen

PROPOSAL_FILE = "proposal.json"
REQUEST_FILE = "request.json"


class StoredProposal(Frozen):
    """One proposal as ``--propose-only`` wrote it (``proposals/<n>_<transform>/proposal.json``)."""

    id: str
    """'p1', 'p2', ... over every round of the run."""
    round: int
    candidate: Candidate
    """The rewriter's candidate (its ``source`` is the proposal folder's source file when loaded)."""
    finding: Finding | None = None
    """The diagnosis finding the plan step attached (None: requested directly, or no diagnosis)."""
    plan_origin: str = "requested"
    """The plan tier that chose the transform (requested, diagnosis, catalog, ...)."""
    iteration: int = 1
    """The propose loop's iteration that asked for it."""
    parent: str | None = None
    """The candidate it was proposed from (None: the original)."""
    origin_defines: dict[str, int] = Field(default_factory=dict)
    """The parent's ``-D`` macros (the candidate's own are in ``candidate.defines``)."""
    origin_launch: dict[str, Any] = Field(default_factory=dict)
    """The parent's launch geometry overrides."""
    defines: dict[str, int] = Field(default_factory=dict)
    """What the build will pass: the parent's macros with the candidate's over them."""
    launch: dict[str, Any] = Field(default_factory=dict)
    """The launch geometry it will run with: the parent's with the candidate's over it."""
    source_file: str
    """The source file's name inside the proposal folder."""
    folder: str = ""
    """The proposal folder, relative to the run folder."""
    request_file: str = REQUEST_FILE
    """The ``RewriteRequest`` that produced it (source, transform, finding, hardware, earlier failures)."""
    target_sha256: str = ""
    """Hash of the user's file the proposal rewrites (as it was when proposed)."""


class ProposalsRewriter:
    """Hands each transform's stored proposals to the loop, once, in proposal order.

    ``applies`` says None while a transform has proposals not yet handed out; ``propose`` returns them
    all (the loop's per-iteration budget is set to the largest batch). Nothing is generated here.
    """

    name = "proposals"

    def __init__(self, proposals: Sequence[StoredProposal]) -> None:
        self._batches: dict[str, list[StoredProposal]] = {}
        for p in proposals:
            self._batches.setdefault(p.candidate.transform, []).append(p)
        self._all = list(proposals)
        self.handed: list[StoredProposal] = []

    @property
    def transforms(self) -> list[str]:
        """The transforms with stored proposals, in proposal order."""
        return list(self._batches)

    @property
    def largest_batch(self) -> int:
        return max((len(b) for b in self._batches.values()), default=1)

    def pending(self) -> list[StoredProposal]:
        """Proposals not handed to the loop yet, in proposal order."""
        handed = {p.id for p in self.handed}
        return [p for p in self._all if p.id not in handed]

    def stored(self, candidate: Candidate) -> StoredProposal | None:
        """The stored proposal ``candidate`` came from (the very object ``propose`` returned, else the same id)."""
        for p in self.handed:
            if p.candidate is candidate:
                return p
        return next((p for p in self.handed if p.candidate.id == candidate.id), None)

    def availability(self) -> str | None:
        return None

    def applies(self, request: RewriteRequest) -> str | None:
        if self._batches.get(request.transform):
            return None
        return f"no stored proposal for {request.transform} left to evaluate"

    def propose(self, request: RewriteRequest) -> list[Candidate]:
        batch = self._batches.pop(request.transform, [])
        self.handed.extend(batch)
        return [p.candidate for p in batch]
