"""The evaluate steps of a two-machine run: ``ProposalWriter`` writes proposals, ``Replay`` measures them.

Both are handed to the one ``OptimizeLoop``: planning, proposing, the iteration budget and the feedback
are the one-machine loop's. ``ProposalWriter`` writes each proposal (nothing is built or run), with a
``RecordingRewriter`` as the loop's proposal source so that the request is stored beside it; ``Replay``
measures each stored proposal (a ``ProposalsRewriter`` hands them back) with the origin it was proposed
from (its parent's macros, launch geometry and profile), through the one-machine ``Measure``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from knowledge.transforms import catalog
from perfagent.optimize.context import RunContext
from perfagent.optimize.evaluate import Measure
from perfagent.optimize.events import Info
from perfagent.optimize.loop_state import Origin, candidate_fields, candidate_key
from perfagent.optimize.measure import CANDIDATE_CU
from perfagent.optimize.phase_files import PROPOSALS, candidate_profile, proposed_reason
from perfagent.optimize.plan import PlannedTransform
from perfagent.optimize.plan_log import PlanLog
from perfagent.optimize.precheck import Checked, CheckHere, check_and_repair
from perfagent.optimize.repair import NOT_RUN
from perfagent.records import CandidateOutcome, VerificationSummary
from perfagent.rewrite.base import Candidate, Rewriter, RewriteRequest
from perfagent.rewrite.prompt import build_messages, first_lines
from perfagent.rewrite.proposals import PROPOSAL_FILE, REQUEST_FILE, ProposalsRewriter, StoredProposal
from profilers.core_errors import LLMError
from profilers.model import DeviceInfo, KernelProfile

__all__ = ["ProposalWriter", "RecordingRewriter", "Replay"]


class RecordingRewriter:
    """A rewriter that remembers the last request it was asked (stored beside each proposal)."""

    def __init__(self, inner: Rewriter) -> None:
        self.inner = inner
        self.name = inner.name
        self.last: RewriteRequest | None = None

    def availability(self) -> str | None:
        return self.inner.availability()

    def applies(self, request: RewriteRequest) -> str | None:
        return self.inner.applies(request)

    def propose(self, request: RewriteRequest) -> list[Candidate]:
        self.last = request
        return self.inner.propose(request)

    def repair(
        self, request: RewriteRequest, candidate: Candidate, feedback: str, *, round_: int = 1
    ) -> Candidate:
        """The inner rewriter's repair (the llm's); raises ``LLMError`` when it has none."""
        fix = getattr(self.inner, "repair", None)
        if fix is None:
            raise LLMError(f"the {self.name} backend does not repair", hint="use --backend llm or auto")
        repaired: Candidate = fix(request, candidate, feedback, round_=round_)
        return repaired

    def take_errors(self) -> list[str]:
        """The inner rewriter's swallowed LLM errors (``auto``), for the record."""
        take = getattr(self.inner, "take_errors", None)
        return take() if take is not None else []


class ProposalWriter:
    """The evaluate step of ``--propose-only``: each candidate is written as a proposal; nothing is built
    or run (a CUDA proposal is compiled here first, ``precheck``)."""

    def __init__(
        self,
        ctx: RunContext,
        recorder: RecordingRewriter,
        *,
        round_no: int,
        first_number: int,
        target_sha256: str,
        hardware: DeviceInfo | None = None,
        saved: Callable[[], None] | None = None,
    ) -> None:
        self.ctx = ctx
        self.recorder = recorder
        self.round_no = round_no
        self.number = first_number
        self.target_sha256 = target_sha256
        self.hardware = hardware
        self.saved = saved
        """Called after each proposal is recorded (the writer saves the record)."""

    def order_first_plan(self, queue: list[int], plan: PlanLog) -> list[int]:
        """The plan, transforms already proposed (earlier iterations or rounds) last: nothing is measured
        between iterations here, so asking again for the same transform would repeat the same answer."""
        done = {o.transform for o in self.ctx.state.outcomes if not o.accepted}
        again = [i for i in queue if plan[i].transform.id in done]
        if again and len(again) < len(queue):
            names = ", ".join(plan[i].transform.id for i in again)
            self.ctx.tell(Info, f"proposed before, asked for last: {names}")
        return [i for i in queue if i not in again] + again

    def verify_ahead(self, candidates: list[Candidate], step: PlannedTransform, origin: Origin) -> None:
        """Nothing runs here: nothing to start ahead."""

    def settle_ahead(self) -> None:
        """Nothing was started ahead."""

    def evaluate(
        self,
        cand: Candidate,
        step: PlannedTransform,
        origin: Origin | None = None,
        *,
        repairs: int = 0,
        repair_of: str | None = None,
    ) -> CandidateOutcome:
        # a proposal is only written here; what cannot build here goes back to the model first
        st = self.ctx.state
        origin = origin or st.origin()
        ctx = self.ctx
        checked = check_and_repair(
            CheckHere(ctx.wl, self._arch(), ctx.measuring.compile_timeout_s, ctx.limits.repairs),
            self.recorder.last,
            cand,
            origin,
            repair=self.recorder.repair,
            tell=ctx.tell,
            llm_errors=st.llm_errors,
        )
        cand = checked.candidate
        fields = candidate_fields(cand, step, origin, iteration=self.ctx.tally.step, file=self.ctx.wl.file)
        fields.update(
            verification=VerificationSummary(verdict="not-verified", reason=NOT_RUN), accepted=False
        )
        key = candidate_key(cand.source, fields["defines"], fields["launch"], language=self.ctx.wl.language)
        if key in st.seen:  # told, not recorded: the loop counts an all-duplicate batch as no iteration
            reason = f"same source, macros and launch as {st.seen[key]}: not proposed again"
            self.ctx.tell(Info, f"{cand.transform}: {reason}", transform=cand.transform)
            return CandidateOutcome(id="-", verdict="duplicate", reason=reason, **fields)
        stored = self._write(cand, step, origin, fields)
        st.seen[key] = stored.id
        if checked.ok is False:  # kept for the record and the next request; the GPU machine never sees it
            return self._build_failed(stored, checked, fields)
        outcome = CandidateOutcome(
            id=stored.id,
            verdict="proposed",
            reason=proposed_reason(self.ctx.run_dir),
            source_path=str(self.ctx.run_dir / stored.folder / stored.source_file),
            diff_path=str(self.ctx.run_dir / stored.folder / "diff.patch"),
            proposal=stored.id,
            proposal_dir=stored.folder,
            **fields,
        )
        st.outcomes.append(outcome)
        self.ctx.tell(
            Info,
            f"{stored.id}: {cand.transform} proposal written ({stored.folder})",
            candidate=stored.id,
            transform=cand.transform,
        )
        if self.saved is not None:
            self.saved()
        return outcome

    def _arch(self) -> str:
        """The architecture proposals are compiled for here: the named GPU's, else ``--arch``."""
        hw = self.hardware
        if hw is not None and hw.name and hw.arch and hw.arch.startswith("sm_"):
            return hw.arch
        return self.ctx.measuring.arch

    def _build_failed(
        self, stored: StoredProposal, checked: Checked, fields: dict[str, Any]
    ) -> CandidateOutcome:
        """A proposal that did not compile here (its repairs neither): recorded, not sent to the GPU."""
        folder = self.ctx.run_dir / stored.folder
        (folder / "build.log").write_text(checked.detail, encoding="utf-8")
        reason = f"build failed here (nvcc, {checked.repairs} repair(s)): {first_lines(checked.detail, 1)}"
        outcome = CandidateOutcome(
            id=stored.id,
            verdict="build-failed",
            reason=reason,
            source_path=str(folder / stored.source_file),
            diff_path=str(folder / "diff.patch"),
            proposal_dir=stored.folder,
            **{**fields, "verification": VerificationSummary(verdict="not-verified", reason=reason)},
        )
        self.ctx.state.outcomes.append(outcome)
        self.ctx.state.remember_rejection(outcome)
        self.ctx.tell(Info, f"{stored.id}: {reason}", candidate=stored.id, transform=outcome.transform)
        if self.saved is not None:
            self.saved()
        return outcome

    def _write(
        self, cand: Candidate, step: PlannedTransform, origin: Origin, fields: dict[str, Any]
    ) -> StoredProposal:
        """The proposal's folder: source, diff, the request that produced it (and the prompt), proposal.json."""
        n = self.number
        self.number += 1
        rel = f"{PROPOSALS}/{n:02d}_{cand.transform}"
        folder = self.ctx.run_dir / rel
        folder.mkdir(parents=True, exist_ok=True)
        source_name = CANDIDATE_CU if self.ctx.wl.language == "cuda" else f"source{self.ctx.wl.suffix}"
        (folder / source_name).write_text(cand.source, encoding="utf-8")
        (folder / "diff.patch").write_text(cand.diff, encoding="utf-8")
        request = self.recorder.last
        if request is not None:
            (folder / REQUEST_FILE).write_text(request.model_dump_json(indent=2), encoding="utf-8")
            if cand.backend == "llm":  # the user message as sent (write-kernel has its own)
                sent = build_messages(request, catalog()[cand.transform], structured=False)
                (folder / "prompt.md").write_text(sent[-1]["content"], encoding="utf-8")
        stored = StoredProposal(
            id=f"p{n}",
            round=self.round_no,
            candidate=cand,
            finding=step.finding,
            plan_origin=step.origin,
            iteration=self.ctx.tally.step,
            parent=origin.parent,
            origin_defines=dict(origin.defines),
            origin_launch=dict(origin.launch),
            defines=fields["defines"],
            launch=fields["launch"],
            source_file=source_name,
            folder=rel,
            target_sha256=self.target_sha256,
        )
        (folder / PROPOSAL_FILE).write_text(stored.model_dump_json(indent=2), encoding="utf-8")
        return stored


class Replay:
    """The evaluate step of ``--evaluate``: each stored proposal measured with what it was proposed from.

    The proposal's parent, macros and launch geometry are its origin (not the best of this evaluation:
    its source was written against its parent), and its targeted metric is compared with the parent's
    profile; the accept rule (beat the original beyond noise, and the best so far) is the loop's own.
    Each proposal runs from its own origin, not the batch's: nothing is verified ahead. The best's profile
    is kept even at the end of the budget: the next ``--propose-only --from`` round plans from it.
    """

    def __init__(self, ctx: RunContext, replay: ProposalsRewriter) -> None:
        self.ctx = ctx
        self.replay = replay
        self.measure = Measure(ctx, verifies_ahead=False, plans_past_budget=True, annotate=self._annotate)
        self.current: StoredProposal | None = None
        self._profiles: dict[str | None, KernelProfile | None] = {}

    def order_first_plan(self, queue: list[int], plan: PlanLog) -> list[int]:
        return queue

    def verify_ahead(self, candidates: list[Candidate], step: PlannedTransform, origin: Origin) -> None:
        """Each proposal runs from its own origin: nothing is started ahead."""

    def settle_ahead(self) -> None:
        self.measure.settle_ahead()

    def evaluate(
        self,
        cand: Candidate,
        step: PlannedTransform,
        origin: Origin | None = None,
        *,
        repairs: int = 0,
        repair_of: str | None = None,
    ) -> CandidateOutcome:
        stored = self.replay.stored(cand)
        if stored is None:
            return self.measure.evaluate(cand, step, origin, repairs=repairs, repair_of=repair_of)
        st = self.ctx.state
        before = st.before
        st.before = self._profile_of(stored.parent, before)
        self.current = stored
        try:
            outcome = self.measure.evaluate(
                cand,
                step,
                Origin(dict(stored.origin_defines), dict(stored.origin_launch), stored.parent),
                repairs=repairs,
                repair_of=repair_of,
            )
        finally:
            self.current = None
        if not outcome.accepted:
            st.before = before
        return outcome

    def _annotate(self, outcome: CandidateOutcome) -> CandidateOutcome:
        """The outcome of a stored proposal names it."""
        if self.current is None:
            return outcome
        return outcome.model_copy(update={"proposal": self.current.id, "proposal_dir": self.current.folder})

    def _profile_of(self, parent: str | None, fallback: KernelProfile | None) -> KernelProfile | None:
        """The profile a proposal's targeted metric is compared with: its parent's."""
        base, st = self.ctx.baseline, self.ctx.state
        if parent not in self._profiles:
            if parent is None:
                found = base.diagnosis.profile if base.diagnosis else None
            else:
                cand = next((c for c in st.outcomes if c.id == parent), None)
                found = candidate_profile(cand, base.kernel_name) if cand else None
            self._profiles[parent] = found
        return self._profiles[parent] or fallback
