"""The loop's evaluate step: one candidate staged, built, verified, timed, re-profiled, judged.

``Measure.evaluate`` runs the stages in order and stops at the first that settles the verdict (a failed
build, a failed or impossible verification, no GPU to time on); ``decide`` applies the accept rule
(``perfagent.optimize.outcome.decide``) to what was measured and updates the ``LoopState``: an accepted
candidate becomes the working source, a rejection worth telling the rewriter is remembered. The GPU half
(timing, re-profile) is ``evaluate_time``'s, a batch built and verified at once ``evaluate_ahead``'s.
The two-machine steps (``phase_steps``) write proposals instead, or replay stored ones through a
``Measure``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from perfagent.optimize import measure
from perfagent.optimize.context import RunContext
from perfagent.optimize.evaluate_ahead import AheadBatch
from perfagent.optimize.evaluate_time import Timer
from perfagent.optimize.events import Accepted, Built, Info, Rejected, Verified
from perfagent.optimize.loop_state import (
    SNAPSHOT_METRICS,
    Origin,
    candidate_key,
    merged,
    snapshot,
    verification_summary,
)
from perfagent.optimize.outcome import decide
from perfagent.optimize.plan import PlannedTransform
from perfagent.optimize.plan_log import PlanLog
from perfagent.optimize.staged import Measured, Staged, Tell, stage
from perfagent.records import CandidateOutcome, VerificationSummary
from perfagent.rewrite.base import Candidate

__all__ = ["Measure", "Measured"]


class Measure:
    """The evaluate step of a loop that measures: candidates of ``ctx.wl`` judged against its baseline."""

    def __init__(
        self,
        ctx: RunContext,
        *,
        verifies_ahead: bool = True,
        plans_past_budget: bool = False,
        annotate: Callable[[CandidateOutcome], CandidateOutcome] | None = None,
    ) -> None:
        self.ctx = ctx
        self.verifies_ahead = verifies_ahead
        """Whether a batch may be built and verified at once (a replay runs each from its own origin: no)."""
        self.annotate = annotate
        """Marks each outcome before it is kept (a replay names the proposal it measured)."""
        self.timer = Timer(ctx, plans_past_budget=plans_past_budget)
        self.ahead = AheadBatch(ctx, self.timer, self._stage_fresh, self._build_and_verify)
        self._numbered = 0
        """Candidate folders staged so far (the next is ``c{_numbered + 1}``)."""

    def order_first_plan(self, queue: list[int], plan: PlanLog) -> list[int]:
        """The first plan's queue as this step takes it: unchanged (every step is measured)."""
        return queue

    def evaluate(
        self,
        cand: Candidate,
        step: PlannedTransform,
        origin: Origin | None = None,
        *,
        repairs: int = 0,
        repair_of: str | None = None,
    ) -> CandidateOutcome:
        """Stage, build, verify, time and re-profile ``cand``; the decision on it."""
        st, language = self.ctx.state, self.ctx.wl.language
        origin = origin or st.origin()
        ahead_key = candidate_key(cand.source, *merged(cand, origin), language=language)
        started = self.ahead.take(ahead_key) if not repairs else None
        if started is not None:  # built and verified already with its batch
            st.seen[ahead_key] = started.staged.cid
            return self._complete(started.staged, self.ahead.collect(started))
        staged = self._stage(cand, step, origin, repairs=repairs, repair_of=repair_of)
        f = staged.fields
        key = candidate_key(cand.source, f["defines"], f["launch"], language=language)
        if key in st.seen:
            reason = f"same source, macros and launch as {st.seen[key]}: not measured again"
            outcome = CandidateOutcome(
                **f,
                verification=VerificationSummary(verdict="not-verified", reason="duplicate"),
                verdict="duplicate",
                accepted=False,
                reason=reason,
            )
            return self.finish(outcome, staged.folder)
        st.seen[key] = staged.cid
        self._write_spec(staged)
        return self._complete(staged, self._build_and_verify(staged))

    def verify_ahead(self, candidates: list[Candidate], step: PlannedTransform, origin: Origin) -> None:
        """Start building and verifying ``candidates`` together (``evaluate_ahead``)."""
        if self.verifies_ahead:
            self.ahead.start(candidates, step, origin)

    def settle_ahead(self) -> None:
        self.ahead.settle()

    def _complete(self, staged: Staged, measured: Measured) -> CandidateOutcome:
        """Time and re-profile a built and verified candidate (one at a time: the GPU must be quiet); decide."""
        if measured.build.ok is not False and measured.verification.verdict == "pass" and self.ctx.gpu:
            cid = staged.cid
            self.timer.time_and_reprofile(
                staged, measured, self.ahead.timed(cid), self.ahead.replaced_by(cid)
            )
        return self.decide(staged.fields, staged.folder, measured)

    def _write_spec(self, staged: Staged) -> None:
        """The launch spec with the candidate's macros and geometry (launch-spec kernels)."""
        wl = self.ctx.wl
        if wl.spec_path is not None:
            f = staged.fields
            staged.spec = measure.candidate_spec(wl, staged.folder, f["defines"], f["launch"])

    def _stage(
        self, cand: Candidate, step: PlannedTransform, origin: Origin, *, repairs: int, repair_of: str | None
    ) -> Staged:
        """Write the candidate's source, diff and request into its next folder."""
        ctx = self.ctx
        # outcomes carried over from earlier rounds (the two-machine phases) are numbered already
        n = self._numbered = max(self._numbered, len(ctx.state.outcomes)) + 1
        return stage(
            ctx.wl,
            ctx.run_dir,
            n,
            cand,
            step,
            origin,
            iteration=ctx.tally.step,
            repairs=repairs,
            repair_of=repair_of,
        )

    def _stage_fresh(self, cand: Candidate, step: PlannedTransform, origin: Origin) -> Staged:
        """A candidate of a batch started ahead: staged, its launch spec written."""
        staged = self._stage(cand, step, origin, repairs=0, repair_of=None)
        self._write_spec(staged)
        return staged

    def _build_and_verify(self, staged: Staged, tell: Tell | None = None) -> Measured:
        """The build check, then verification against the original (where the workload runs here).

        ``tell``: where its events go (a batch started ahead holds them back; default ``ctx.tell``).
        """
        ctx, s, cid = self.ctx, self.ctx.measuring, staged.cid
        tell, wl, transform = tell or ctx.tell, ctx.wl, staged.fields["transform"]
        clock = time.monotonic()
        with ctx.tally.clock.stage("build"):
            build = ctx.services.build_check(
                wl, staged.source_path, staged.spec, gpu=ctx.gpu, arch=s.arch, timeout_s=s.compile_timeout_s
            )
        staged.stages["build"] = round(time.monotonic() - clock, 3)
        said = "builds" if build.ok else "build failed" if build.ok is False else "build not checked"
        tell(Built, f"{cid}: {said} ({build.detail})", ok=build.ok, candidate=cid, transform=transform)
        if build.ok is False:
            return Measured(
                build, VerificationSummary(verdict="not-verified", reason="not run: the build failed")
            )
        if ctx.gpu or wl.runs_on_cpu:
            tell(Info, f"{cid}: verifying against the original …", candidate=cid, transform=transform)
        clock = time.monotonic()
        with ctx.tally.clock.stage("verify"):
            result = ctx.services.verify(
                wl,
                staged.source_path,
                staged.spec,
                gpu=ctx.gpu,
                seeds=s.seeds,
                seed=s.verify_seed,
                timeout_s=s.timeout_s,
                compile_timeout_s=s.compile_timeout_s,
            )
        staged.stages["verify"] = round(time.monotonic() - clock, 3)
        verification = verification_summary(result, build)
        measure.write_json(
            staged.folder / "verification.json", result if result is not None else verification
        )
        if result is not None:
            tell(
                Verified,
                f"{cid}: {verification.verdict} — {verification.reason}",
                verdict=verification.verdict,
                candidate=cid,
                transform=transform,
            )
        return Measured(build, verification)

    # ------------------------------------------------------------------ decide

    def decide(self, fields: dict[str, Any], folder: Path, measured: Measured) -> CandidateOutcome:
        """Apply the accept rule to what was measured; keep the outcome and update the state."""
        st, timing, metric, reprofiled = self.ctx.state, measured.timing, measured.metric, measured.reprofiled
        after = reprofiled.kernel if reprofiled else None
        self._save_profile(folder, measured)
        decision = decide(
            build=measured.build,
            verification=measured.verification,
            timing=timing if self.ctx.gpu else None,
            metric=metric,
            best_speedup=st.best_speedup,
            best_id=st.best_id,
        )
        names = (str(fields["metric"]), *SNAPSHOT_METRICS)
        # the re-profile ran the candidate's code: how it was confined belongs in its record
        sandbox = [reprofiled.sandbox] if reprofiled and reprofiled.sandbox else []
        outcome = CandidateOutcome(
            **{**fields, "notes": [*fields.get("notes", []), *sandbox]},
            verification=measured.verification,
            verdict=decision.verdict,
            accepted=decision.accepted,
            reason=decision.reason,
            checks=decision.checks,
            route=decision.route,
            improved=decision.improved,
            **_timing_fields(timing),
            metric_before=metric.before if metric else None,
            metric_after=metric.after if metric else None,
            metric_moved=metric.moved if metric else None,
            metrics_before=snapshot(st.before, names),
            metrics_after=snapshot(after, names),
        )
        if outcome.accepted:
            st.adopt(outcome, after)
        else:
            st.remember_rejection(outcome)
        return self.finish(outcome, folder)

    def _save_profile(self, folder: Path, measured: Measured) -> None:
        """``profile.json``: the candidate's re-profile, or why it was not re-profiled."""
        reprofiled = measured.reprofiled
        if reprofiled is not None and reprofiled.profile is not None:
            measure.write_json(folder / "profile.json", reprofiled.profile)
            return
        why = (reprofiled.note if reprofiled else None) or self._why_not_profiled(measured)
        measure.write_json(folder / "profile.json", {"profiled": False, "reason": why})

    def _why_not_profiled(self, measured: Measured) -> str:
        if not self.ctx.gpu:
            return "no GPU: candidates are not re-profiled"
        if not self.ctx.baseline.can_profile:
            return self.ctx.baseline.profile_note or "ncu cannot run here"
        if measured.verification.verdict != "pass":
            return "not re-profiled: the candidate did not pass verification"
        return "not re-profiled: only candidates faster beyond noise are (the targeted-metric check)"

    def finish(self, outcome: CandidateOutcome, folder: Path) -> CandidateOutcome:
        """Keep ``outcome`` (as ``annotate`` marks it), write ``outcome.json`` and say the verdict."""
        if self.annotate is not None:
            outcome = self.annotate(outcome)
        self.ctx.state.outcomes.append(outcome)
        measure.write_json(folder / "outcome.json", outcome)
        if outcome.accepted:
            self.ctx.tell(
                Accepted,
                f"{outcome.id} accepted: {outcome.reason}",
                speedup=outcome.speedup,
                candidate=outcome.id,
                transform=outcome.transform,
            )
        else:
            self.ctx.tell(
                Rejected,
                f"{outcome.id} {outcome.verdict}: {outcome.reason}",
                reason=outcome.reason,
                candidate=outcome.id,
                transform=outcome.transform,
            )
        return outcome


def _timing_fields(timing: measure.Timing | None) -> dict[str, Any]:
    """The outcome's timing fields (all None when not timed)."""
    names = (
        "time_s",
        "time_s_before",
        "speedup",
        "noise_threshold",
        "timing_rounds",
        "timer",
        "pct_of_roofline",
        "pct_of_dram_peak",
        "pct_of_compute_peak",
    )
    return {name: getattr(timing, name) if timing else None for name in names}
