"""The loop's plan log: every step planned so far, whether it was tried, what each try produced, why not.

The loop adds to it (the first plan, each re-plan, the write-kernel step), the run writer reads it
(``PlanStep`` records in ``record.json``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from perfagent.optimize.loop_state import changed_lines
from perfagent.optimize.plan import PlannedTransform
from perfagent.optimize.step_winner import step_winner
from perfagent.records import CandidateOutcome, PlanStep
from perfagent.rewrite.base import RETUNED

__all__ = ["PlanLog"]


@dataclass
class PlanLog:
    """Plan steps by index (the loop's queue holds these indexes)."""

    steps: list[PlannedTransform] = field(default_factory=list)
    tried: set[int] = field(default_factory=set)
    tried_notes: dict[int, list[str]] = field(default_factory=dict)
    """Index -> what each try of it produced ('c1 (accepted): rewrites lines 9-13')."""
    dropped: dict[int, str] = field(default_factory=dict)
    """Index -> why a runnable step left the queue untried (a re-plan dropped it)."""

    def __getitem__(self, index: int) -> PlannedTransform:
        return self.steps[index]

    def __setitem__(self, index: int, step: PlannedTransform) -> None:
        self.steps[index] = step

    def __len__(self) -> int:
        return len(self.steps)

    def log(self, steps: list[PlannedTransform]) -> list[int]:
        """Add steps (new transform ids only; a skipped one is replaced by its new plan); their indexes."""
        known = {s.transform.id: i for i, s in enumerate(self.steps)}
        idx = []
        for s in steps:
            i = known.get(s.transform.id)
            if i is None:
                self.steps.append(s)
                i = known[s.transform.id] = len(self.steps) - 1
            elif self.steps[i].skipped is not None:
                self.steps[i] = s
            idx.append(i)
        return idx

    def runnable(self, steps: list[PlannedTransform]) -> list[int]:
        """Log ``steps``; the indexes of those not skipped, in their order."""
        return [i for i, s in zip(self.log(steps), steps, strict=True) if s.skipped is None]

    def note_try(self, index: int, outcomes: list[CandidateOutcome], backend: str) -> None:
        """Keep what a try of step ``index`` produced, for its ``PlanStep.reason``."""
        notes = self.tried_notes.setdefault(index, [])
        # one line per distinct result: three launch-geometry candidates read 'c2, c3, c4 (...)'
        groups: dict[str, list[str]] = {}
        for o in outcomes:
            sweep = " at re-tuned launches" if RETUNED in o.parameters else ""
            groups.setdefault(f"({o.verdict}): {changed_lines(o.diff)}{sweep}", []).append(o.id)
        notes.extend(f"{', '.join(ids)} {what}" for what, ids in groups.items())
        if not outcomes:
            notes.append(f"{backend} proposed no candidate")

    def record(self, stopped: str, outcomes: list[CandidateOutcome]) -> list[PlanStep]:
        """The plan log as saved at the end, each step with why it was tried or not."""
        return [
            step_winner(
                s.record(
                    tried=i in self.tried,
                    tried_note="; ".join(self.tried_notes.get(i, [])),
                    unreached=self.dropped.get(i, stopped),
                ),
                outcomes,
            )
            for i, s in enumerate(self.steps)
        ]

    def so_far(self) -> list[PlanStep]:
        """The plan log as saved while the loop runs."""
        return [s.record(tried=i in self.tried) for i, s in enumerate(self.steps)]
