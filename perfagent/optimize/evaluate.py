"""The loop's evaluate and decide steps: one candidate staged, built, verified, timed, re-profiled, judged.

``CandidateEvaluator.evaluate`` runs the steps in order and stops at the first that settles the verdict
(a failed build, a failed or impossible verification, no GPU to time on); ``decide`` applies the accept
rule (``perfagent.optimize.outcome.decide``) to what was measured and updates the ``LoopState``: an
accepted candidate becomes the working source, a rejection worth telling the rewriter is remembered.
``OptimizeLoop`` (``loop``) adds planning and proposing on top; the two-machine loops (``phases``)
override ``evaluate`` and ``finish``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from knowledge.transforms import catalog
from perfagent.optimize import measure, reprofile
from perfagent.optimize.cost import StageClock
from perfagent.optimize.events import (
    Accepted,
    Built,
    Info,
    LoopEvent,
    Profiled,
    ProgressCallback,
    Rejected,
    Timed,
    Verified,
)
from perfagent.optimize.loop_state import (
    SNAPSHOT_METRICS,
    BaselineState,
    LoopState,
    Origin,
    candidate_fields,
    candidate_key,
    merged,
    profile_pcts,
    snapshot,
    verification_summary,
)
from perfagent.optimize.outcome import MetricCheck, check_metric, decide, would_accept
from perfagent.optimize.plan import PlannedTransform
from perfagent.optimize.reprofile_tiers import tiers_for_candidate
from perfagent.optimize.settings import OptimizeSettings
from perfagent.records import CandidateOutcome, IterationCost, VerificationSummary
from perfagent.rewrite.base import Candidate
from perfagent.workloads.optimizable import OptimizeWorkload

Tell = Callable[..., None]
"""``CandidateEvaluator.tell``'s signature: ``tell(event class, message, **fields)``."""


@dataclass
class Measured:
    """What the evaluate step measured of one candidate (None: that step was not reached)."""

    build: measure.BuildOutcome
    verification: VerificationSummary
    timing: measure.Timing | None = None
    metric: MetricCheck | None = None
    reprofiled: reprofile.Reprofile | None = None


@dataclass
class _Staged:
    """A candidate written into its folder, with the fields its outcome will carry."""

    cid: str
    folder: Path
    source_path: Path
    spec: Path | None
    fields: dict[str, Any]
    step: PlannedTransform
    stages: dict[str, float] = field(default_factory=dict)
    """Wall seconds of each stage reached (build, verify, time, profile)."""


@dataclass
class _Ahead:
    """A candidate being built and verified ahead of its turn (``CandidateEvaluator.verify_ahead``)."""

    staged: _Staged
    measured: Future[Measured]
    told: list[tuple[type[LoopEvent], str, dict[str, object]]]
    """Its build and verify events, held back so that they are told in the candidates' order."""


class CandidateEvaluator:
    """Evaluates and decides candidates of one workload against its baseline."""

    verifies_ahead: ClassVar[bool] = True
    """Whether ``verify_ahead`` may build and verify a batch at once (loops that do not evaluate: no)."""
    plans_past_budget: ClassVar[bool] = False
    """Whether the best's profile is planned from after the iteration budget is spent (a two-machine
    evaluate: the next ``--propose-only --from`` round plans from it)."""

    def __init__(
        self,
        wl: OptimizeWorkload,
        run_dir: Path,
        *,
        gpu: bool,
        baseline: BaselineState,
        settings: OptimizeSettings,
        progress: ProgressCallback | None = None,
    ) -> None:
        self.wl = wl
        self.run_dir = run_dir
        self.gpu = gpu
        self.baseline = baseline
        self.settings = settings
        self._progress = progress
        self.step = 0
        """The current iteration (1-based; 0 before the first)."""
        self._numbered = 0
        """Candidate folders staged so far (the next is ``c{_numbered + 1}``)."""
        self._ahead: dict[str, _Ahead] = {}
        """Candidate key -> its build and verification started by ``verify_ahead``."""
        self._batch: list[_Ahead] = []
        """The batch ``verify_ahead`` started last, in the candidates' order, until it is timed."""
        self._timed_ahead: dict[str, tuple[measure.Timing, float]] = {}
        """Candidate id -> its timing from the batch's one timing worker, and its share of that worker's
        wall time, s (``_time_batch``)."""
        self.clock = StageClock()
        """Wall seconds of the loop's stages (``OptimizeResult.cost``)."""
        self.iteration_costs: list[IterationCost] = []
        self._superseded: dict[str, str] = {}
        """Candidate id -> the later candidate of its batch that will replace it as the best: it is
        accepted in turn but not re-profiled (only the batch's last winner's profile is planned from)."""
        original = wl.file.read_text(encoding="utf-8")
        self.state = LoopState(
            source=original,
            source_file=wl.file,
            defines={},
            before=baseline.diagnosis.profile if baseline.diagnosis else None,
            diagnosis=baseline.diagnosis,
        )
        self.state.seen[candidate_key(original, {}, language=wl.language)] = "the original"
        if baseline.start_speedup is not None:
            self.state.best_speedup = 1.0  # speed-ups are normalised to the starting ModelNew

    # ------------------------------------------------------------------ events

    def emit(self, event: LoopEvent) -> None:
        if self._progress is not None:
            self._progress(event)

    def tell(self, cls: type[LoopEvent], message: str, **extra: object) -> None:
        """Emit an event of ``cls`` carrying the current iteration and the budget."""
        self.emit(cls(message=message, step=self.step or None, total=self.settings.iterations, **extra))  # type: ignore[arg-type]

    # ------------------------------------------------------------------ evaluate

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
        st = self.state
        origin = origin or st.origin()
        ahead_key = candidate_key(cand.source, *merged(cand, origin), language=self.wl.language)
        if ahead_key in self._ahead and not repairs:  # built and verified already by verify_ahead
            ahead = self._ahead.pop(ahead_key)
            st.seen[ahead_key] = ahead.staged.cid
            return self._complete(ahead.staged, self._collect(ahead))
        staged = self._stage(cand, step, origin, repairs=repairs, repair_of=repair_of)
        f = staged.fields
        key = candidate_key(cand.source, f["defines"], f["launch"], language=self.wl.language)
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

    def _complete(self, staged: _Staged, measured: Measured) -> CandidateOutcome:
        """Time and re-profile a built and verified candidate (one at a time: the GPU must be quiet); decide."""
        if measured.build.ok is not False and measured.verification.verdict == "pass" and self.gpu:
            self._time_and_reprofile(staged, measured)
        return self.decide(staged.fields, staged.folder, measured)

    def _write_spec(self, staged: _Staged) -> None:
        """The launch spec with the candidate's macros and geometry (launch-spec kernels)."""
        if self.wl.spec_path is not None:
            f = staged.fields
            staged.spec = measure.candidate_spec(self.wl, staged.folder, f["defines"], f["launch"])

    # ------------------------------------------------------------------ a batch at once

    def verify_ahead(self, candidates: list[Candidate], step: PlannedTransform, origin: Origin) -> None:
        """Start building and verifying ``candidates`` together (``settings.verify_jobs`` at once).

        Verification needs no quiet GPU, and a build (a ``load_inline`` extension is close to a minute)
        is CPU work, so a batch's builds and verifications overlap; ``evaluate`` then takes each result
        in the candidates' order, and timing and re-profiling stay one at a time. Candidates measured
        before, and repeats within the batch, are left to ``evaluate`` (which calls them duplicates).
        """
        jobs = self.settings.verify_jobs_for(len(candidates))
        if not self.verifies_ahead or not (self.gpu or self.wl.runs_on_cpu):
            return
        if jobs < 2 and not self._times_batches():  # nothing to gain from holding the batch back
            return
        fresh: dict[str, Candidate] = {}
        for cand in candidates:
            key = candidate_key(cand.source, *merged(cand, origin), language=self.wl.language)
            if key not in self.state.seen and key not in self._ahead:
                fresh.setdefault(key, cand)
        if len(fresh) < 2:  # one new candidate gains nothing: evaluate takes it as usual
            return
        todo: list[tuple[str, _Staged]] = []
        for key, cand in fresh.items():
            staged = self._stage(cand, step, origin, repairs=0, repair_of=None)
            self._write_spec(staged)
            todo.append((key, staged))
        timed = (
            "then timing them in one worker"
            if self._times_batches() and self.wl.shares_timing_worker
            else "timing one at a time"
        )
        self.tell(
            Info,
            f"building and verifying {', '.join(s.cid for _, s in todo)} at once ({jobs} jobs); {timed}",
            transform=step.transform.id,
        )
        pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="perfagent-verify")
        for key, staged in todo:
            told: list[tuple[type[LoopEvent], str, dict[str, object]]] = []

            def hold(cls: type[LoopEvent], message: str, _told: list[Any] = told, **extra: object) -> None:
                _told.append((cls, message, extra))

            self._ahead[key] = _Ahead(staged, pool.submit(self._build_and_verify, staged, hold), told)
        self._batch = list(self._ahead.values())
        pool.shutdown(wait=False)

    def settle_ahead(self) -> None:
        """Forget builds and verifications no ``evaluate`` took (a batch cut short by an error): those not
        started are cancelled, running ones waited for (their subprocesses have time limits)."""
        for ahead in self._ahead.values():
            if not ahead.measured.cancel():
                ahead.measured.exception()
        self._ahead.clear()
        self._batch.clear()
        self._timed_ahead.clear()
        self._superseded.clear()

    def _collect(self, ahead: _Ahead) -> Measured:
        """The result of a build and verification started ahead, its events told now.

        Every other build and verification of the batch is waited for too: timing needs a quiet GPU.
        """
        with self.clock.stage("verify"):
            wait([ahead.measured, *(a.measured for a in self._ahead.values())])
        measured = ahead.measured.result()
        for cls, message, extra in ahead.told:
            self.tell(cls, message, **extra)
        if self._batch:
            batch, self._batch = self._batch, []
            with self.clock.stage("time"):
                self._time_batch(batch)
        return measured

    def _times_batches(self) -> bool:
        """A batch's verified candidates are all timed before any is judged (``_time_batch``): on a GPU,
        for workloads timed with CUDA events (a Triton script's timing is its ncu re-profile)."""
        return self.gpu and self.wl.timed_by == "cuda-events"

    def _time_batch(self, batch: list[_Ahead]) -> None:
        """Time the batch's built and verified candidates against the baseline before any is judged, and
        name those a later candidate of the batch will replace as the best (``_superseded``): only the
        batch's final winner is re-profiled (an ncu run, 7-14 s).

        Candidates that carry device code only (``OptimizeWorkload.shares_timing_worker``) are timed in
        one worker: one worker start for the batch. A batch that fails there (a candidate crashed or hung
        in it) is timed again one candidate at a time, which says which one it was. Python candidates
        are timed one by one, each in a worker of its own, as ``evaluate`` would.
        """
        if not self._times_batches():
            return
        ready = [
            a.staged
            for a in batch
            if (m := a.measured.result()).build.ok is not False and m.verification.verdict == "pass"
        ]
        if len(ready) < 2:
            return
        # a batch that failed in one worker is timed one candidate at a time here, still before any is
        # judged: its interim winners are not re-profiled either
        timed = (self._time_together(ready) if self.wl.shares_timing_worker else {}) or self._time_each(ready)
        best, winner, could_win = self.state.best_speedup, None, []
        for cid, (timing, _) in timed.items():
            if would_accept(timing, best):  # decided in this order: each winner becomes the best in turn
                could_win.append(cid)
                best, winner = timing.speedup, cid
        self._timed_ahead.update(timed)
        self._superseded = {cid: str(winner) for cid in could_win if cid != winner}

    def _time_together(self, ready: list[_Staged]) -> dict[str, tuple[measure.Timing, float]]:
        """Candidate id -> (timing, its share of the worker's wall time) from one worker; {} if it failed."""
        s, cids = self.settings, ", ".join(st.cid for st in ready)
        self.tell(Info, f"timing {cids} against the baseline in one worker ({s.runs} interleaved rounds) …")
        clock = time.monotonic()
        got = measure.bench_timings(
            self.wl,
            [(st.source_path, st.spec) for st in ready],
            runs=s.runs,
            warmup=s.warmup,
            timeout_s=s.timeout_s,
            compile_timeout_s=s.compile_timeout_s,
        )
        if isinstance(got, str):
            self.tell(Info, f"timing {cids} together failed ({got}); timing each alone")
            return {}
        share = round((time.monotonic() - clock) / len(ready), 3)
        return {st.cid: (self._relative_to_start(t), share) for st, t in zip(ready, got, strict=True)}

    def _time_each(self, ready: list[_Staged]) -> dict[str, tuple[measure.Timing, float]]:
        """Candidate id -> (timing, wall seconds), each candidate timed in a worker of its own."""
        timed = {}
        for st in ready:
            clock = time.monotonic()
            timing, _ = self.time_candidate(st.cid, st.source_path, st.spec, st.folder)
            timed[st.cid] = (timing, round(time.monotonic() - clock, 3))
        return timed

    def _stage(
        self, cand: Candidate, step: PlannedTransform, origin: Origin, *, repairs: int, repair_of: str | None
    ) -> _Staged:
        """Write the candidate's source, diff and request into its folder."""
        wl = self.wl
        # outcomes carried over from earlier rounds (the two-machine phases) are numbered already
        n = self._numbered = max(self._numbered, len(self.state.outcomes)) + 1
        folder = self.run_dir / "candidates" / f"{n:02d}_{cand.transform}"
        folder.mkdir(parents=True, exist_ok=True)
        fields = candidate_fields(cand, step, origin, iteration=self.step, file=wl.file)
        source_path = folder / (measure.CANDIDATE_CU if wl.language == "cuda" else f"source{wl.suffix}")
        source_path.write_text(cand.source, encoding="utf-8")
        diff_path = folder / "diff.patch"
        diff_path.write_text(cand.diff, encoding="utf-8")
        measure.write_json(folder / "candidate.json", cand)
        fields.update(
            id=f"c{n}",
            repairs=repairs,
            repair_of=repair_of,
            source_path=str(source_path),
            diff_path=str(diff_path),
            stage_s={},
        )
        return _Staged(f"c{n}", folder, source_path, None, fields, step, fields["stage_s"])

    def _build_and_verify(self, staged: _Staged, tell: Tell | None = None) -> Measured:
        """The build check, then verification against the original (where the workload runs here).

        ``tell``: where its events go (``verify_ahead`` holds them back; default ``self.tell``).
        """
        tell = tell or self.tell
        wl, s, cid = self.wl, self.settings, staged.cid
        transform = staged.fields["transform"]
        clock = time.monotonic()
        with self.clock.stage("build"):
            build = measure.build_check(
                wl, staged.source_path, staged.spec, gpu=self.gpu, arch=s.arch, timeout_s=s.compile_timeout_s
            )
        staged.stages["build"] = round(time.monotonic() - clock, 3)
        said = "builds" if build.ok else "build failed" if build.ok is False else "build not checked"
        tell(Built, f"{cid}: {said} ({build.detail})", ok=build.ok, candidate=cid, transform=transform)
        if build.ok is False:
            return Measured(
                build, VerificationSummary(verdict="not-verified", reason="not run: the build failed")
            )
        if self.gpu or wl.runs_on_cpu:
            tell(Info, f"{cid}: verifying against the original …", candidate=cid, transform=transform)
        clock = time.monotonic()
        with self.clock.stage("verify"):
            result = measure.verify_candidate(
                wl,
                staged.source_path,
                staged.spec,
                gpu=self.gpu,
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

    def _time_and_reprofile(self, staged: _Staged, measured: Measured) -> None:
        """Time a verified candidate; re-profile it when it could win (the targeted-metric check)."""
        cid, transform = staged.cid, staged.fields["transform"]
        clock = time.monotonic()
        if cid in self._timed_ahead:  # timed with its batch (``_time_batch``)
            timing, staged.stages["time"] = self._timed_ahead.pop(cid)
            if timing.bench is not None:
                measure.write_json(staged.folder / "bench.json", timing.bench)
        else:
            with self.clock.stage("time"):
                timing, measured.reprofiled = self.time_candidate(
                    cid, staged.source_path, staged.spec, staged.folder
                )
            staged.stages["time"] = round(time.monotonic() - clock, 3)
        measured.timing = timing
        said = f"{timing.speedup:.3g}x vs the original" if timing.speedup else f"not timed: {timing.error}"
        self.tell(Timed, f"{cid}: {said}", speedup=timing.speedup, candidate=cid, transform=transform)
        if not would_accept(timing, self.state.best_speedup):
            return
        note = self._why_not_reprofile(cid, measured)
        if note is not None:
            effect = catalog()[transform].effect_for(
                staged.step.finding.category if staged.step.finding else None
            )
            measured.metric = MetricCheck(effect.metric, effect.direction, note=note)
            self.clock.count("reprofiles-skipped")
            return
        measured.metric = self._check_metric(staged, measured)

    def _why_not_reprofile(self, cid: str, measured: Measured) -> str | None:
        """Why a winner is not re-profiled (None: it is): nothing would read its profile. The accept rule
        does not (the targeted metric only says how a win was won); the next plan does, unless a faster
        candidate of the batch replaces it or no iteration is left."""
        replaced_by = self._superseded.pop(cid, None)
        if replaced_by is not None:
            return f"not re-profiled: {replaced_by} of the same batch is faster and replaces it"
        if measured.reprofiled is not None or not self.baseline.can_profile:
            return None  # profiled already (a Triton script's timing), or the note says why not
        if self.step >= self.settings.iterations and not (
            self.settings.profile_best or self.plans_past_budget
        ):
            return "not re-profiled: the last iteration's winner, no later plan reads its profile (--profile-best re-profiles it)"
        return None

    def _check_metric(self, staged: _Staged, measured: Measured) -> MetricCheck:
        """The targeted metric of the candidate against the profile it was proposed from."""
        step = staged.step
        category = step.finding.category if step.finding else None
        entry = catalog()[staged.fields["transform"]]
        if not self.baseline.can_profile:
            effect = entry.effect_for(category)
            return MetricCheck(effect.metric, effect.direction, note=self.baseline.profile_note)
        if measured.reprofiled is None:
            clock = time.monotonic()
            self.clock.count("reprofiles")
            with self.clock.stage("profile"):
                measured.reprofiled = self._reprofile(staged, category, entry)
            staged.stages["profile"] = round(time.monotonic() - clock, 3)
        rp = measured.reprofiled
        metric = check_metric(entry, self.state.before, rp.kernel, unavailable=rp.note, category=category)
        self.tell(
            Profiled,
            f"{staged.cid}: {metric.metric} {_num(metric.before)} -> {_num(metric.after)}",
            metric=metric.metric,
            before=metric.before,
            after=metric.after,
            candidate=staged.cid,
            transform=staged.fields["transform"],
        )
        return metric

    def _reprofile(self, staged: _Staged, category: str | None, entry: Any) -> reprofile.Reprofile:
        """One ncu re-profile of the candidate's changed kernel (the tiers the check and the plan need)."""
        s = self.settings
        return reprofile.reprofile(
            self.wl,
            staged.source_path,
            staged.spec,
            workdir=staged.folder / "profile",
            target_kernel=self.baseline.kernel_name,
            arch=s.arch,
            timeout_s=s.profile_timeout_s,
            tiers=tiers_for_candidate(self.state.before, entry.effect_for(category).metric),
            candidate=True,
        )

    def time_candidate(
        self, cid: str, source: Path, spec: Path | None, folder: Path
    ) -> tuple[measure.Timing, reprofile.Reprofile | None]:
        """The candidate against the baseline: CUDA events, or ncu kernel durations for a Triton script."""
        wl, s = self.wl, self.settings
        if wl.timed_by == "ncu":
            return self._time_script(source, folder)
        self.tell(Info, f"{cid}: timing against the baseline ({s.runs} interleaved rounds) …", candidate=cid)
        timing = measure.bench_timing(
            wl,
            source,
            spec,
            runs=s.runs,
            warmup=s.warmup,
            timeout_s=s.timeout_s,
            compile_timeout_s=s.compile_timeout_s,
        )
        if timing.bench is not None:
            measure.write_json(folder / "bench.json", timing.bench)
        return self._relative_to_start(timing), None

    def _relative_to_start(self, timing: measure.Timing) -> measure.Timing:
        """KernelBench with a starting ``ModelNew``: timed against ``Model``, judged against the start."""
        start = self.baseline.start_speedup
        return measure.relative_to_start(timing, start, self.baseline.time_s) if start else timing

    def _time_script(self, source: Path, folder: Path) -> tuple[measure.Timing, reprofile.Reprofile | None]:
        """A Triton script is timed by ncu kernel durations against the baseline's repeated runs."""
        if not self.baseline.can_profile or not self.baseline.script_durations:
            why = self.baseline.profile_note or "no baseline durations"
            return measure.Timing(error=f"a Triton script is timed through ncu kernel durations: {why}"), None
        rp = reprofile.reprofile(
            self.wl,
            source,
            None,
            workdir=folder / "profile",
            target_kernel=self.baseline.kernel_name,
            arch=self.settings.arch,
            timeout_s=self.settings.profile_timeout_s,
            candidate=True,
        )
        duration = rp.kernel.metrics.duration_s if rp.kernel else None
        if duration is None:
            return measure.Timing(error=rp.note or "ncu measured no duration", timer="ncu"), rp
        timing = measure.profile_timing(self.baseline.script_durations, duration)
        if rp.kernel is not None:
            timing.pct_of_roofline, timing.pct_of_dram_peak = profile_pcts(rp.kernel)
        return timing, rp

    # ------------------------------------------------------------------ decide

    def decide(self, fields: dict[str, Any], folder: Path, measured: Measured) -> CandidateOutcome:
        """Apply the accept rule to what was measured; keep the outcome and update the state."""
        st, timing, metric, reprofiled = self.state, measured.timing, measured.metric, measured.reprofiled
        after = reprofiled.kernel if reprofiled else None
        self._save_profile(folder, measured)
        decision = decide(
            build=measured.build,
            verification=measured.verification,
            timing=timing if self.gpu else None,
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
        if not self.gpu:
            return "no GPU: candidates are not re-profiled"
        if not self.baseline.can_profile:
            return self.baseline.profile_note or "ncu cannot run here"
        if measured.verification.verdict != "pass":
            return "not re-profiled: the candidate did not pass verification"
        return "not re-profiled: only candidates faster beyond noise are (the targeted-metric check)"

    def finish(self, outcome: CandidateOutcome, folder: Path) -> CandidateOutcome:
        """Keep ``outcome``, write ``outcome.json`` and say the verdict."""
        self.state.outcomes.append(outcome)
        measure.write_json(folder / "outcome.json", outcome)
        if outcome.accepted:
            self.tell(
                Accepted,
                f"{outcome.id} accepted: {outcome.reason}",
                speedup=outcome.speedup,
                candidate=outcome.id,
                transform=outcome.transform,
            )
        else:
            self.tell(
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
        "timer",
        "pct_of_roofline",
        "pct_of_dram_peak",
        "pct_of_compute_peak",
    )
    return {name: getattr(timing, name) if timing else None for name in names}


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4g}"
