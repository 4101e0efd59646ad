"""The loop: plan → propose → evaluate (build, verify, time, re-profile) → decide, within a budget.

One *iteration* is one rewrite request (one plan step, one ``Rewriter.propose`` call) and the
evaluation of every candidate it returned (at most ``max_candidates``). Plan steps the rewriter
cannot apply to the current source are skipped without spending an iteration. Rejection reasons
(incorrect, not faster, implausible, ...) are fed back to every later request
(``RewriteRequest.failed_attempts``); the llm backend gets a second attempt at the same transform
with them before the loop moves on (recipes are deterministic: the same request would give the
same candidates). An accepted candidate becomes the source of later requests, and its profile the
diagnosis that re-plans them. LLM failures are recorded; two in a row stop the loop.

The loop is given its parts: a ``RunContext`` (what every part reads and updates), the proposal source
(a ``Rewriter``: a backend, the stored proposals of a replay, or a recording one that writes proposals),
the evaluate step (``Measure``, or a two-machine step of ``phase_steps``) and optionally the run writer,
which it attaches to what it keeps. ``one_machine_loop`` assembles the one-machine loop.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, Protocol

from perfagent.optimize import first_kernel, measure, repair
from perfagent.optimize.context import LoopTally, RunContext, new_context
from perfagent.optimize.cost import CompileMeter
from perfagent.optimize.evaluate import Measure
from perfagent.optimize.events import Info, Planned, ProgressCallback, Proposed
from perfagent.optimize.fits import contradiction
from perfagent.optimize.limits import LoopLimits, MeasureLimits
from perfagent.optimize.loop_state import (
    FEEDBACK_VERDICTS,
    MAX_FEEDBACK,
    BaselineState,
    LoopResult,
    LoopState,
    Origin,
    candidate_key,
    merged,
)
from perfagent.optimize.plan import PlannedTransform, make_plan
from perfagent.optimize.plan_log import PlanLog
from perfagent.optimize.services import Services
from perfagent.records import CandidateOutcome, IterationCost
from perfagent.rewrite import get_rewriter
from perfagent.rewrite.base import (
    Candidate,
    LaunchContext,
    Rewriter,
    RewriteRequest,
    launch_context,
)
from perfagent.workloads.optimizable import OptimizeWorkload
from profilers.core_errors import LLMError
from profilers.model import DeviceInfo, Finding, KernelDiagnosis

__all__ = [
    "LLM_ATTEMPTS_PER_TRANSFORM",
    "LLM_ERRORS_TO_STOP",
    "EvaluateStep",
    "OptimizeLoop",
    "RunWriterPart",
    "one_machine_loop",
]

LLM_ATTEMPTS_PER_TRANSFORM = 2
LLM_ERRORS_TO_STOP = 2


@dataclass
class _Batch:
    """What one iteration's candidates came to."""

    outcomes: list[CandidateOutcome]
    accepted: CandidateOutcome | None
    feedback: bool
    """Some rejection is worth another try of the same transform (llm backend)."""


class EvaluateStep(Protocol):
    """What the loop asks of its evaluate step (``Measure``, ``ProposalWriter``, ``Replay``)."""

    def evaluate(
        self,
        cand: Candidate,
        step: PlannedTransform,
        origin: Origin | None = None,
        *,
        repairs: int = 0,
        repair_of: str | None = None,
    ) -> CandidateOutcome: ...

    def verify_ahead(self, candidates: list[Candidate], step: PlannedTransform, origin: Origin) -> None: ...

    def settle_ahead(self) -> None: ...

    def order_first_plan(self, queue: list[int], plan: PlanLog) -> list[int]: ...


class RunWriterPart(Protocol):
    """The run writer as the loop sees it: told what to read once the loop exists."""

    def attach(self, state: LoopState, tally: LoopTally, plan: PlanLog, rewriter: Rewriter) -> None: ...


class OptimizeLoop:
    """Runs the iterations for one workload; ``run()`` returns a ``LoopResult``.

    ``limits.transforms`` (ids to try instead of the diagnosis' plan) and ``limits.finding`` (only plan
    for findings of this category) choose what is planned; ``write_kernel``: a plain-PyTorch KernelBench
    problem, first ask for a ModelNew with kernels in this language (``perfagent.optimize.first_kernel``),
    then optimize it.
    """

    def __init__(
        self,
        ctx: RunContext,
        rewriter: Rewriter,
        evaluator: EvaluateStep,
        *,
        writer: RunWriterPart | None = None,
        hardware: DeviceInfo | None = None,
        write_kernel: Literal["cuda", "triton"] | None = None,
        reference_profile: Sequence[str] = (),
    ) -> None:
        self.ctx = ctx
        self.rewriter = rewriter
        self.evaluator = evaluator
        self.write_kernel = write_kernel
        self.hardware = hardware
        self.plan = PlanLog()
        self._spec_data: dict[str, object] | None = None
        self.reference_profile: list[str] = list(reference_profile)
        """KernelBench: the reference Model's profile as prompt lines (``reference_profile_lines``)."""
        if writer is not None:
            writer.attach(ctx.state, ctx.tally, self.plan, rewriter)

    @property
    def state(self) -> LoopState:
        """The loop's state (``ctx.state``): the working source, the best, the outcomes so far."""
        return self.ctx.state

    # ------------------------------------------------------------------ requests and plans

    def request_for(self, transform: str, finding: Finding | None) -> RewriteRequest:
        return RewriteRequest(
            source=self.ctx.state.source,
            path=self.ctx.display_path(),
            language=self.ctx.wl.language,
            transform=transform,
            finding=finding,
            hardware=self.hardware,
            kernel=self.ctx.wl.entry,
            failed_attempts=self.ctx.state.failed[-MAX_FEEDBACK:],
            history=repair.history(self.ctx.state.outcomes),
            hot_lines=list(self.ctx.state.before.source_lines) if self.ctx.state.before else [],
            launch=self.launch_context(),
            reference_profile=self.reference_profile,
            max_candidates=self.ctx.limits.max_candidates,
        )

    def launch_context(self) -> LaunchContext | None:
        """The oracle spec's launch geometry with the current best's overrides (cuda-kernel only)."""
        if self.ctx.wl.spec_path is None:
            return None
        if self._spec_data is None:
            self._spec_data = measure.oracle_spec_data(self.ctx.wl)
        return launch_context({**self._spec_data, **self.ctx.state.launch})

    def make_plan(self, diagnosis: KernelDiagnosis | None, measured: bool) -> list[PlannedTransform]:
        with self.ctx.tally.clock.stage("plan"):
            return self._make_plan(diagnosis, measured)

    def _make_plan(self, diagnosis: KernelDiagnosis | None, measured: bool) -> list[PlannedTransform]:
        steps = make_plan(
            diagnosis,
            rewriter=self.rewriter,
            request_for=self.request_for,
            transforms=list(self.ctx.limits.transforms),
            finding=self.ctx.limits.finding,
            measured=measured,
            recipe_check=get_rewriter("recipes"),
        )
        return [self._fits(step, diagnosis) for step in steps]

    def _fits(self, step: PlannedTransform, diagnosis: KernelDiagnosis | None) -> PlannedTransform:
        """``step`` skipped, with why, when the evidence contradicts its catalog precondition (not for a
        transform the user named: ``perfagent.optimize.fits``)."""
        if step.skipped is not None or step.origin == "requested":
            return step
        why = contradiction(
            step.transform.id,
            self.ctx.state.source,
            self.ctx.wl.language,
            diagnosis.profile if diagnosis else None,
        )
        return step if why is None else replace(step, skipped=f"does not fit: {why}")

    # ------------------------------------------------------------------ the loop

    def run(self) -> LoopResult:
        measured = self.ctx.baseline.measured
        if self.write_kernel is not None:
            ask = first_kernel.Ask(self.request_for, self.rewriter.propose, self.evaluate_and_repair)
            failed = first_kernel.write(self.ctx, self.plan, ask, self.write_kernel, self.reference_profile)
            if failed is not None:
                return self._result(failed)
            measured = self.ctx.state.diagnosis is not None
        queue = self._first_plan(measured)
        attempts: Counter[str] = Counter()
        llm_in_a_row = 0
        while (stopped := self._why_stop(queue)) is None:
            self.ctx.wl.description.check_unchanged(f"iteration {self.ctx.tally.step + 1}")
            index = queue.pop(0)
            step = self.plan[index]
            request = self.request_for(step.transform.id, step.finding)
            if not self._runnable(index, request):
                continue
            attempts[step.transform.id] += 1
            started, meter = time.monotonic(), CompileMeter()
            candidates = self._propose(step, request)
            propose_s, meter = time.monotonic() - started, meter.stop()
            if candidates is None:
                llm_in_a_row += 1
                if llm_in_a_row >= LLM_ERRORS_TO_STOP:
                    stopped = f"the LLM failed {llm_in_a_row} times in a row: {self.ctx.state.llm_errors[-1]}"
                    break
                continue
            llm_in_a_row = 0
            batch = self._evaluate_batch(index, step, request, candidates)
            self._note_cost(step, started, propose_s, meter, len(candidates))
            if batch.accepted is not None:
                queue = self._replan(batch.accepted, queue)
            elif self._try_again(step, batch, attempts):
                queue.insert(0, index)
        return self._result(stopped)

    def _first_plan(self, measured: bool) -> list[int]:
        """Plan from the diagnosis (or the requested transforms); the queue of plan-log indexes to try."""
        steps = self.make_plan(self.ctx.state.diagnosis, measured)
        queue = self.plan.runnable(steps)
        order = [self.plan[i].transform.id for i in queue]
        skipped = [s for s in steps if s.skipped]
        said = "; ".join(f"{s.transform.id}: {s.skipped}" for s in skipped[:3])
        self.ctx.tell(
            Planned,
            f"plan: {', '.join(order) or 'nothing to try'}"
            + (f" ({len(skipped)} skipped: {said})" if skipped else ""),
            steps=order,
        )
        return self.evaluator.order_first_plan(queue, self.plan)

    def _why_stop(self, queue: list[int]) -> str | None:
        """Why the loop ends before the next step (None: go on)."""
        if self.ctx.tally.step >= self.ctx.limits.iterations:
            return f"iteration budget spent ({self.ctx.limits.iterations})"
        if queue and (over := self.ctx.tally.budget.why_stop(self.ctx.tally.iteration_walls())):
            return over
        if not queue:
            if self.plan:
                return "plan exhausted: no further transform this backend can apply"
            return "nothing to try: the diagnosis names no transform this backend can apply"
        return None

    def _runnable(self, index: int, request: RewriteRequest) -> bool:
        """Start an iteration for plan step ``index``, or skip it (the rewriter cannot apply it here)."""
        step = self.plan[index]
        with self.ctx.tally.clock.stage("plan"):
            why = self.rewriter.applies(request)
        if why is not None:
            self.plan[index] = replace(step, skipped=f"{self.rewriter.name}: {why}")
            self.ctx.tell(Info, f"skip {step.transform.id}: {why}", transform=step.transform.id)
            return False
        self.ctx.tally.step += 1
        self.ctx.tally.budget.start_iteration()
        self.plan.tried.add(index)
        self.ctx.tell(
            Info,
            f"iteration {self.ctx.tally.step}: {step.transform.id} ({self.rewriter.name})",
            transform=step.transform.id,
        )
        return True

    def _propose(self, step: PlannedTransform, request: RewriteRequest) -> list[Candidate] | None:
        """The propose step: the rewriter's candidates, unseen first (None: the LLM failed)."""
        meter = CompileMeter()
        try:
            with self.ctx.tally.clock.stage("propose"):
                candidates = self.rewriter.propose(request)
        except LLMError as exc:
            self.ctx.state.llm_errors.append(str(exc))
            self.ctx.tell(Info, f"LLM error: {exc}", transform=step.transform.id)
            return None
        finally:
            self.ctx.tally.clock.move(meter.stop().wait_s, "propose", "compile-check")
            self._take_llm_errors(step.transform.id)
        # new proposals first: a recipe re-asked after an acceptance repeats what was measured, and a
        # repeat within the batch would only be recorded as a duplicate; neither takes a new one's slot
        repeats = self._measured_or_repeated(candidates)
        candidates = [c for _, c in sorted(zip(repeats, candidates, strict=True), key=lambda rc: rc[0])]
        candidates = candidates[: self.ctx.limits.max_candidates]
        self.ctx.tell(
            Proposed,
            f"{len(candidates)} candidate(s) for {step.transform.id}",
            count=len(candidates),
            transform=step.transform.id,
        )
        return candidates

    def _measured_or_repeated(self, candidates: list[Candidate]) -> list[bool]:
        """Per candidate, whether it would not be measured: it repeats (comments and layout aside) one
        measured before or an earlier one of its batch."""
        keys = [self._candidate_key(c) for c in candidates]
        return [k in self.ctx.state.seen or k in keys[:i] for i, k in enumerate(keys)]

    def _take_llm_errors(self, transform: str) -> None:
        """Keep the model's errors that ``auto`` swallowed while a recipe's candidates went on."""
        take = getattr(self.rewriter, "take_errors", None)
        for error in take() if take is not None else []:
            self.ctx.state.llm_errors.append(error)
            self.ctx.tell(Info, f"LLM error (the recipes' candidates go on): {error}", transform=transform)

    def _evaluate_batch(
        self, index: int, step: PlannedTransform, request: RewriteRequest, candidates: list[Candidate]
    ) -> _Batch:
        """Evaluate and decide every candidate of one iteration (repairs included)."""
        # every candidate of a batch runs with the macros, geometry and parent it was proposed from,
        # even when an earlier one of the batch was accepted meanwhile
        origin = self.ctx.state.origin()
        self.evaluator.verify_ahead(candidates, step, origin)
        try:
            outcomes = [
                o for cand in candidates for o in self.evaluate_and_repair(cand, step, origin, request)
            ]
        finally:
            self.evaluator.settle_ahead()
        self.plan.note_try(index, outcomes, self.rewriter.name)
        accepted = next((o for o in reversed(outcomes) if o.accepted), None)
        feedback = any(not o.accepted and o.verdict in FEEDBACK_VERDICTS for o in outcomes)
        if outcomes and all(o.verdict == "duplicate" for o in outcomes):
            self.ctx.tally.step -= 1  # nothing new was measured: the iteration budget is for new candidates
            self.ctx.tell(
                Info, f"{step.transform.id}: only already-measured candidates; not counted as an iteration"
            )
        return _Batch(outcomes, accepted, feedback)

    def _note_cost(
        self, step: PlannedTransform, started: float, propose_s: float, meter: CompileMeter, count: int
    ) -> None:
        """Keep where this iteration's wall time went (``RunCost.iterations``)."""
        self.ctx.tally.iteration_costs.append(
            IterationCost(
                iteration=self.ctx.tally.step,
                transform=step.transform.id,
                wall_s=round(time.monotonic() - started, 3),
                propose_s=round(propose_s, 3),
                compile_check_s=round(meter.wait_s, 3),
                compiles=meter.compiles,
                candidates=count,
            )
        )

    def _try_again(self, step: PlannedTransform, batch: _Batch, attempts: Counter[str]) -> bool:
        """A batch the model took part in gets another request for the same transform, with the rejections
        as feedback (recipes are deterministic: the same request would give the same candidates)."""
        from_model = self.rewriter.name == "llm" or any(o.backend == "llm" for o in batch.outcomes)
        return from_model and batch.feedback and attempts[step.transform.id] < LLM_ATTEMPTS_PER_TRANSFORM

    def _result(self, stopped: str) -> LoopResult:
        st = self.ctx.state
        best = st.best()
        return LoopResult(
            candidates=list(st.outcomes),
            plan=self.plan.record(stopped, self.ctx.state.outcomes),
            best=st.best_id,
            best_speedup=best.speedup if best else None,
            iterations_used=self.ctx.tally.step,
            stopped=stopped,
            llm_errors=list(st.llm_errors),
        )

    def _candidate_key(self, cand: Candidate) -> str:
        """The identity ``evaluate`` uses to spot a candidate measured before (source, macros, launch)."""
        return candidate_key(
            cand.source, *merged(cand, self.ctx.state.origin()), language=self.ctx.wl.language
        )

    def _replan(self, accepted: CandidateOutcome, queue: list[int]) -> list[int]:
        """After an acceptance: re-plan from the new best's profile when there is one."""
        diagnosis = self.ctx.state.diagnosis
        if diagnosis is None or not self.ctx.baseline.measured:
            return queue
        steps = self.make_plan(diagnosis, True)
        fresh = self.plan.runnable(steps)
        # every planned transform gets one try before any is revisited (stable within each group)
        fresh.sort(key=lambda i: i in self.plan.tried)
        for i in queue:
            if i not in fresh and i not in self.plan.tried:
                self.plan.dropped[i] = f"dropped when re-planned from {accepted.id}'s profile"
        ids = [self.plan[i].transform.id for i in fresh]
        self.ctx.tell(
            Planned, f"re-planned from {accepted.id}'s profile: {', '.join(ids) or 'nothing'}", steps=ids
        )
        return fresh

    # ------------------------------------------------------------------ repairs

    def evaluate_and_repair(
        self, cand: Candidate, step: PlannedTransform, origin: Origin, request: RewriteRequest
    ) -> list[CandidateOutcome]:
        """``evaluate``, then up to ``limits.repairs`` repair requests while it fails to compile or verify."""
        out = [self.evaluator.evaluate(cand, step, origin)]
        fix = getattr(self.rewriter, "repair", None)
        if fix is None or cand.backend != "llm":  # only the model repairs; a recipe would repeat itself
            return out
        for round_ in range(1, self.ctx.limits.repairs + 1):
            last = out[-1]
            feedback = repair.feedback(last)
            why_not = repair.machine_failure(last, cand.source, gpu=self.ctx.gpu, wl=self.ctx.wl)
            if feedback is None:
                break
            if why_not is not None:
                self.ctx.tell(Info, f"{last.id} is not sent back for a repair: {why_not}", candidate=last.id)
                break
            self.ctx.tell(
                Info,
                f"{last.id} {last.verdict}: asking for a repair ({round_} of {self.ctx.limits.repairs})",
                candidate=last.id,
                transform=cand.transform,
            )
            try:
                with self.ctx.tally.clock.stage("propose"):
                    cand = fix(request, cand, feedback, round_=round_)
            except LLMError as exc:
                self.ctx.state.llm_errors.append(str(exc))
                self.ctx.tell(Info, f"LLM error during a repair: {exc}", transform=cand.transform)
                break
            out.append(self.evaluator.evaluate(cand, step, origin, repairs=round_, repair_of=last.id))
        return out


def one_machine_loop(
    wl: OptimizeWorkload,
    rewriter: Rewriter,
    run_dir: Path,
    *,
    gpu: bool,
    baseline: BaselineState,
    limits: LoopLimits,
    measuring: MeasureLimits,
    services: Services | None = None,
    hardware: DeviceInfo | None = None,
    progress: ProgressCallback | None = None,
    writer: RunWriterPart | None = None,
    write_kernel: Literal["cuda", "triton"] | None = None,
    reference_profile: Sequence[str] = (),
) -> OptimizeLoop:
    """The one-machine loop: ``rewriter``'s candidates measured (``Measure``) with ``services``."""
    ctx = new_context(
        wl,
        run_dir,
        gpu=gpu,
        baseline=baseline,
        limits=limits,
        measuring=measuring,
        services=services,
        progress=progress,
    )
    return OptimizeLoop(
        ctx,
        rewriter,
        Measure(ctx),
        writer=writer,
        hardware=hardware,
        write_kernel=write_kernel,
        reference_profile=reference_profile,
    )
