"""The loop: plan → propose → build → verify → time → re-profile → accept or reject, within a budget.

One *iteration* is one rewrite request (one plan step, one ``Rewriter.propose`` call) and the
evaluation of every candidate it returned (at most ``max_candidates``). Plan steps the rewriter
cannot apply to the current source are skipped without spending an iteration. Rejection reasons
(incorrect, not faster, implausible, ...) are fed back to every later request
(``RewriteRequest.failed_attempts``); the llm backend gets a second attempt at the same transform
with them before the loop moves on (recipes are deterministic: the same request would give the
same candidates). An accepted candidate becomes the source of later requests, and its profile the
diagnosis that re-plans them. LLM failures are recorded; two in a row stop the loop.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from knowledge.transforms import catalog, metric_value
from perfagent.classifier import classify
from perfagent.errors import LLMError
from perfagent.models import DeviceInfo, Finding, KernelDiagnosis, KernelProfile
from perfagent.optimize import first_kernel, measure, repair
from perfagent.optimize.events import (
    Accepted,
    Built,
    Info,
    LoopEvent,
    Planned,
    Profiled,
    ProgressCallback,
    Proposed,
    Rejected,
    Timed,
    Verified,
)
from perfagent.optimize.outcome import Decision, MetricCheck, beats_best, check_metric, decide
from perfagent.optimize.plan import PlannedTransform, make_plan
from perfagent.optimize.workload import OptimizeWorkload
from perfagent.records import CandidateOutcome, CheckRecord, PlanStep, VerificationSummary
from perfagent.rewrite.base import (
    Candidate,
    FailedAttempt,
    LaunchContext,
    Rewriter,
    RewriteRequest,
    launch_context,
)
from perfagent.verify.models import ENVIRONMENT_CHECK, VerificationResult

FEEDBACK_VERDICTS = frozenset(
    {"incorrect", "inconclusive", "build-failed", "not-faster", "metric-unmoved", "implausible", "error"}
)
"""Rejections worth telling the rewriter about (not 'not-timed': that is the machine, not the code;
'metric-unmoved' is no longer given, kept for older records)."""
MAX_FEEDBACK = 8
"""Most recent failed attempts carried into a request."""
LLM_ATTEMPTS_PER_TRANSFORM = 2
LLM_ERRORS_TO_STOP = 2
SNAPSHOT_METRICS = (
    "metrics.duration_s",
    "metrics.dram_throughput_pct",
    "metrics.sm_throughput_pct",
    "occupancy.achieved_pct",
)
"""Metrics kept with each candidate (besides the targeted one) for before/after views."""


@dataclass(frozen=True)
class LoopSettings:
    """Budgets and limits."""

    iterations: int = 3
    """Rewrite rounds."""
    max_candidates: int = 4
    """Candidates evaluated per round."""
    seeds: int = 5
    timeout_s: float = 60.0
    """Per call (verification and timing), s."""
    compile_timeout_s: float = 600.0
    runs: int = 50
    """Interleaved timing rounds per candidate (GPU)."""
    warmup: int = 10
    arch: str = "sm_90"
    profile_timeout_s: float = 600.0
    """Limit of one ncu run, s."""
    repairs: int = 1
    """Repair requests per candidate that fails to compile or verify (rewriters that can repair: llm)."""
    seed: int | None = None
    """First verification seed of every candidate (None: a fresh random one per verification). Set when
    an LLM conversation is recorded or replayed: failing checks (inputs, errors) go into repair prompts."""


@dataclass
class BaselineState:
    """What the loop knows about the original before it starts."""

    diagnosis: KernelDiagnosis | None
    """The targeted kernel's diagnosis (None: nothing profiled)."""
    measured: bool
    """The diagnosis comes from hardware counters."""
    can_profile: bool
    """ncu can re-profile candidates here (GPU and ncu usable)."""
    profile_note: str | None = None
    """Why candidates cannot be re-profiled, when they cannot."""
    time_s: float | None = None
    start_speedup: float | None = None
    """KernelBench: the starting ModelNew's speed-up over Model (candidates must beat it)."""
    script_durations: list[float] = field(default_factory=list)
    """Triton scripts: the baseline's kernel durations from separate ncu runs (the noise)."""
    kernel_name: str | None = None


@dataclass
class LoopResult:
    """What the loop produced."""

    candidates: list[CandidateOutcome]
    plan: list[PlanStep]
    best: str | None
    best_speedup: float | None
    iterations_used: int
    stopped: str
    llm_errors: list[str]


@dataclass(frozen=True)
class _Origin:
    """What a batch of candidates was proposed from: the best's macros, launch geometry and id."""

    defines: dict[str, int]
    launch: dict[str, Any]
    parent: str | None


@dataclass
class _State:
    source: str
    source_file: Path
    defines: dict[str, int]
    before: KernelProfile | None
    diagnosis: KernelDiagnosis | None
    launch: dict[str, Any] = field(default_factory=dict)
    """Launch geometry of the current best (overrides of the spec's grid / block / shared_mem)."""
    parent: str | None = None
    best_id: str | None = None
    best_speedup: float | None = None
    failed: list[FailedAttempt] = field(default_factory=list)
    seen: dict[str, str] = field(default_factory=dict)
    outcomes: list[CandidateOutcome] = field(default_factory=list)
    llm_errors: list[str] = field(default_factory=list)


class OptimizeLoop:
    """Runs the iterations for one workload; ``run()`` returns a ``LoopResult``."""

    def __init__(
        self,
        wl: OptimizeWorkload,
        rewriter: Rewriter,
        run_dir: Path,
        *,
        gpu: bool,
        baseline: BaselineState,
        settings: LoopSettings,
        hardware: DeviceInfo | None = None,
        transforms: list[str] | None = None,
        finding: str | None = None,
        progress: ProgressCallback | None = None,
        write_kernel: Literal["cuda", "triton"] | None = None,
    ) -> None:
        """``write_kernel``: a plain-PyTorch KernelBench problem; first ask for a ModelNew with kernels in this
        language (``perfagent.optimize.first_kernel``), then optimize it."""
        self.wl = wl
        self.write_kernel = write_kernel
        self.rewriter = rewriter
        self.run_dir = run_dir
        self.gpu = gpu
        self.baseline = baseline
        self.settings = settings
        self.hardware = hardware
        self.transforms = list(transforms or [])
        self.finding = finding
        self._progress = progress
        self.step = 0
        original = wl.file.read_text(encoding="utf-8")
        self.state = _State(
            source=original,
            source_file=wl.file,
            defines={},
            before=baseline.diagnosis.profile if baseline.diagnosis else None,
            diagnosis=baseline.diagnosis,
        )
        self.state.seen[_key(original, {})] = "the original"
        if baseline.start_speedup is not None:
            self.state.best_speedup = 1.0  # speed-ups are normalised to the starting ModelNew
        self.plan_log: list[PlannedTransform] = []
        self._spec_data: dict[str, Any] | None = None
        self.tried: set[int] = set()
        self.tried_notes: dict[int, list[str]] = {}
        """Plan-log index -> what each try of it produced ('c1 (accepted): rewrites lines 9-13')."""
        self.dropped: dict[int, str] = {}
        """Plan-log index -> why a runnable step left the queue untried (a re-plan dropped it)."""

    # ------------------------------------------------------------------ events

    def emit(self, event: LoopEvent) -> None:
        if self._progress is not None:
            self._progress(event)

    def _ev(self, cls: type[LoopEvent], message: str, **extra: object) -> None:
        self.emit(cls(message=message, step=self.step or None, total=self.settings.iterations, **extra))  # type: ignore[arg-type]

    # ------------------------------------------------------------------ requests and plans

    def display_path(self) -> str:
        try:
            return os.path.relpath(self.wl.file)
        except ValueError:
            return str(self.wl.file)

    def request_for(self, transform: str, finding: Finding | None) -> RewriteRequest:
        return RewriteRequest(
            source=self.state.source,
            path=self.display_path(),
            language=self.wl.language,
            transform=transform,
            finding=finding,
            hardware=self.hardware,
            kernel=self.wl.entry,
            failed_attempts=self.state.failed[-MAX_FEEDBACK:],
            history=repair.history(self.state.outcomes),
            hot_lines=list(self.state.before.source_lines) if self.state.before else [],
            launch=self.launch_context(),
            max_candidates=self.settings.max_candidates,
        )

    def launch_context(self) -> LaunchContext | None:
        """The oracle spec's launch geometry with the current best's overrides (cuda-kernel only)."""
        if self.wl.kind != "cuda-kernel" or self.wl.spec_path is None:
            return None
        if self._spec_data is None:
            self._spec_data = measure.oracle_spec_data(self.wl)
        data = {**self._spec_data, **self.state.launch}
        return launch_context(data)

    def make_plan(self, diagnosis: KernelDiagnosis | None, measured: bool) -> list[PlannedTransform]:
        from perfagent.rewrite import get_rewriter

        return make_plan(
            diagnosis,
            rewriter=self.rewriter,
            request_for=self.request_for,
            transforms=self.transforms,
            finding=self.finding,
            measured=measured,
            recipe_check=get_rewriter("recipes"),
        )

    def _log_plan(self, steps: list[PlannedTransform]) -> list[int]:
        """Add steps to the plan log (new transform ids only); their log indexes."""
        known = {s.transform.id: i for i, s in enumerate(self.plan_log)}
        idx = []
        for s in steps:
            if s.transform.id in known and self.plan_log[known[s.transform.id]].skipped is None:
                idx.append(known[s.transform.id])
                continue
            if s.transform.id in known:
                self.plan_log[known[s.transform.id]] = s
                idx.append(known[s.transform.id])
                continue
            self.plan_log.append(s)
            known[s.transform.id] = len(self.plan_log) - 1
            idx.append(len(self.plan_log) - 1)
        return idx

    # ------------------------------------------------------------------ the loop

    def run(self) -> LoopResult:
        st = self.state
        measured = self.baseline.measured
        if self.write_kernel is not None:
            failed = first_kernel.write(self, self.write_kernel)
            if failed is not None:
                return self._result(failed)
            measured = st.diagnosis is not None
        steps = self.make_plan(st.diagnosis, measured)
        queue = [i for i, s in zip(self._log_plan(steps), steps, strict=True) if s.skipped is None]
        order = [self.plan_log[i].transform.id for i in queue]
        skipped = [s for s in steps if s.skipped]
        self._ev(
            Planned,
            f"plan: {', '.join(order) or 'nothing to try'}"
            + (
                f" ({len(skipped)} skipped: {'; '.join(f'{s.transform.id}: {s.skipped}' for s in skipped[:3])})"
                if skipped
                else ""
            ),
            steps=order,
        )
        attempts: Counter[str] = Counter()
        llm_in_a_row = 0
        stopped = ""
        while True:
            if self.step >= self.settings.iterations:
                stopped = f"iteration budget spent ({self.settings.iterations})"
                break
            if not queue:
                stopped = (
                    "plan exhausted: no further transform this backend can apply"
                    if self.plan_log
                    else ("nothing to try: the diagnosis names no transform this backend can apply")
                )
                break
            index = queue.pop(0)
            step = self.plan_log[index]
            request = self.request_for(step.transform.id, step.finding)
            why = self.rewriter.applies(request)
            if why is not None:
                self.plan_log[index] = replace(step, skipped=f"{self.rewriter.name}: {why}")
                self._ev(Info, f"skip {step.transform.id}: {why}", transform=step.transform.id)
                continue
            self.step += 1
            self.tried.add(index)
            attempts[step.transform.id] += 1
            self._ev(
                Info,
                f"iteration {self.step}: {step.transform.id} ({self.rewriter.name})",
                transform=step.transform.id,
            )
            try:
                candidates = self.rewriter.propose(request)
            except LLMError as exc:
                message = str(exc)
                st.llm_errors.append(message)
                llm_in_a_row += 1
                self._ev(Info, f"LLM error: {message}", transform=step.transform.id)
                if llm_in_a_row >= LLM_ERRORS_TO_STOP:
                    stopped = f"the LLM failed {llm_in_a_row} times in a row: {message}"
                    break
                continue
            llm_in_a_row = 0
            # unseen proposals first: a recipe re-asked after an acceptance repeats what was measured
            candidates = sorted(candidates, key=lambda c: self._candidate_key(c) in st.seen)
            candidates = candidates[: self.settings.max_candidates]
            self._ev(
                Proposed,
                f"{len(candidates)} candidate(s) for {step.transform.id}",
                count=len(candidates),
                transform=step.transform.id,
            )
            accepted: CandidateOutcome | None = None
            feedback = False
            # every candidate of a batch runs with the macros, geometry and parent it was proposed from,
            # even when an earlier one of the batch was accepted meanwhile
            origin = _Origin(dict(st.defines), dict(st.launch), st.parent)
            outcomes = [
                o for cand in candidates for o in self._evaluate_and_repair(cand, step, origin, request)
            ]
            self._note_try(index, outcomes)
            for outcome in outcomes:
                if outcome.accepted:
                    accepted = outcome
                elif outcome.verdict in FEEDBACK_VERDICTS:
                    feedback = True
            if outcomes and all(o.verdict == "duplicate" for o in outcomes):
                self.step -= 1  # nothing new was measured: the iteration budget is for new candidates
                self._ev(
                    Info,
                    f"{step.transform.id}: only already-measured candidates; not counted as an iteration",
                )
            if accepted is not None:
                queue = self._replan(accepted, queue)
            elif (
                self.rewriter.name == "llm"
                and feedback
                and attempts[step.transform.id] < LLM_ATTEMPTS_PER_TRANSFORM
            ):
                queue.insert(0, index)
        return self._result(stopped)

    def _result(self, stopped: str) -> LoopResult:
        st = self.state
        return LoopResult(
            candidates=list(st.outcomes),
            plan=self._plan_record(stopped),
            best=st.best_id,
            best_speedup=self._best_speedup(),
            iterations_used=self.step,
            stopped=stopped,
            llm_errors=list(st.llm_errors),
        )

    def _note_try(self, index: int, outcomes: list[CandidateOutcome]) -> None:
        """Keep what a try of plan step ``index`` produced, for its ``PlanStep.reason``."""
        notes = self.tried_notes.setdefault(index, [])
        # one line per distinct result: three launch-geometry candidates read 'c2, c3, c4 (...)'
        groups: dict[str, list[str]] = {}
        for o in outcomes:
            groups.setdefault(f"({o.verdict}): {changed_lines(o.diff)}", []).append(o.id)
        notes.extend(f"{', '.join(ids)} {what}" for what, ids in groups.items())
        if not outcomes:
            notes.append(f"{self.rewriter.name} proposed no candidate")

    def _plan_record(self, stopped: str) -> list[PlanStep]:
        """The plan log as saved, each step with why it was tried or not."""
        return [
            s.record(
                tried=i in self.tried,
                tried_note="; ".join(self.tried_notes.get(i, [])),
                unreached=self.dropped.get(i, stopped),
            )
            for i, s in enumerate(self.plan_log)
        ]

    def _candidate_key(self, cand: Candidate) -> str:
        """The identity ``evaluate`` uses to spot a candidate measured before (source, macros, launch)."""
        st = self.state
        return _key(cand.source, *_merged(cand, _Origin(st.defines, st.launch, st.parent)))

    def _best_speedup(self) -> float | None:
        best = next((c for c in self.state.outcomes if c.id == self.state.best_id), None)
        return best.speedup if best else None

    def _replan(self, accepted: CandidateOutcome, queue: list[int]) -> list[int]:
        """After an acceptance: re-plan from the new best's profile when there is one."""
        diagnosis = self.state.diagnosis
        if diagnosis is None or not self.baseline.measured:
            return queue
        steps = self.make_plan(diagnosis, True)
        fresh = [i for i, s in zip(self._log_plan(steps), steps, strict=True) if s.skipped is None]
        # every planned transform gets one try before any is revisited (stable within each group)
        fresh.sort(key=lambda i: i in self.tried)
        for i in queue:
            if i not in fresh and i not in self.tried:
                self.dropped[i] = f"dropped when re-planned from {accepted.id}'s profile"
        self._ev(
            Planned,
            f"re-planned from {accepted.id}'s profile: {', '.join(self.plan_log[i].transform.id for i in fresh) or 'nothing'}",
            steps=[self.plan_log[i].transform.id for i in fresh],
        )
        return fresh

    # ------------------------------------------------------------------ one candidate

    def _evaluate_and_repair(
        self, cand: Candidate, step: PlannedTransform, origin: _Origin, request: RewriteRequest
    ) -> list[CandidateOutcome]:
        """``evaluate``, then up to ``settings.repairs`` repair requests while it fails to compile or verify."""
        out = [self.evaluate(cand, step, origin)]
        fix = getattr(self.rewriter, "repair", None)
        if fix is None:
            return out
        for round_ in range(1, self.settings.repairs + 1):
            last = out[-1]
            feedback = repair.feedback(last)
            why_not = repair.machine_failure(last, cand.source, gpu=self.gpu, kind=self.wl.kind)
            if feedback is None:
                break
            if why_not is not None:
                self._ev(Info, f"{last.id} is not sent back for a repair: {why_not}", candidate=last.id)
                break
            self._ev(
                Info,
                f"{last.id} {last.verdict}: asking for a repair ({round_} of {self.settings.repairs})",
                candidate=last.id,
                transform=cand.transform,
            )
            try:
                cand = fix(request, cand, feedback, round_=round_)
            except LLMError as exc:
                self.state.llm_errors.append(str(exc))
                self._ev(Info, f"LLM error during a repair: {exc}", transform=cand.transform)
                break
            out.append(self.evaluate(cand, step, origin, repairs=round_, repair_of=last.id))
        return out

    def evaluate(
        self,
        cand: Candidate,
        step: PlannedTransform,
        origin: _Origin | None = None,
        *,
        repairs: int = 0,
        repair_of: str | None = None,
    ) -> CandidateOutcome:
        st, wl, s = self.state, self.wl, self.settings
        origin = origin or _Origin(dict(st.defines), dict(st.launch), st.parent)
        n = len(st.outcomes) + 1
        cid = f"c{n}"
        folder = self.run_dir / "candidates" / f"{n:02d}_{cand.transform}"
        folder.mkdir(parents=True, exist_ok=True)
        defines, launch = _merged(cand, origin)
        source_path = folder / (measure.CANDIDATE_CU if wl.language == "cuda" else f"source{wl.suffix}")
        source_path.write_text(cand.source, encoding="utf-8")
        diff_path = folder / "diff.patch"
        diff_path.write_text(cand.diff, encoding="utf-8")
        measure.write_json(folder / "candidate.json", cand)
        entry = catalog()[cand.transform]
        base: dict[str, Any] = {
            "id": cid,
            "rewrite_id": cand.id,
            "backend": cand.backend,
            "transform": cand.transform,
            "recipe": cand.recipe,
            "description": cand.description,
            "parameters": dict(cand.parameters),
            "defines": defines,
            "launch": launch,
            "iteration": self.step,
            "parent": origin.parent,
            "repairs": repairs,
            "repair_of": repair_of,
            "file": str(wl.file),
            "source_path": str(source_path),
            "diff_path": str(diff_path),
            "diff": cand.diff,
            "tokens": cand.tokens.model_dump() if cand.tokens else None,
            "notes": list(cand.notes),
            "metric": entry.effect_for(step.finding.category if step.finding else None).metric,
            "metric_direction": entry.effect_for(step.finding.category if step.finding else None).direction,
        }
        key = _key(cand.source, defines, launch)
        if key in st.seen:
            reason = f"same source, macros and launch as {st.seen[key]}: not measured again"
            outcome = CandidateOutcome(
                **base,  # type: ignore[arg-type]
                verification=VerificationSummary(verdict="not-verified", reason="duplicate"),
                verdict="duplicate",
                accepted=False,
                reason=reason,
            )
            return self._finish(outcome, folder)
        st.seen[key] = cid
        spec = measure.candidate_spec(wl, folder, defines, launch) if wl.kind == "cuda-kernel" else None
        stages: dict[str, float] = base.setdefault("stage_s", {})
        clock = time.monotonic()

        build = measure.build_check(
            wl, source_path, spec, gpu=self.gpu, arch=s.arch, timeout_s=s.compile_timeout_s
        )
        stages["build"] = round(time.monotonic() - clock, 3)
        self._ev(
            Built,
            f"{cid}: {'builds' if build.ok else 'build failed' if build.ok is False else 'build not checked'} ({build.detail})",
            ok=build.ok,
            candidate=cid,
            transform=cand.transform,
        )
        if build.ok is False:
            verification = VerificationSummary(verdict="not-verified", reason="not run: the build failed")
            return self._decide(base, folder, build, verification, None, None)

        runs_here = self.gpu or wl.kind != "cuda-kernel"
        if runs_here:
            self._ev(
                Info, f"{cid}: verifying against the original …", candidate=cid, transform=cand.transform
            )
        clock = time.monotonic()
        result = measure.verify_candidate(
            wl,
            source_path,
            spec,
            gpu=self.gpu,
            seeds=s.seeds,
            seed=s.seed,
            timeout_s=s.timeout_s,
            compile_timeout_s=s.compile_timeout_s,
        )
        stages["verify"] = round(time.monotonic() - clock, 3)
        verification = _summary(result, build)
        measure.write_json(folder / "verification.json", result if result is not None else verification)
        if result is not None:
            self._ev(
                Verified,
                f"{cid}: {verification.verdict} — {verification.reason}",
                verdict=verification.verdict,
                candidate=cid,
                transform=cand.transform,
            )
        if verification.verdict != "pass" or not self.gpu:
            return self._decide(base, folder, build, verification, None, None)

        clock = time.monotonic()
        timing, reprofiled = self._time(cid, source_path, spec, folder)
        stages["time"] = round(time.monotonic() - clock, 3)
        self._ev(
            Timed,
            f"{cid}: "
            + (f"{timing.speedup:.3g}x vs the original" if timing.speedup else f"not timed: {timing.error}"),
            speedup=timing.speedup,
            candidate=cid,
            transform=cand.transform,
        )
        metric: MetricCheck | None = None
        if (
            timing.error is None
            and timing.significant
            and timing.verdict == "faster"
            and not timing.implausible
            and beats_best(timing, st.best_speedup)
        ):
            if not self.baseline.can_profile:
                effect = entry.effect_for(step.finding.category if step.finding else None)
                metric = MetricCheck(
                    effect.metric,
                    effect.direction,
                    note=self.baseline.profile_note,
                )
            else:
                if reprofiled is None:
                    clock = time.monotonic()
                    reprofiled = measure.reprofile(
                        wl,
                        source_path,
                        spec,
                        workdir=folder / "profile",
                        target_kernel=self.baseline.kernel_name,
                        arch=s.arch,
                        timeout_s=s.profile_timeout_s,
                    )
                    stages["profile"] = round(time.monotonic() - clock, 3)
                metric = check_metric(
                    entry,
                    st.before,
                    reprofiled.kernel,
                    unavailable=reprofiled.note,
                    category=step.finding.category if step.finding else None,
                )
                self._ev(
                    Profiled,
                    f"{cid}: {metric.metric} {_num(metric.before)} -> {_num(metric.after)}",
                    metric=metric.metric,
                    before=metric.before,
                    after=metric.after,
                    candidate=cid,
                    transform=cand.transform,
                )
        return self._decide(base, folder, build, verification, timing, metric, reprofiled)

    def _time(
        self, cid: str, source: Path, spec: Path | None, folder: Path
    ) -> tuple[measure.Timing, measure.Reprofile | None]:
        wl, s = self.wl, self.settings
        if wl.kind == "triton-script":
            if not self.baseline.can_profile or not self.baseline.script_durations:
                return measure.Timing(
                    error=f"a Triton script is timed through ncu kernel durations: {self.baseline.profile_note or 'no baseline durations'}"
                ), None
            rp = measure.reprofile(
                wl,
                source,
                None,
                workdir=folder / "profile",
                target_kernel=self.baseline.kernel_name,
                arch=s.arch,
                timeout_s=s.profile_timeout_s,
            )
            duration = rp.kernel.metrics.duration_s if rp.kernel else None
            if duration is None:
                return measure.Timing(error=rp.note or "ncu measured no duration", timer="ncu"), rp
            timing = measure.profile_timing(self.baseline.script_durations, duration)
            if rp.kernel is not None:
                timing.pct_of_roofline, timing.pct_of_dram_peak = profile_pcts(rp.kernel)
            return timing, rp
        self._ev(Info, f"{cid}: timing against the baseline ({s.runs} interleaved rounds) …", candidate=cid)
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
        start = self.baseline.start_speedup
        if (
            start and timing.speedup is not None
        ):  # KernelBench: against Model, normalised to the starting ModelNew
            timing.speedup /= start
            timing.time_s_before = self.baseline.time_s
        return timing, None

    def _decide(
        self,
        base: dict[str, Any],
        folder: Path,
        build: measure.BuildOutcome,
        verification: VerificationSummary,
        timing: measure.Timing | None,
        metric: MetricCheck | None,
        reprofiled: measure.Reprofile | None = None,
    ) -> CandidateOutcome:
        st = self.state
        after = reprofiled.kernel if reprofiled else None
        if reprofiled is not None and reprofiled.profile is not None:
            measure.write_json(folder / "profile.json", reprofiled.profile)
        else:
            why = (reprofiled.note if reprofiled else None) or _why_not_profiled(
                self.gpu, self.baseline, verification, timing
            )
            measure.write_json(folder / "profile.json", {"profiled": False, "reason": why})
        decision: Decision = decide(
            build=build,
            verification=verification,
            timing=timing if self.gpu else None,
            metric=metric,
            best_speedup=st.best_speedup,
            best_id=st.best_id,
        )
        metric_name = str(base["metric"])
        names = (metric_name, *SNAPSHOT_METRICS)
        outcome = CandidateOutcome(
            **base,  # type: ignore[arg-type]
            verification=verification,
            verdict=decision.verdict,
            accepted=decision.accepted,
            reason=decision.reason,
            checks=decision.checks,
            route=decision.route,
            improved=decision.improved,
            time_s=timing.time_s if timing else None,
            time_s_before=timing.time_s_before if timing else None,
            speedup=timing.speedup if timing else None,
            noise_threshold=timing.noise_threshold if timing else None,
            timer=timing.timer if timing else None,
            pct_of_roofline=timing.pct_of_roofline if timing else None,
            pct_of_dram_peak=timing.pct_of_dram_peak if timing else None,
            pct_of_compute_peak=timing.pct_of_compute_peak if timing else None,
            metric_before=metric.before if metric else None,
            metric_after=metric.after if metric else None,
            metric_moved=metric.moved if metric else None,
            metrics_before=_snapshot(st.before, names),
            metrics_after=_snapshot(after, names),
        )
        if outcome.accepted:
            st.source_file = Path(str(base["source_path"]))
            st.source = st.source_file.read_text(encoding="utf-8")
            st.defines = dict(outcome.defines)
            st.launch = dict(outcome.launch)
            st.parent = outcome.id
            st.best_id = outcome.id
            st.best_speedup = outcome.speedup
            if after is not None:
                st.before = after
                st.diagnosis = _diagnose_one(after)
        elif outcome.verdict in FEEDBACK_VERDICTS:
            st.failed.append(FailedAttempt(candidate_id=outcome.id, reason=outcome.reason))
        return self._finish(outcome, folder)

    def _finish(self, outcome: CandidateOutcome, folder: Path) -> CandidateOutcome:
        self.state.outcomes.append(outcome)
        measure.write_json(folder / "outcome.json", outcome)
        if outcome.accepted:
            self._ev(
                Accepted,
                f"{outcome.id} accepted: {outcome.reason}",
                speedup=outcome.speedup,
                candidate=outcome.id,
                transform=outcome.transform,
            )
        else:
            self._ev(
                Rejected,
                f"{outcome.id} {outcome.verdict}: {outcome.reason}",
                reason=outcome.reason,
                candidate=outcome.id,
                transform=outcome.transform,
            )
        return outcome


def profile_pcts(kernel: KernelProfile) -> tuple[float | None, float | None]:
    """(% of the profile's speed of light, DRAM throughput as % of peak) of a profiled kernel."""
    from perfagent.roofline import roofline

    roof = roofline(kernel)
    sol = roof.fraction_of_sol * 100.0 if roof is not None and roof.fraction_of_sol is not None else None
    return sol, kernel.metrics.dram_throughput_pct


def _why_not_profiled(
    gpu: bool, baseline: BaselineState, verification: VerificationSummary, timing: measure.Timing | None
) -> str:
    if not gpu:
        return "no GPU: candidates are not re-profiled"
    if not baseline.can_profile:
        return baseline.profile_note or "ncu cannot run here"
    if verification.verdict != "pass":
        return "not re-profiled: the candidate did not pass verification"
    return "not re-profiled: only candidates faster beyond noise are (the targeted-metric check)"


def changed_lines(diff: str) -> str:
    """The lines a unified diff rewrites in the source it was taken against ('rewrites lines 9-13, 20').

    A removed or replaced line counts as itself; an inserted one as the line it follows.
    """
    changed: set[int] = set()
    line_no = 0
    for line in diff.splitlines():
        if line.startswith("@@ -"):
            line_no = int(line[4:].split(" ", 1)[0].partition(",")[0])
        elif line.startswith(("---", "+++")) or line_no == 0:
            continue
        elif line.startswith("-"):
            changed.add(line_no)
            line_no += 1
        elif line.startswith("+"):
            changed.add(max(line_no - 1, 1))
        elif line.startswith(" "):
            line_no += 1
    if not changed:
        return "no source line changed (launch geometry or macros only)"
    return f"rewrites line{'s' if len(changed) > 1 else ''} {_spans(sorted(changed))}"


def _spans(numbers: list[int]) -> str:
    """[9, 10, 11, 20] -> '9-11, 20'."""
    out: list[str] = []
    start = prev = numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ", ".join(out)


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4g}"


def _merged(cand: Candidate, origin: _Origin) -> tuple[dict[str, int], dict[str, Any]]:
    """The macros and launch geometry a candidate runs with: its own over those it was proposed from."""
    own_launch = (
        cand.launch.model_dump(include=set(measure.LAUNCH_KEYS), exclude_none=True) if cand.launch else {}
    )
    return {**origin.defines, **cand.defines}, {**origin.launch, **own_launch}


def _key(source: str, defines: dict[str, int], launch: Mapping[str, Any] | None = None) -> str:
    text = source + "\0" + ",".join(f"{k}={v}" for k, v in sorted(defines.items()))
    if launch:
        text += "\0" + json.dumps(dict(launch), sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _summary(result: VerificationResult | None, build: measure.BuildOutcome) -> VerificationSummary:
    if result is None:
        built = "compiles" if build.ok else "not compiled here" if build.ok is None else "does not compile"
        return VerificationSummary(
            verdict="not-verified",
            reason=f"{built}, but not verified (no GPU): launch-spec kernels run only on a CUDA GPU",
            checks=[
                CheckRecord(
                    name="build",
                    passed=bool(build.ok),
                    detail=build.detail,
                    severity="error" if build.ok is not None else "skipped",
                )
            ],
        )
    missing = next((c for c in result.checks if c.name == ENVIRONMENT_CHECK and not c.passed), None)
    return VerificationSummary(
        verdict="not-verified" if missing else result.verdict,
        reason=f"not verified here: {missing.detail}" if missing else result.reason,
        checks=[
            CheckRecord(name=c.name, passed=c.passed, detail=c.detail, severity=c.severity)
            for c in result.checks
        ],
        device=result.device,
        elapsed_s=result.elapsed_s,
    )


def _snapshot(kernel: KernelProfile | None, names: tuple[str, ...]) -> dict[str, float]:
    if kernel is None:
        return {}
    out: dict[str, float] = {}
    for name in names:
        value = metric_value(kernel, name)
        if value is not None:
            out[name] = value
    return out


def _diagnose_one(kernel: KernelProfile) -> KernelDiagnosis | None:
    from perfagent.models import Profile

    diagnoses = classify(Profile(tool="ncu", source=kernel.name, kernels=[kernel]))
    return diagnoses[0] if diagnoses else None
