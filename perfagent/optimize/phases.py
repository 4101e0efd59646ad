"""Two machines: proposals where the model is, measurements where the GPU is.

``propose`` (``perfagent optimize TARGET --propose-only``) runs on the machine that reaches the LLM
endpoint (or anywhere, with the recipes): it diagnoses from a report recorded on the GPU machine
(``--report``), static analysis (a ``.cu`` with nvcc here), or an earlier run (``--from RUN``), plans, and
asks the rewriter for candidates exactly as the one-machine loop does, but writes each one into
``RUN/proposals/<n>_<transform>/`` (source, diff, ``proposal.json`` with the transform, finding, ``-D``
macros, launch geometry and parent, ``request.json`` with the request that produced it, and the prompt
for the llm backend) instead of building it. Nothing is built, run, timed or profiled. ``record.json``
holds the proposals as candidates in the state ``proposed``.

``evaluate`` (``perfagent optimize --evaluate RUN``) runs on the GPU machine: it loads RUN, finds and
checks the target (its hash must match), profiles and times the original, and runs the ordinary loop
(``OptimizeLoop``) with a ``ProposalsRewriter`` that hands back the stored proposals transform by
transform: build, verify, time, re-profile and decide are the one-machine code. Each proposal runs with
the macros, launch geometry and parent it was proposed from. The record becomes the one a one-machine
run writes (candidates with verdicts, best, speed-ups), the proposals kept.

Rounds alternate: ``propose(from_run=RUN)`` starts from RUN's best accepted candidate (its source,
macros, launch geometry and profile) and gives the rewriter every earlier rejection with its reason
(the loop's own feedback); the next ``evaluate`` continues the candidate numbering and must beat the
best so far.
"""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from knowledge.transforms import catalog
from perfagent._version import __version__
from perfagent.errors import BadInput
from perfagent.llm_client import LLMConfig
from perfagent.models import KernelDiagnosis, KernelProfile, Profile
from perfagent.optimize import measure
from perfagent.optimize.api import (
    BACKENDS,
    Progress,
    _Baseline,
    _baseline,
    _choose_backend,
    _nothing_to_try,
    _run_dir,
    _target_kernel,
    _transform_list,
    before_after,
)
from perfagent.optimize.apply import apply_candidate
from perfagent.optimize.events import Info
from perfagent.optimize.loop import (
    FEEDBACK_VERDICTS,
    BaselineState,
    LoopResult,
    LoopSettings,
    OptimizeLoop,
    _diagnose_one,
    _key,
    _merged,
    _Origin,
)
from perfagent.optimize.plan import PlannedTransform
from perfagent.optimize.run_writer import RunWriter, run_llm_usage, shown_path
from perfagent.optimize.workload import OptimizeWorkload, resolve
from perfagent.records import (
    CandidateOutcome,
    OptimizeResult,
    PhasesInfo,
    ProposalRound,
    RunRecord,
    TableRow,
    VerificationSummary,
)
from perfagent.rewrite import get_rewriter
from perfagent.rewrite.base import Candidate, FailedAttempt, Rewriter, RewriteRequest, unified_diff
from perfagent.rewrite.llm import LLMRewriter
from perfagent.rewrite.prompt import user_message
from perfagent.rewrite.proposals import PROPOSAL_FILE, REQUEST_FILE, ProposalsRewriter, StoredProposal
from perfagent.session import RECORD_FILE, load_record

PROPOSALS = "proposals"
"""The run folder's sub-folder holding the proposals."""
PROPOSE_DEVICE = "none (--propose-only: nothing is built, run or timed here)"
NOT_RUN = "proposed only: not built, verified or timed yet"
SETTING_KEYS = ("seeds", "timeout_s", "compile_timeout_s", "runs", "warmup", "arch", "profile_timeout_s")
"""The loop settings a proposals run hands to ``--evaluate`` (the budget comes from the proposals)."""


def evaluate_command(run_dir: Path) -> str:
    return f"perfagent optimize --evaluate {shown_path(run_dir)}"


def proposed_reason(run_dir: Path) -> str:
    return f"{NOT_RUN} (--evaluate {shown_path(run_dir)} on the GPU machine)"


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def record_command(wl: OptimizeWorkload) -> str:
    """How to record a report of ``wl`` on the GPU machine, for ``--report``."""
    start = "perfagent profile --save-report base.ncu-rep -- python3"
    if wl.kind == "cuda-kernel":
        return f"{start} -m {measure.HARNESS} {shown_path(wl.spec_path or wl.file)} --kernel-file {shown_path(wl.file)}"
    if wl.kind == "kernelbench":
        problem = shown_path(wl.problem or wl.file)
        extra = f" --candidate {shown_path(wl.file)}" if wl.problem != wl.file or wl.has_model_new else ""
        return f"{start} -m {measure.HARNESS} {problem}{extra}"
    return f"{start} {shown_path(wl.file)}"


# --------------------------------------------------------------------------------------------- propose


def propose(
    target: str | Path | None = None,
    *,
    from_run: str | Path | None = None,
    backend: str = "auto",
    transform: str | Sequence[str] | None = None,
    transforms: Sequence[str] | None = None,
    finding: str | None = None,
    kernel: str | None = None,
    problem: str | Path | None = None,
    spec: str | Path | None = None,
    report: str | Path | None = None,
    iterations: int = 3,
    max_candidates: int = 4,
    seeds: int = 5,
    timeout_s: float = 60.0,
    compile_timeout_s: float = 600.0,
    runs: int = 50,
    warmup: int = 10,
    arch: str = "sm_90",
    profile_timeout_s: float = 600.0,
    out: str | Path | None = None,
    force: bool = False,
    progress: Progress | None = None,
    llm_config: LLMConfig | None = None,
) -> RunRecord:
    """Propose candidates for ``target`` (or for RUN's best, ``from_run``) without building or running any.

    Args:
        target: as ``perfagent.optimize``; with ``from_run``, only to say where the target is now.
        from_run: an evaluated run (two-machine or not): the new round starts from its best accepted
            candidate, and its rejections are fed to the rewriter. Without ``out`` the round is added to
            that folder; with ``out`` the folder is copied there first.
        report: a report recorded on the GPU machine to diagnose from.
        iterations, max_candidates: transforms to ask for, candidates kept per transform.
        seeds, timeout_s, compile_timeout_s, runs, warmup, arch, profile_timeout_s: stored for
            ``evaluate`` (a ``from_run`` round keeps the run's own).
        The other arguments: as ``perfagent.optimize``.

    Returns:
        The run's record: earlier candidates (``from_run``) and the new proposals (verdict 'proposed').

    Raises:
        BadInput: unusable target or options, no way to diagnose (no report, no earlier run, no static
            analysis, no ``--transform``), ``from_run`` still holding unevaluated proposals, or a target
            that changed since ``from_run``.
        LLMError: ``backend='llm'`` and no endpoint is configured.
    """
    emit = progress or (lambda _e: None)
    _check_options(iterations, max_candidates, backend)
    wanted = _transform_list(transform, transforms)
    prior: RunRecord | None = None
    prior_dir: Path | None = None
    if from_run is not None:
        prior_dir = Path(from_run).absolute()
        prior = _load_optimize_run(prior_dir, "--from")
        waiting = [c for c in prior.candidates if c.verdict == "proposed"]
        if waiting:
            raise BadInput(
                f"{shown_path(prior_dir)} still holds {len(waiting)} proposal(s) that were not evaluated",
                hint=f"evaluate them first on the GPU machine: {evaluate_command(prior_dir)}",
            )
    prior_info = prior.optimize.phases if prior is not None and prior.optimize is not None else None
    if prior is not None and prior_dir is not None:
        wl = _run_target(prior, prior_dir, target, problem, spec)
        typed = str(target) if target is not None else (prior_info.target if prior_info else prior.target)
    else:
        if target is None:
            raise BadInput(
                "no target given",
                hint="perfagent optimize TARGET --propose-only --report REPORT, or --propose-only --from RUN",
            )
        wl = resolve(target, problem=problem, spec=spec)
        typed = str(target)
    digest = sha256_file(wl.file)
    if prior_info is not None and prior_dir is not None:
        _check_unchanged(wl, prior_info, prior_dir)
    if prior is None and report is None and not wanted:
        _need_a_diagnosis(wl)

    config = llm_config if llm_config is not None else LLMConfig.from_env()
    name, backend_reason = _choose_backend(backend, config)
    inner = get_rewriter(name, config=config)
    if isinstance(inner, LLMRewriter):
        inner.progress = lambda message: emit(Info(message=message))
    rewriter = _Recording(inner)

    if prior is not None and prior_dir is not None:
        run_dir = _continue_into(prior_dir, out, force)
    else:
        run_dir = _run_dir(out, force)
    settings = LoopSettings(
        iterations=iterations,
        max_candidates=max_candidates,
        seeds=seeds,
        timeout_s=timeout_s,
        compile_timeout_s=compile_timeout_s,
        runs=runs,
        warmup=warmup,
        arch=arch,
        profile_timeout_s=profile_timeout_s,
    )
    if prior_info is not None:  # a later round keeps the run's verification and timing settings
        settings = _settings(
            prior_info.settings, settings, iterations=iterations, max_candidates=max_candidates
        )
    emit(
        Info(
            message=f"{wl.describe()}: proposals only (backend {name}; nothing is built or run here), run folder {shown_path(run_dir)}"
        )
    )
    plain_pytorch = [] if wanted else _nothing_to_try(wl, name)
    for line in plain_pytorch:
        emit(Info(message=line))
    snapshot = run_dir / "original"
    snapshot.mkdir(parents=True, exist_ok=True)
    if not (snapshot / wl.file.name).exists():
        shutil.copy2(wl.file, snapshot / wl.file.name)

    # the diagnosis: a report, RUN's best (or its baseline), static analysis
    notes = ["proposals only: nothing was built, verified, timed or profiled here"]
    earlier_rounds = list(prior_info.rounds) if prior_info is not None else []
    round_no = len(earlier_rounds) + 1
    where = "none"
    if prior is None or prior.optimize is None:
        base = _baseline(
            wl, gpu=False, report=report, kernel=kernel, run_dir=run_dir, settings=settings, emit=emit
        )
        summary, profile, kernels = base.summary, base.profile, base.kernels
        diagnosis, measured = base.diagnosis, base.state.measured
        if report is not None:
            where = f"the recorded report {report}"
        elif diagnosis is not None:
            where = "static analysis (nvcc/ptxas, no counters)"
        why = "; ".join(base.summary.notes) or "nothing could be analysed here"
    else:
        summary = prior.optimize.baseline
        profile = prior.profile() if prior.kernels else None
        kernels = list(prior.kernels)
        diagnosis = _target_kernel(kernels, wl, kernel) if kernels else None
        measured = profile is not None and profile.mode == "counters"
        if diagnosis is not None:
            where = f"the baseline profile of {shown_path(prior_dir or run_dir)}"
        best_kernel = _best_kernel(prior, run_dir, wl, diagnosis.profile.base_name if diagnosis else None)
        if best_kernel is not None:
            diagnosis, measured = _diagnose_one(best_kernel), True
            where = f"the profile of {prior.best}, the best so far"
        if report is not None:
            rep = _baseline(
                wl, gpu=False, report=report, kernel=kernel, run_dir=run_dir, settings=settings, emit=emit
            )
            diagnosis, measured, where = rep.diagnosis, rep.state.measured, f"the recorded report {report}"
            notes.append(f"diagnosis from the recorded report {report}")
        why = f"{shown_path(prior_dir or run_dir)} holds no profile of the original or of its best"
    if diagnosis is None and not wanted:
        raise BadInput(
            f"--propose-only has no diagnosis to plan from ({why})",
            hint=f"record a report on the GPU machine ({record_command(wl)}) and pass --report base.ncu-rep, "
            "or name the transforms with --transform ID",
        )
    state = BaselineState(
        diagnosis=diagnosis,
        measured=measured,
        can_profile=False,
        profile_note="proposals only: nothing is profiled here",
        kernel_name=diagnosis.profile.base_name if diagnosis else None,
    )
    info = PhasesInfo(
        state="proposed",
        target=typed,
        file=str(wl.file),
        file_sha256=digest,
        problem=str(problem) if problem is not None else (prior_info.problem if prior_info else None),
        problem_file=str(wl.problem) if wl.problem is not None and wl.problem != wl.file else None,
        problem_sha256=sha256_file(wl.problem) if wl.problem is not None and wl.problem != wl.file else None,
        spec=str(spec) if spec is not None else (prior_info.spec if prior_info else None),
        spec_file=str(wl.spec_path) if wl.spec_path is not None else None,
        spec_sha256=sha256_file(wl.spec_path) if wl.spec_path is not None else None,
        kernel=kernel if kernel is not None else (prior_info.kernel if prior_info else None),
        settings={k: getattr(settings, k) for k in SETTING_KEYS},
        rounds=[*earlier_rounds, ProposalRound(round=round_no, backend=name, diagnosis=where)],
    )
    writer = PhasedWriter(
        run_dir,
        wl,
        info=info,
        earlier=_relocated_candidates(prior, run_dir, wl) if prior is not None else [],
        prior_best=prior.best if prior is not None else None,
        proposing=True,
        target=typed,
        backend=name,
        backend_reason=backend_reason,
        device=PROPOSE_DEVICE,
        gpu=False,
        iterations=iterations,
        notes=notes,
        version=__version__,
    )
    try:
        writer.baseline(summary, profile, kernels)
        loop = ProposeLoop(
            wl,
            rewriter,
            run_dir,
            baseline=state,
            settings=settings,
            hardware=diagnosis.profile.device if diagnosis else None,
            transforms=wanted,
            finding=finding,
            progress=writer.watch(progress),
            round_no=round_no,
            first_number=1 + sum(len(r.proposals) for r in earlier_rounds),
            target_sha256=digest,
        )
        loop.on_proposal = writer.save_now
        if prior is not None:
            _restore(loop, prior, run_dir, wl)
            loop.state.diagnosis = diagnosis
        writer.round_update(parent=loop.state.parent)
        writer.loop = loop
        outcome = loop.run()
    except BaseException as exc:
        writer.save_partial(exc)
        raise
    best = next((c for c in outcome.candidates if c.id == outcome.best), None)
    result = writer.result(outcome, before_after(summary, best, diagnosis))
    proposed = [c for c in result.candidates if c.verdict == "proposed"]
    line = (
        f"{len(proposed)} proposal(s) written; run `{evaluate_command(run_dir)}` on the GPU machine"
        if proposed
        else f"no proposal was written ({outcome.stopped})"
    )
    extra = [line, *plain_pytorch] if plain_pytorch and not proposed else [line]
    result = result.model_copy(update={"notes": [*result.notes, *extra]})
    record = writer.save(result)
    emit(Info(message=f"run saved to {shown_path(run_dir)}"))
    return record


class _Recording:
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


class ProposeLoop(OptimizeLoop):
    """The optimize loop with ``evaluate`` replaced by writing the proposal: nothing is built or run."""

    def __init__(
        self,
        wl: OptimizeWorkload,
        rewriter: _Recording,
        run_dir: Path,
        *,
        baseline: BaselineState,
        settings: LoopSettings,
        round_no: int,
        first_number: int,
        target_sha256: str,
        **kw: Any,
    ) -> None:
        super().__init__(wl, rewriter, run_dir, gpu=False, baseline=baseline, settings=settings, **kw)
        self.recorder = rewriter
        self.round_no = round_no
        self.number = first_number
        self.target_sha256 = target_sha256
        self.on_proposal: Any = None

    def evaluate(
        self,
        cand: Candidate,
        step: PlannedTransform,
        origin: _Origin | None = None,
        *,
        repairs: int = 0,
        repair_of: str | None = None,
    ) -> CandidateOutcome:
        # a proposal is only written here: nothing is judged, so there is nothing to repair
        st, wl = self.state, self.wl
        origin = origin or _Origin(dict(st.defines), dict(st.launch), st.parent)
        defines, launch = _merged(cand, origin)
        entry = catalog()[cand.transform]
        effect = entry.effect_for(step.finding.category if step.finding else None)
        fields: dict[str, Any] = {
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
            "file": str(wl.file),
            "diff": cand.diff,
            "tokens": cand.tokens.model_dump() if cand.tokens else None,
            "notes": list(cand.notes),
            "metric": effect.metric,
            "metric_direction": effect.direction,
            "verification": VerificationSummary(verdict="not-verified", reason=NOT_RUN),
            "accepted": False,
        }
        key = _key(cand.source, defines, launch)
        if key in st.seen:  # told, not recorded: the loop counts an all-duplicate batch as no iteration
            reason = f"same source, macros and launch as {st.seen[key]}: not proposed again"
            self._ev(Info, f"{cand.transform}: {reason}", transform=cand.transform)
            return CandidateOutcome(id="-", verdict="duplicate", reason=reason, **fields)
        n = self.number
        self.number += 1
        pid = f"p{n}"
        rel = f"{PROPOSALS}/{n:02d}_{cand.transform}"
        folder = self.run_dir / rel
        folder.mkdir(parents=True, exist_ok=True)
        source_name = measure.CANDIDATE_CU if wl.language == "cuda" else f"source{wl.suffix}"
        (folder / source_name).write_text(cand.source, encoding="utf-8")
        (folder / "diff.patch").write_text(cand.diff, encoding="utf-8")
        request = self.recorder.last
        if request is not None:
            (folder / REQUEST_FILE).write_text(request.model_dump_json(indent=2), encoding="utf-8")
            if cand.backend == "llm":
                (folder / "prompt.md").write_text(user_message(request, entry), encoding="utf-8")
        stored = StoredProposal(
            id=pid,
            round=self.round_no,
            candidate=cand,
            finding=step.finding,
            plan_origin=step.origin,
            iteration=self.step,
            parent=origin.parent,
            origin_defines=dict(origin.defines),
            origin_launch=dict(origin.launch),
            defines=defines,
            launch=launch,
            source_file=source_name,
            folder=rel,
            target_sha256=self.target_sha256,
        )
        (folder / PROPOSAL_FILE).write_text(stored.model_dump_json(indent=2), encoding="utf-8")
        st.seen[key] = pid
        outcome = CandidateOutcome(
            id=pid,
            verdict="proposed",
            reason=proposed_reason(self.run_dir),
            source_path=str(folder / source_name),
            diff_path=str(folder / "diff.patch"),
            proposal=pid,
            proposal_dir=rel,
            **fields,
        )
        st.outcomes.append(outcome)
        self._ev(
            Info,
            f"{pid}: {cand.transform} proposal written ({rel})",
            candidate=pid,
            transform=cand.transform,
        )
        if self.on_proposal is not None:
            self.on_proposal()
        return outcome


# --------------------------------------------------------------------------------------------- evaluate


def evaluate(
    run: str | Path,
    *,
    target: str | Path | None = None,
    problem: str | Path | None = None,
    spec: str | Path | None = None,
    device: str = "auto",
    out: str | Path | None = None,
    force: bool = False,
    apply: bool = False,
    progress: Progress | None = None,
) -> RunRecord:
    """Build, verify, time, re-profile and decide every proposal waiting in ``run``.

    Args:
        run: the folder ``propose`` wrote (copied to this machine).
        target, problem, spec: where the target (and its problem / launch spec) are on this machine,
            when not where the proposals were made (default: the recorded paths, absolute then as given).
        device: 'auto', 'cpu' or 'cuda'.
        out: write the evaluated run here (``run`` is copied first) instead of into ``run``.
        force: reuse an ``out`` folder that already holds a run.
        apply: write the best candidate into the target (``perfagent.optimize.apply``).
        progress: receives every ``LoopEvent``.

    Returns:
        The run's record, as a one-machine run writes it (every proposal a candidate with its verdict).

    Raises:
        BadInput: ``run`` is not a proposals run, holds no proposal waiting, misses proposal files, or
            the target is missing or changed since the proposals were made (its hash).
    """
    emit = progress or (lambda _e: None)
    src = Path(run).absolute()
    record = _load_optimize_run(src, "--evaluate")
    assert record.optimize is not None
    info = record.optimize.phases
    if info is None:
        raise BadInput(
            f"{shown_path(src)} is not a proposals run: it was optimized in one go (no --propose-only)",
            hint="make proposals with: perfagent optimize TARGET --propose-only --report REPORT --out RUN",
        )
    waiting = [c for c in record.candidates if c.verdict == "proposed"]
    if not waiting:
        raise BadInput(
            f"{shown_path(src)} holds no proposal waiting to be evaluated (see: perfagent report {shown_path(src)})",
            hint=f"make the next round where the model is: perfagent optimize --propose-only --from {shown_path(src)}",
        )
    wl = _run_target(record, src, target, problem, spec)
    notes = _check_unchanged(wl, info, src)
    run_dir = _continue_into(src, out, force)
    stored = [_load_proposal(run_dir, c) for c in waiting]
    replay = ProposalsRewriter(stored)
    gpu, device_label = measure.probe_gpu(device)
    settings = _settings(
        info.settings, LoopSettings(), iterations=len(replay.transforms), max_candidates=replay.largest_batch
    )
    if not gpu:
        notes.append(
            "no GPU here: candidates were verified where the workload allows (CPU) and not timed; no speed-up is claimed"
        )
    emit(
        Info(
            message=f"{wl.describe()}: evaluating {len(stored)} proposal(s) of {shown_path(src)}, device {device_label}, run folder {shown_path(run_dir)}"
        )
    )
    writer = PhasedWriter(
        run_dir,
        wl,
        info=info,
        earlier=_relocated_candidates(record, run_dir, wl),
        prior_best=record.best,
        waiting=waiting,
        target=record.optimize.target,
        backend=record.optimize.backend,
        backend_reason=record.optimize.backend_reason,
        device=device_label,
        gpu=gpu,
        iterations=settings.iterations,
        notes=notes,
        version=__version__,
    )
    try:
        if gpu:
            base = _baseline(
                wl, gpu=True, report=None, kernel=info.kernel, run_dir=run_dir, settings=settings, emit=emit
            )
        else:
            base = _recorded_baseline(record, wl, info.kernel)
        writer.baseline(base.summary, base.profile, base.kernels)
        loop = ReplayLoop(
            wl,
            replay,
            run_dir,
            gpu=gpu,
            baseline=base.state,
            settings=settings,
            hardware=base.diagnosis.profile.device if base.diagnosis else None,
            transforms=replay.transforms,
            progress=writer.watch(progress),
        )
        _restore(loop, record, run_dir, wl)
        writer.loop = loop
        outcome = loop.run()
    except BaseException as exc:
        writer.save_partial(exc)
        raise
    best = next((c for c in outcome.candidates if c.id == outcome.best), None)
    result = writer.result(outcome, before_after(base.summary, best, base.diagnosis))
    if apply and best is not None:
        result = result.model_copy(update={"applied": apply_candidate(best)})
    elif apply:
        result = result.model_copy(
            update={"notes": [*result.notes, "--apply: nothing was accepted, so no file was written"]}
        )
    saved = writer.save(result)
    emit(Info(message=f"run saved to {shown_path(run_dir)}"))
    return saved


class ReplayLoop(OptimizeLoop):
    """The optimize loop over stored proposals: each runs with what it was proposed from.

    The proposal's parent, macros and launch geometry are its origin (not the best of this evaluation:
    its source was written against its parent), and its targeted metric is compared with the parent's
    profile; the accept rule (beat the original beyond noise, and the best so far) is the loop's own.
    """

    def __init__(self, wl: OptimizeWorkload, replay: ProposalsRewriter, run_dir: Path, **kw: Any) -> None:
        super().__init__(wl, replay, run_dir, **kw)
        self.replay = replay
        self.current: StoredProposal | None = None
        self._profiles: dict[str | None, KernelProfile | None] = {}

    def evaluate(
        self,
        cand: Candidate,
        step: PlannedTransform,
        origin: _Origin | None = None,
        *,
        repairs: int = 0,
        repair_of: str | None = None,
    ) -> CandidateOutcome:
        stored = self.replay.stored(cand)
        if stored is None:
            return super().evaluate(cand, step, origin, repairs=repairs, repair_of=repair_of)
        st = self.state
        before = st.before
        st.before = self._profile_of(stored.parent, before)
        self.current = stored
        try:
            outcome = super().evaluate(
                cand,
                step,
                _Origin(dict(stored.origin_defines), dict(stored.origin_launch), stored.parent),
                repairs=repairs,
                repair_of=repair_of,
            )
        finally:
            self.current = None
        if not outcome.accepted:
            st.before = before
        return outcome

    def _finish(self, outcome: CandidateOutcome, folder: Path) -> CandidateOutcome:
        if self.current is not None:
            outcome = outcome.model_copy(
                update={"proposal": self.current.id, "proposal_dir": self.current.folder}
            )
        return super()._finish(outcome, folder)

    def _profile_of(self, parent: str | None, fallback: KernelProfile | None) -> KernelProfile | None:
        """The profile a proposal's targeted metric is compared with: its parent's."""
        if parent not in self._profiles:
            if parent is None:
                found = self.baseline.diagnosis.profile if self.baseline.diagnosis else None
            else:
                cand = next((c for c in self.state.outcomes if c.id == parent), None)
                found = _candidate_profile(cand, self.baseline.kernel_name) if cand else None
            self._profiles[parent] = found
        return self._profiles[parent] or fallback


def _recorded_baseline(record: RunRecord, wl: OptimizeWorkload, kernel: str | None) -> _Baseline:
    """No GPU here: the proposals run's own diagnosis (its report) stands for the original."""
    assert record.optimize is not None
    kernels = list(record.kernels)
    profile = record.profile() if kernels else None
    diagnosis = _target_kernel(kernels, wl, kernel)
    state = BaselineState(
        diagnosis=diagnosis,
        measured=profile is not None and profile.mode == "counters",
        can_profile=False,
        profile_note="no GPU: candidates are not re-profiled",
        kernel_name=diagnosis.profile.base_name if diagnosis else None,
    )
    return _Baseline(
        state=state, summary=record.optimize.baseline, profile=profile, kernels=kernels, diagnosis=diagnosis
    )


# --------------------------------------------------------------------------------------------- the record


class PhasedWriter(RunWriter):
    """``RunWriter`` for two-machine runs: keeps earlier rounds' candidates and the proposals still
    waiting in every record it writes, and the ``phases`` block current."""

    def __init__(
        self,
        run_dir: Path,
        wl: OptimizeWorkload,
        *,
        info: PhasesInfo,
        earlier: list[CandidateOutcome],
        prior_best: str | None = None,
        waiting: list[CandidateOutcome] | None = None,
        proposing: bool = False,
        **kw: Any,
    ) -> None:
        super().__init__(run_dir, wl, **kw)
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
        loop = self.loop
        done = sum(1 for c in loop.state.outcomes if c.verdict == "proposed") if loop is not None else 0
        self.save(self.result(self._so_far(f"running: {done} proposal(s) written"), []))

    def result(self, outcome: LoopResult, table: list[TableRow]) -> OptimizeResult:
        base = super().result(outcome, table)
        if self.loop is None:  # before the loop: what the run held
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


# --------------------------------------------------------------------------------------------- helpers


def _check_options(iterations: int, max_candidates: int, backend: str) -> None:
    if iterations < 1:
        raise BadInput(f"iterations must be at least 1 (got {iterations})", hint="e.g. --iterations 3")
    if max_candidates < 1:
        raise BadInput(
            f"candidates per iteration must be at least 1 (got {max_candidates})", hint="e.g. --candidates 2"
        )
    if backend not in BACKENDS:
        raise BadInput(f"unknown backend '{backend}'", hint=f"use one of: {', '.join(BACKENDS)}")


def _need_a_diagnosis(wl: OptimizeWorkload) -> None:
    """Raise unless this machine can diagnose ``wl`` without running it (static analysis of a .cu)."""
    if wl.kind == "cuda-kernel" and shutil.which("nvcc") is not None:
        return
    why = (
        "no --report, and static analysis of the .cu needs nvcc, which is not on PATH"
        if wl.kind == "cuda-kernel"
        else f"no --report, and a {wl.kind} target cannot be analysed without running it"
    )
    raise BadInput(
        f"--propose-only has no diagnosis to plan from: {why}",
        hint=f"record a report on the GPU machine ({record_command(wl)}) and pass --report base.ncu-rep, "
        "or name the transforms with --transform ID",
    )


def _settings(
    stored: dict[str, Any], default: LoopSettings, *, iterations: int, max_candidates: int
) -> LoopSettings:
    known = {f.name for f in dataclasses.fields(LoopSettings)}
    values = {k: v for k, v in stored.items() if k in known and k in SETTING_KEYS}
    return dataclasses.replace(default, **values, iterations=iterations, max_candidates=max_candidates)


def _load_optimize_run(path: Path, option: str) -> RunRecord:
    if not path.is_dir():
        raise BadInput(
            f"{option} {shown_path(path)}: not a run folder",
            hint="pass the folder --propose-only wrote (its --out), copied whole to this machine",
        )
    if not (path / RECORD_FILE).is_file():
        raise BadInput(
            f"{shown_path(path)} is not a run folder (no {RECORD_FILE})",
            hint="pass the folder --propose-only wrote (its --out), copied whole to this machine",
        )
    record = load_record(path)
    if record.kind != "optimize" or record.optimize is None:
        raise BadInput(
            f"{shown_path(path)} holds a {record.kind} run, not an optimize run",
            hint="make proposals with: perfagent optimize TARGET --propose-only --report REPORT --out RUN",
        )
    return record


def _find(*paths: str | Path | None) -> Path | None:
    for p in paths:
        if p and Path(p).is_file():
            return Path(p)
    return None


def _run_target(
    record: RunRecord,
    run_dir: Path,
    target: str | Path | None,
    problem: str | Path | None,
    spec: str | Path | None,
) -> OptimizeWorkload:
    """The run's target on this machine: as given, else where it was (absolute, then as typed)."""
    assert record.optimize is not None
    info = record.optimize.phases
    stored_file = info.file if info is not None else record.optimize.baseline.file
    stored_typed = info.target if info is not None else record.optimize.target
    name = Path(stored_file).name
    file = Path(target) if target is not None else _find(stored_file, stored_typed)
    if file is None:
        raise BadInput(
            f"the target of {shown_path(run_dir)} is not here: neither {stored_typed} nor {stored_file} exists",
            hint=f"pass its path: perfagent optimize PATH/{name} --evaluate {shown_path(run_dir)} "
            f"(the file as proposed from is {shown_path(run_dir / 'original' / name)})",
        )
    prob: Path | None = Path(problem) if problem is not None else None
    sp: Path | None = Path(spec) if spec is not None else None
    if info is not None and prob is None and info.problem_file:
        prob = _find(info.problem_file, info.problem, file.parent / Path(info.problem_file).name)
        if prob is None:
            raise BadInput(
                f"the KernelBench problem of {shown_path(run_dir)} is not here: {info.problem}",
                hint="pass it with --problem PATH",
            )
    if info is not None and sp is None and info.spec:
        sp = _find(info.spec_file, info.spec, file.parent / Path(info.spec).name)
        if sp is None:
            raise BadInput(
                f"the launch spec of {shown_path(run_dir)} is not here: {info.spec}",
                hint="pass it with --spec PATH",
            )
    return resolve(file, problem=prob, spec=sp)


def _check_unchanged(wl: OptimizeWorkload, info: PhasesInfo, run_dir: Path) -> list[str]:
    """Raise when the target changed since the proposals were made; notes for a changed problem or spec."""
    digest = sha256_file(wl.file)
    if digest != info.file_sha256:
        raise BadInput(
            f"{shown_path(wl.file)} changed since the proposals in {shown_path(run_dir)} were made "
            f"(sha256 {digest[:12]}, proposed from {info.file_sha256[:12]}): they rewrite the file as it was",
            hint=f"restore it (the file as proposed from is {shown_path(run_dir / 'original' / wl.file.name)}) "
            "or make new proposals from the current file with --propose-only",
        )
    notes = []
    if info.problem_sha256 and wl.problem is not None and sha256_file(wl.problem) != info.problem_sha256:
        notes.append(
            f"the problem {wl.problem.name} changed since the proposals were made: verified against the current one"
        )
    if info.spec_sha256 and wl.spec_path is not None and sha256_file(wl.spec_path) != info.spec_sha256:
        notes.append(
            f"the launch spec {wl.spec_path.name} changed since the proposals were made: launched with the current one"
        )
    return notes


def _continue_into(src: Path, out: str | Path | None, force: bool) -> Path:
    """Where a later phase writes: ``src`` itself, or a copy of it at ``out``."""
    if out is None:
        return src
    dest = Path(out).absolute()
    if dest == src:
        return src
    if dest.exists() and not dest.is_dir():
        raise BadInput(f"{dest} exists and is not a folder", hint="--out takes a folder for the run")
    if dest.exists() and any(dest.iterdir()) and not force:
        raise BadInput(
            f"{shown_path(dest)} is not empty"
            + (" (it holds a run)" if (dest / RECORD_FILE).exists() else ""),
            hint="choose another --out folder, or pass --force to write into it",
        )
    shutil.copytree(src, dest, dirs_exist_ok=True)
    return dest


def _moved(path: str | None, run_dir: Path) -> str | None:
    """A path recorded inside a run folder (possibly on another machine), inside ``run_dir`` now."""
    if path is None:
        return None
    parts = Path(path).parts
    for marker in ("candidates", PROPOSALS):
        if marker in parts:
            i = len(parts) - 1 - parts[::-1].index(marker)
            return str(run_dir.joinpath(*parts[i:]))
    return path


def _relocated_candidates(record: RunRecord, run_dir: Path, wl: OptimizeWorkload) -> list[CandidateOutcome]:
    """The record's evaluated candidates with their files in ``run_dir`` and the target where it is now."""
    return [
        c.model_copy(
            update={
                "source_path": _moved(c.source_path, run_dir),
                "diff_path": _moved(c.diff_path, run_dir),
                "file": str(wl.file),
            }
        )
        for c in record.candidates
        if c.verdict != "proposed"
    ]


def _candidate_profile(cand: CandidateOutcome, kernel_name: str | None) -> KernelProfile | None:
    """The profile saved beside a candidate (profile.json), its targeted kernel; None when not profiled."""
    if cand.source_path is None:
        return None
    try:
        prof = Profile.model_validate_json((Path(cand.source_path).parent / "profile.json").read_text())
    except (OSError, ValidationError, ValueError):
        return None
    return measure.pick_kernel(prof.kernels, kernel_name) if prof.kernels else None


def _best_kernel(
    record: RunRecord, run_dir: Path, wl: OptimizeWorkload, kernel_name: str | None
) -> KernelProfile | None:
    """The profile of ``record``'s best accepted candidate (None: nothing accepted, or not profiled)."""
    best = next(
        (c for c in _relocated_candidates(record, run_dir, wl) if c.id == record.best and c.accepted), None
    )
    return _candidate_profile(best, kernel_name) if best is not None else None


def _restore(
    loop: OptimizeLoop, record: RunRecord, run_dir: Path, wl: OptimizeWorkload
) -> KernelDiagnosis | None:
    """Give ``loop`` what the run measured before: candidates (numbering, duplicates), rejections (fed
    back), the best (source, macros, launch, profile). Returns the best's diagnosis when it was profiled."""
    st = loop.state
    earlier = _relocated_candidates(record, run_dir, wl)
    st.outcomes = list(earlier)
    for c in earlier:
        if c.verdict == "duplicate":
            continue
        source = c.source
        if source is not None:
            st.seen.setdefault(_key(source, dict(c.defines), dict(c.launch)), c.id)
        if c.verdict in FEEDBACK_VERDICTS:
            st.failed.append(FailedAttempt(candidate_id=c.id, reason=c.reason))
    best = next((c for c in earlier if c.id == record.best and c.accepted), None)
    if best is None or best.source is None or best.source_path is None:
        return None
    st.best_id, st.best_speedup = best.id, best.speedup
    st.source, st.source_file = best.source, Path(best.source_path)
    st.defines, st.launch, st.parent = dict(best.defines), dict(best.launch), best.id
    kernel = _candidate_profile(best, loop.baseline.kernel_name)
    if kernel is None:
        return None
    st.before = kernel
    st.diagnosis = _diagnose_one(kernel)
    return st.diagnosis


def _load_proposal(run_dir: Path, outcome: CandidateOutcome) -> StoredProposal:
    folder = run_dir / (outcome.proposal_dir or f"{PROPOSALS}/?")
    hint = "copy the run folder whole (proposals/ included), or make the proposals again with --propose-only"
    try:
        stored = StoredProposal.model_validate_json((folder / PROPOSAL_FILE).read_text(encoding="utf-8"))
        source = (folder / stored.source_file).read_text(encoding="utf-8")
    except OSError as exc:
        raise BadInput(
            f"proposal {outcome.id} cannot be read from {shown_path(folder)}: {exc.strerror or exc}",
            hint=hint,
        ) from None
    except ValidationError as exc:
        raise BadInput(
            f"proposal {outcome.id} in {shown_path(folder)} is not a perfagent proposal ({exc.errors()[0].get('msg')})",
            hint=hint,
        ) from None
    cand = stored.candidate
    if source != cand.source:  # edited by hand between the machines: evaluated as it is now
        diff = cand.diff
        try:
            request = RewriteRequest.model_validate_json(
                (folder / stored.request_file).read_text(encoding="utf-8")
            )
            diff = unified_diff(request.source, source, request.path)
        except (OSError, ValidationError):
            pass
        cand = cand.model_copy(
            update={
                "source": source,
                "diff": diff,
                "notes": [*cand.notes, "edited after it was proposed (evaluated as edited)"],
            }
        )
    return stored.model_copy(update={"candidate": cand})
