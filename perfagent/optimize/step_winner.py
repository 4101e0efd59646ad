"""Which backend produced and which won each plan step (``--backend auto`` runs recipes and the model
side by side: the record says who competed on a step and whose candidate was accepted)."""

from __future__ import annotations

from collections.abc import Sequence

from perfagent.records import CandidateOutcome, PlanStep

__all__ = ["step_winner"]


def step_winner(step: PlanStep, outcomes: Sequence[CandidateOutcome]) -> PlanStep:
    """``step`` with ``backends`` (who proposed for its transform) and its accepted candidate's backend."""
    mine = [o for o in outcomes if o.transform == step.transform]
    if not mine:
        return step
    backends = list(dict.fromkeys(o.backend for o in mine))
    won = [o for o in mine if o.accepted]
    winner = won[-1] if won else None
    return step.model_copy(
        update={
            "backends": backends,
            "winner": winner.id if winner else None,
            "winner_backend": winner.backend if winner else None,
        }
    )
