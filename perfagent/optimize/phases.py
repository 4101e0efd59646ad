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

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfagent._version import __version__
from perfagent.llm_client import LLMConfig
from perfagent.optimize.api import Progress, _nothing_to_try, _run_dir
from perfagent.optimize.baseline import measure_baseline, target_kernel
from perfagent.optimize.context import RunContext, new_context
from perfagent.optimize.events import Info, ignore_progress
from perfagent.optimize.first_kernel import KernelLanguage
from perfagent.optimize.first_kernel_phases import adopt_recorded, no_first_kernel_writer, proposal_language
from perfagent.optimize.loop import OptimizeLoop
from perfagent.optimize.loop_state import BaselineState, LoopResult, diagnose_one
from perfagent.optimize.phase_evaluate import evaluate  # the GPU half, re-exported
from perfagent.optimize.phase_files import (
    PROPOSE_DEVICE,
    SETTING_KEYS,
    best_kernel,
    check_unchanged,
    continue_into,
    evaluate_command,
    load_optimize_run,
    need_a_diagnosis,
    record_command,
    relocated_candidates,
    restore,
    run_target,
)
from perfagent.optimize.phase_steps import ProposalWriter, RecordingRewriter
from perfagent.optimize.phased_writer import PhasedWriter
from perfagent.optimize.result import conclude
from perfagent.optimize.rewriter_choice import choose_rewriter
from perfagent.optimize.run_writer import RunHeader, shown_path
from perfagent.optimize.services import Services, current, using
from perfagent.optimize.settings import OptimizeSettings
from perfagent.records import OptimizeBaseline, OptimizeResult, PhasesInfo, ProposalRound, RunRecord
from perfagent.rewrite.base import WRITE_KERNEL
from perfagent.rewrite.hardware import described_hardware, gpu_device
from perfagent.rewrite.reference_profile import reference_profile_lines
from perfagent.target import FileRole, TargetDescription
from perfagent.workloads.launch_checks import preflight_files
from perfagent.workloads.optimizable import OptimizeWorkload
from perfagent.workloads.registry import optimize_workload
from profilers.core_errors import BadInput
from profilers.model import DeviceInfo, KernelDiagnosis, Profile

__all__ = ["evaluate", "propose"]


# --------------------------------------------------------------------------------------------- propose


def propose(
    target: str | Path | None = None,
    *,
    from_run: str | Path | None = None,
    settings: OptimizeSettings | None = None,
    progress: Progress | None = None,
    llm_config: LLMConfig | None = None,
    services: Services | None = None,
    **options: Any,
) -> RunRecord:
    """Propose candidates for ``target`` (or for RUN's best, ``from_run``) without building or running any.

    Args:
        target: as ``perfagent.optimize``; with ``from_run``, only to say where the target is now.
        from_run: an evaluated run (two-machine or not): the new round starts from its best accepted
            candidate, and its rejections are fed to the rewriter. Without ``out`` the round is added to
            that folder; with ``out`` the folder is copied there first.
        settings, options: as ``perfagent.optimize``. ``report``: a report recorded on the GPU machine to
            diagnose from; ``iterations``, ``max_candidates``: transforms to ask for, candidates kept per
            transform; the verification, timing and profiling settings are stored for ``evaluate`` (a
            ``from_run`` round keeps the run's own).
        progress, llm_config, services: as ``perfagent.optimize``.

    Returns:
        The run's record: earlier candidates (``from_run``) and the new proposals (verdict 'proposed').

    Raises:
        BadInput: unusable target or options, no way to diagnose (no report, no earlier run, no static
            analysis, no ``--transform``), ``from_run`` still holding unevaluated proposals, or a target
            that changed since ``from_run``.
        LLMError: ``backend='llm'`` and no endpoint is configured.
    """
    chosen = OptimizeSettings.build(settings, **options)
    emit = progress or ignore_progress
    named_gpu = gpu_device(chosen.gpu) if chosen.gpu is not None else None  # unknown: exit 2 before any write
    rewriter, svc = choose_rewriter(chosen, llm_config, emit), current(services)
    start = _proposal_start(target, from_run, chosen, rewriter.name, svc.describe)
    write_kernel = proposal_language(start.wl, rewriter.name, chosen.transforms, chosen.language, start.prior)
    if start.prior is not None and start.prior_dir is not None:
        run_dir = continue_into(start.prior_dir, chosen.out, chosen.force)
    else:
        run_dir = _run_dir(chosen.out, chosen.force)
    loop_settings = _round_settings(rewriter.settings, chosen, start.info)
    plain_pytorch = _open_round(
        start.wl, run_dir, rewriter.name, bool(chosen.transforms or write_kernel), emit
    )
    with using(svc):  # the baseline without a GPU reads the report through the services handed in
        found = _proposal_diagnosis(start, chosen, loop_settings, run_dir, emit, write_kernel is not None)
    writer = _proposal_writer(start, found, chosen, loop_settings, rewriter.name, rewriter.reason, run_dir)
    recorder = RecordingRewriter(rewriter.rewriter)
    outcome = _run_proposals(
        start, found, writer, loop_settings, recorder, progress, write_kernel, svc, named_gpu
    )
    result = conclude(writer, outcome, found.diagnosis, apply=False)
    closing = _closing(result, outcome, plain_pytorch, run_dir)
    record = writer.save(result.model_copy(update={"notes": [*result.notes, *closing]}))
    emit(Info(message=f"run saved to {shown_path(run_dir)}"))
    return record


def _open_round(
    wl: OptimizeWorkload, run_dir: Path, backend: str, has_work: bool, emit: Progress
) -> list[str]:
    """Say what the round does, keep a copy of the original; why a plain-PyTorch problem has nothing to try."""
    emit(
        Info(
            message=f"{wl.describe()}: proposals only (backend {backend}; nothing is built or run here), "
            f"run folder {shown_path(run_dir)}"
        )
    )
    plain_pytorch = [] if has_work else _nothing_to_try(wl, backend)
    for line in plain_pytorch:
        emit(Info(message=line))
    snapshot = run_dir / "original"
    snapshot.mkdir(parents=True, exist_ok=True)
    if not (snapshot / wl.file.name).exists():
        shutil.copy2(wl.file, snapshot / wl.file.name)
    return plain_pytorch


def _round_settings(
    settings: OptimizeSettings, chosen: OptimizeSettings, info: PhasesInfo | None
) -> OptimizeSettings:
    """The settings the round's loop runs with: the transforms asked for (write-kernel is its own step);
    a later round keeps the run's verification and timing settings."""
    out = settings.with_changes(transforms=tuple(t for t in chosen.transforms if t != WRITE_KERNEL))
    if info is not None:
        out = out.with_changes(**{k: v for k, v in info.settings.items() if k in SETTING_KEYS})
    return out


def _closing(
    result: OptimizeResult, outcome: LoopResult, plain_pytorch: list[str], run_dir: Path
) -> list[str]:
    """The record's last notes: what to run next on the GPU machine, or why nothing was proposed."""
    proposed = [c for c in result.candidates if c.verdict == "proposed"]
    line = (
        f"{len(proposed)} proposal(s) written; run `{evaluate_command(run_dir)}` on the GPU machine"
        if proposed
        else f"no proposal was written ({outcome.stopped})"
    )
    return [line, *plain_pytorch] if plain_pytorch and not proposed else [line]


@dataclass(frozen=True)
class _Start:
    """Where a round of proposals starts: the target, and the earlier run it continues (if any)."""

    wl: OptimizeWorkload
    typed: str
    """The target as the user gave it (or as the earlier run recorded it)."""
    digest: str
    prior: RunRecord | None = None
    prior_dir: Path | None = None
    info: PhasesInfo | None = None
    """The earlier run's two-machine block (None: a fresh run, or an earlier run made in one go)."""


def _primary_sha256(wl: OptimizeWorkload) -> str:
    """The target's hash as this round resolved it (the record's ``file_sha256``)."""
    return wl.description.sha256(FileRole.PRIMARY) or ""


def _proposal_start(
    target: str | Path | None,
    from_run: str | Path | None,
    settings: OptimizeSettings,
    backend: str,
    describe: Callable[..., TargetDescription],
) -> _Start:
    """Find the target (and the run a ``--from`` round continues) and check it can be diagnosed."""
    if from_run is None:
        if target is None:
            raise BadInput(
                "no target given",
                hint="perfagent optimize TARGET --propose-only --report REPORT, or --propose-only --from RUN",
            )
        wl = optimize_workload(describe(target, problem=settings.problem, spec=settings.spec))
        if wl.spec_path is not None:  # what verify refuses is refused before proposing (exit 2)
            preflight_files(wl.spec_path, [(wl.file, wl.entry)])
        first_kernel = wl.is_plain_pytorch and backend in ("llm", "auto")  # written from the source alone
        if settings.report is None and not settings.transforms and not first_kernel:
            if wl.is_plain_pytorch:
                raise no_first_kernel_writer(wl)
            need_a_diagnosis(wl)
        return _Start(wl=wl, typed=str(target), digest=_primary_sha256(wl))
    prior_dir = Path(from_run).absolute()
    prior = load_optimize_run(prior_dir, "--from")
    waiting = [c for c in prior.candidates if c.verdict == "proposed"]
    if waiting:
        raise BadInput(
            f"{shown_path(prior_dir)} still holds {len(waiting)} proposal(s) that were not evaluated",
            hint=f"evaluate them first on the GPU machine: {evaluate_command(prior_dir)}",
        )
    info = prior.optimize.phases if prior.optimize is not None else None
    wl = run_target(prior, prior_dir, target, settings.problem, settings.spec, describe)
    typed = str(target) if target is not None else (info.target if info else prior.target)
    start = _Start(
        wl=wl, typed=typed, digest=_primary_sha256(wl), prior=prior, prior_dir=prior_dir, info=info
    )
    if info is not None:
        check_unchanged(wl, info, prior_dir)
    return start


@dataclass
class _Found:
    """The diagnosis a round of proposals plans from, and what the record shows of it."""

    summary: OptimizeBaseline
    profile: Profile | None
    kernels: list[KernelDiagnosis]
    diagnosis: KernelDiagnosis | None
    measured: bool
    where: str
    """Where the diagnosis came from (a recorded report, the run's best, static analysis; 'none')."""
    notes: list[str]


def _proposal_diagnosis(
    start: _Start,
    settings: OptimizeSettings,
    loop_settings: OptimizeSettings,
    run_dir: Path,
    emit: Progress,
    first_kernel: bool = False,
) -> _Found:
    """The diagnosis: a report, RUN's best (or its baseline), static analysis. Raises when there is none
    and no transform was named."""
    notes = ["proposals only: nothing was built, verified, timed or profiled here"]
    wl, prior, report = start.wl, start.prior, settings.report
    if prior is None or prior.optimize is None:
        base = measure_baseline(
            wl,
            gpu=False,
            report=report,
            kernel=settings.kernel,
            run_dir=run_dir,
            measuring=loop_settings.measure_limits(),
            emit=emit,
        )
        where = "none"
        if report is not None:
            where = f"the recorded report {report}"
        elif base.diagnosis is not None:
            where = "static analysis (nvcc/ptxas, no counters)"
        why = "; ".join(base.summary.notes) or "nothing could be analysed here"
        found = _Found(
            base.summary, base.profile, base.kernels, base.diagnosis, base.state.measured, where, notes
        )
    else:
        found = _prior_diagnosis(start, settings, loop_settings, run_dir, emit, notes)
        why = f"{shown_path(start.prior_dir or run_dir)} holds no profile of the original or of its best"
    if found.diagnosis is None and not settings.transforms and not first_kernel:
        raise BadInput(
            f"--propose-only has no diagnosis to plan from ({why})",
            hint=f"record a report on the GPU machine ({record_command(wl)}) and pass --report base.ncu-rep, "
            "or name the transforms with --transform ID",
        )
    return found


def _prior_diagnosis(
    start: _Start,
    settings: OptimizeSettings,
    loop_settings: OptimizeSettings,
    run_dir: Path,
    emit: Progress,
    notes: list[str],
) -> _Found:
    """A ``--from`` round: RUN's best's profile, else RUN's baseline profile, unless a report is given."""
    prior, wl = start.prior, start.wl
    assert prior is not None and prior.optimize is not None
    profile = prior.profile() if prior.kernels else None
    kernels = list(prior.kernels)
    diagnosis = target_kernel(kernels, wl, settings.kernel) if kernels else None
    measured = profile is not None and profile.mode == "counters"
    where = f"the baseline profile of {shown_path(start.prior_dir or run_dir)}" if diagnosis else "none"
    best = best_kernel(prior, run_dir, wl, diagnosis.profile.base_name if diagnosis else None)
    if best is not None:
        diagnosis, measured = diagnose_one(best), True
        where = f"the profile of {prior.best}, the best so far"
    if settings.report is not None:
        rep = measure_baseline(
            wl,
            gpu=False,
            report=settings.report,
            kernel=settings.kernel,
            run_dir=run_dir,
            measuring=loop_settings.measure_limits(),
            emit=emit,
        )
        diagnosis, measured, where = (
            rep.diagnosis,
            rep.state.measured,
            f"the recorded report {settings.report}",
        )
        notes.append(f"diagnosis from the recorded report {settings.report}")
    return _Found(prior.optimize.baseline, profile, kernels, diagnosis, measured, where, notes)


def _proposal_writer(
    start: _Start,
    found: _Found,
    settings: OptimizeSettings,
    loop_settings: OptimizeSettings,
    backend: str,
    backend_reason: str,
    run_dir: Path,
) -> PhasedWriter:
    """The writer of a proposals round, its ``phases`` block holding what ``--evaluate`` needs."""
    wl, prior_info = start.wl, start.info
    earlier_rounds = list(prior_info.rounds) if prior_info is not None else []
    same_problem = wl.problem is None or wl.problem == wl.file
    info = PhasesInfo(
        state="proposed",
        target=start.typed,
        file=str(wl.file),
        file_sha256=start.digest,
        problem=_given(settings.problem, prior_info.problem if prior_info else None),
        problem_file=None if same_problem else str(wl.problem),
        problem_sha256=None if same_problem else wl.description.sha256(FileRole.PROBLEM),
        spec=_given(settings.spec, prior_info.spec if prior_info else None),
        spec_file=str(wl.spec_path) if wl.spec_path is not None else None,
        spec_sha256=wl.description.sha256(FileRole.SPEC),
        kernel=settings.kernel
        if settings.kernel is not None
        else (prior_info.kernel if prior_info else None),
        settings={k: getattr(loop_settings, k) for k in SETTING_KEYS} | _gpu_setting(settings, prior_info),
        rounds=[
            *earlier_rounds,
            ProposalRound(round=len(earlier_rounds) + 1, backend=backend, diagnosis=found.where),
        ],
    )
    prior = start.prior
    return PhasedWriter(
        RunHeader.of(
            run_dir,
            wl,
            target=start.typed,
            backend=backend,
            backend_reason=backend_reason,
            device=PROPOSE_DEVICE,
            gpu=False,
            iterations=settings.iterations,
            version=__version__,
        ),
        found.notes,
        info=info,
        earlier=relocated_candidates(prior, run_dir, wl) if prior is not None else [],
        prior_best=prior.best if prior is not None else None,
        proposing=True,
    )


def _gpu_setting(settings: OptimizeSettings, prior: PhasesInfo | None) -> dict[str, str]:
    """``--gpu``, or the one an earlier round was given: the GPU later rounds' prompts describe."""
    gpu = settings.gpu or (prior.settings.get("gpu") if prior is not None else None)
    return {"gpu": str(gpu)} if gpu else {}


def _given(value: str | Path | None, recorded: str | None) -> str | None:
    return str(value) if value is not None else recorded


def _run_proposals(
    start: _Start,
    found: _Found,
    writer: PhasedWriter,
    settings: OptimizeSettings,
    rewriter: RecordingRewriter,
    progress: Progress | None,
    write_kernel: KernelLanguage | None = None,
    services: Services | None = None,
    named_gpu: DeviceInfo | None = None,
) -> LoopResult:
    """The loop that writes proposals; the record keeps what was written when it ends early."""
    diagnosis = found.diagnosis
    state = BaselineState(
        diagnosis=diagnosis,
        measured=found.measured,
        can_profile=False,
        profile_note="proposals only: nothing is profiled here",
        kernel_name=diagnosis.profile.base_name if diagnosis else None,
    )
    earlier_rounds = writer.info.rounds[:-1]
    try:
        writer.baseline(found.summary, found.profile, found.kernels)
        ctx = new_context(
            start.wl,
            writer.run_dir,
            gpu=False,
            baseline=state,
            limits=settings.loop_limits(),
            measuring=settings.measure_limits(),
            services=services,
            progress=writer.watch(progress),
        )
        hardware = _proposal_hardware(found, writer, progress, named_gpu)
        proposals = ProposalWriter(
            ctx,
            rewriter,
            round_no=len(earlier_rounds) + 1,
            first_number=1 + sum(len(r.proposals) for r in earlier_rounds),
            target_sha256=start.digest,
            hardware=hardware,
            saved=writer.save_now,
        )
        loop = OptimizeLoop(
            ctx, rewriter, proposals, writer=writer, hardware=hardware, write_kernel=write_kernel
        )
        if start.wl.is_plain_pytorch:
            loop.reference_profile = reference_profile_lines(found.kernels, found.where)
        if start.prior is not None:
            restore(ctx.state, state.kernel_name, start.prior, writer.run_dir, start.wl)
            ctx.state.diagnosis = diagnosis
            _continue_first_kernel(ctx, start, writer)
        writer.round_update(parent=ctx.state.parent)
        return loop.run()
    except BaseException as exc:
        writer.save_partial(exc)
        raise


def _continue_first_kernel(ctx: RunContext, start: _Start, writer: PhasedWriter) -> None:
    """A ``--from`` round on a plain-PyTorch problem starts from RUN's first kernel (its source, its profile)."""
    assert start.prior is not None
    adopted = adopt_recorded(start.prior, writer.run_dir, start.wl, ctx.baseline.kernel_name)
    if adopted is None:
        return
    wl, cand, diagnosis = adopted
    st = ctx.state
    ctx.wl = wl
    st.source, st.source_file, st.parent = cand.source or "", Path(cand.source_path or ""), cand.id
    if diagnosis is not None:
        st.before, st.diagnosis = diagnosis.profile, diagnosis
    writer.notes.append(
        f"starting from the first kernel {cand.id} ({cand.verdict}"
        + (", its profile" if diagnosis is not None else ", not profiled")
        + ")"
    )


def _proposal_hardware(
    found: _Found, writer: PhasedWriter, progress: Progress | None, named: DeviceInfo | None
) -> DeviceInfo | None:
    """The GPU the proposals' prompts describe: the report's device, else --gpu (``named``: this round's,
    looked up once; a name an earlier round kept is looked up here), else unknown, said in the record and
    the progress."""
    gpu, diagnosis = writer.info.settings.get("gpu"), found.diagnosis
    named = named or (gpu_device(str(gpu)) if gpu else None)
    measured = diagnosis.profile.device if diagnosis else None
    hardware = described_hardware(measured, named, str(gpu) if gpu else None)
    if hardware.note is not None:
        writer.notes.append(hardware.note)
        (progress or ignore_progress)(Info(message=hardware.note))
    return hardware.device
