"""``RunWriter`` for two-machine runs: earlier rounds' candidates and the proposals still waiting kept in
every record it writes, and the record's ``phases`` block current."""

from __future__ import annotations

from typing import Any

from perfagent.optimize.loop_state import LoopResult
from perfagent.optimize.run_writer import RunHeader, RunWriter, run_llm_usage
from perfagent.records import CandidateOutcome, OptimizeResult, PhasesInfo, TableRow

__all__ = ["PhasedWriter"]


class PhasedWriter(RunWriter):
    """``RunWriter`` for two-machine runs: keeps earlier rounds' candidates and the proposals still
    waiting in every record it writes, and the ``phases`` block current."""

    def __init__(
        self,
        header: RunHeader,
        notes: list[str],
        *,
        info: PhasesInfo,
        earlier: list[CandidateOutcome],
        prior_best: str | None = None,
        waiting: list[CandidateOutcome] | None = None,
        proposing: bool = False,
    ) -> None:
        super().__init__(header, notes)
        self.info = info
        self.earlier = earlier
        self.prior_best = prior_best
        self.waiting = list(waiting or [])
        self.proposing = proposing

    def round_update(self, **fields: Any) -> None:
        """Set fields of the newest round."""
        last = self.info.rounds[-1].model_copy(update=fields)
        self.info = self.info.model_copy(update={"rounds": [*self.info.rounds[:-1], last]})

    def save_now(self) -> None:
        """Rewrite the record (after each proposal: an interrupted round keeps what it wrote)."""
        st = self.state
        done = sum(1 for c in st.outcomes if c.verdict == "proposed") if st is not None else 0
        self.save(self.result(self._so_far(f"running: {done} proposal(s) written"), []))

    def result(self, outcome: LoopResult, table: list[TableRow]) -> OptimizeResult:
        base = super().result(outcome, table)
        if self.state is None:  # before the loop: what the run held
            candidates, best = list(self.earlier), self.prior_best
        else:
            candidates, best = list(base.candidates), base.best
        measured_now = {c.proposal for c in candidates if c.verdict != "proposed" and c.proposal}
        candidates += [c for c in self.waiting if c.id not in measured_now]
        measured_now &= {c.id for c in self.waiting}
        rounds = []
        for i, r in enumerate(self.info.rounds):
            update: dict[str, Any] = {
                "candidates": [
                    c.id for c in candidates if c.proposal in r.proposals and c.verdict != "proposed"
                ]
            }
            if self.proposing and i == len(self.info.rounds) - 1:
                update["proposals"] = [c.id for c in candidates if c.verdict == "proposed"]
            if measured_now & set(r.proposals):
                update["evaluated_on"] = self.device
            rounds.append(r.model_copy(update=update))
        pending = any(c.verdict == "proposed" for c in candidates)
        info = self.info.model_copy(
            update={"rounds": rounds, "state": "proposed" if pending else "evaluated"}
        )
        return base.model_copy(
            update={
                "candidates": candidates,
                "best": best,
                "best_speedup": next((c.speedup for c in candidates if c.id == best), None),
                "llm_usage": run_llm_usage(candidates),
                "phases": info,
            }
        )
