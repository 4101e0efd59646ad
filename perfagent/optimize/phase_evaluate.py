"""Two machines, the GPU half: ``perfagent optimize --evaluate RUN`` (see ``perfagent.optimize.phases``).

It loads RUN, finds and checks the target (its hash must match), profiles and times the original, and runs the
ordinary loop (``ReplayLoop``) with a ``ProposalsRewriter`` that hands back the stored proposals transform by
transform: build, verify, time, re-profile and decide are the one-machine code. First-kernel proposals of a
plain-PyTorch problem are measured against its ``Model`` (``perfagent.optimize.first_kernel_phases``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from perfagent._version import __version__
from perfagent.optimize.api import (
    NO_GPU_NOTE,
    Progress,
)
from perfagent.optimize.baseline import Baseline, LoopInputs, measure_baseline, target_kernel
from perfagent.optimize.context import new_context
from perfagent.optimize.events import Info, ignore_progress
from perfagent.optimize.first_kernel_phases import (
    profile_first_kernel,
    replay_workload,
)
from perfagent.optimize.loop import OptimizeLoop
from perfagent.optimize.loop_state import BaselineState, LoopResult
from perfagent.optimize.phase_files import (
    check_unchanged,
    continue_into,
    load_optimize_run,
    load_proposal,
    relocated_candidates,
    restore,
    run_target,
    stored_settings,
)
from perfagent.optimize.phase_steps import Replay
from perfagent.optimize.phased_writer import PhasedWriter
from perfagent.optimize.result import conclude
from perfagent.optimize.run_writer import RunHeader, shown_path
from perfagent.optimize.services import Services, current, workers_ahead_for
from perfagent.optimize.settings import OptimizeSettings
from perfagent.records import PhasesInfo, RunRecord
from perfagent.rewrite.proposals import ProposalsRewriter
from perfagent.workloads.optimizable import OptimizeWorkload
from profilers.core_errors import BadInput

__all__ = ["evaluate"]


def evaluate(
    run: str | Path,
    *,
    target: str | Path | None = None,
    settings: OptimizeSettings | None = None,
    progress: Progress | None = None,
    services: Services | None = None,
    **options: Any,
) -> RunRecord:
    """Build, verify, time, re-profile and decide every proposal waiting in ``run``.

    Args:
        run: the folder ``propose`` wrote (copied to this machine).
        target: where the target is on this machine, when not where the proposals were made (default: the
            recorded path, absolute then as given).
        settings, options: as ``perfagent.optimize``; only ``problem``, ``spec`` (as ``target``),
            ``device``, ``out`` (write the evaluated run here, ``run`` copied first), ``force`` and ``apply``
            are used: the verification and timing settings are the run's.
        progress: receives every ``LoopEvent``.
        services: as ``perfagent.optimize``.

    Returns:
        The run's record, as a one-machine run writes it (every proposal a candidate with its verdict).

    Raises:
        BadInput: ``run`` is not a proposals run, holds no proposal waiting, misses proposal files, or
            the target is missing or changed since the proposals were made (its hash).
    """
    chosen = OptimizeSettings.build(settings, **options)
    emit = progress or ignore_progress
    src = Path(run).absolute()
    record, info = _waiting_run(src)
    assert record.optimize is not None
    waiting = [c for c in record.candidates if c.verdict == "proposed"]
    svc = current(services)
    wl = run_target(record, src, target, chosen.problem, chosen.spec, svc.describe)
    notes = check_unchanged(wl, info, src)
    run_dir = continue_into(src, chosen.out, chosen.force)
    replay = ProposalsRewriter([load_proposal(run_dir, c) for c in waiting])
    gpu, device_label = svc.probe_gpu(chosen.device)
    loop_settings = stored_settings(
        info.settings, iterations=len(replay.transforms), max_candidates=replay.largest_batch
    ).with_changes(transforms=replay.transforms)
    if not gpu:
        notes.append(NO_GPU_NOTE)
    emit(
        Info(
            message=f"{wl.describe()}: evaluating {len(waiting)} proposal(s) of {shown_path(src)}, "
            f"device {device_label}, run folder {shown_path(run_dir)}"
        )
    )
    writer = _evaluation_writer(record, run_dir, wl, device_label, gpu, loop_settings.iterations, notes)
    with workers_ahead_for(svc, gpu):
        base, outcome = _replay(
            record, wl, writer, replay, loop_settings, gpu, info.kernel, emit, progress, svc
        )
    result = conclude(writer, outcome, base.diagnosis, apply=chosen.apply)
    saved = writer.save(result)
    emit(Info(message=f"run saved to {shown_path(run_dir)}"))
    return saved


def _evaluation_writer(
    record: RunRecord,
    run_dir: Path,
    wl: OptimizeWorkload,
    device_label: str,
    gpu: bool,
    iterations: int,
    notes: list[str],
) -> PhasedWriter:
    """The writer of the evaluated run: the proposals run's record, its waiting proposals measured here."""
    assert record.optimize is not None and record.optimize.phases is not None
    header = RunHeader.of(
        run_dir,
        wl,
        target=record.optimize.target,
        backend=record.optimize.backend,
        backend_reason=record.optimize.backend_reason,
        device=device_label,
        gpu=gpu,
        iterations=iterations,
        version=__version__,
    )
    return PhasedWriter(
        header,
        notes,
        info=record.optimize.phases,
        earlier=relocated_candidates(record, run_dir, wl),
        prior_best=record.best,
        waiting=[c for c in record.candidates if c.verdict == "proposed"],
    )


def _waiting_run(src: Path) -> tuple[RunRecord, PhasesInfo]:
    """The proposals run at ``src`` and its two-machine block; raises unless proposals wait in it."""
    record = load_optimize_run(src, "--evaluate")
    assert record.optimize is not None
    info = record.optimize.phases
    if info is None:
        raise BadInput(
            f"{shown_path(src)} is not a proposals run: it was optimized in one go (no --propose-only)",
            hint="make proposals with: perfagent optimize TARGET --propose-only --report REPORT --out RUN",
        )
    if not any(c.verdict == "proposed" for c in record.candidates):
        raise BadInput(
            f"{shown_path(src)} holds no proposal waiting to be evaluated (see: perfagent report {shown_path(src)})",
            hint=f"make the next round where the model is: perfagent optimize --propose-only --from {shown_path(src)}",
        )
    return record, info


def _replay(
    record: RunRecord,
    wl: OptimizeWorkload,
    writer: PhasedWriter,
    replay: ProposalsRewriter,
    settings: OptimizeSettings,
    gpu: bool,
    kernel: str | None,
    emit: Progress,
    progress: Progress | None,
    services: Services,
) -> tuple[Baseline, LoopResult]:
    """Measure the original (or take the run's diagnosis without a GPU), then every proposal."""
    try:
        if gpu:
            base = measure_baseline(
                wl,
                gpu=True,
                report=None,
                kernel=kernel,
                run_dir=writer.run_dir,
                measuring=settings.measure_limits(),
                emit=emit,
                services=services,
            )
        else:
            base = _recorded_baseline(record, wl, kernel)
        writer.baseline(base.summary, base.profile, base.kernels)
        ctx = new_context(
            wl,
            writer.run_dir,
            gpu=gpu,
            baseline=base.state,
            limits=settings.loop_limits(),
            measuring=settings.measure_limits(),
            services=services,
            progress=writer.watch(progress),
        )
        # first-kernel proposals: the problem stays the oracle, the file they would be applied to is beside it
        ctx.wl = replay_workload(wl, [p.candidate.source for p in replay.pending()])
        hardware = base.diagnosis.profile.device if base.diagnosis else None
        loop = OptimizeLoop(ctx, replay, Replay(ctx, replay), writer=writer, hardware=hardware)
        restore(ctx.state, ctx.baseline.kernel_name, record, writer.run_dir, wl)
        outcome = loop.run()
        profile_first_kernel(ctx)
        return base, outcome
    except BaseException as exc:
        writer.save_partial(exc)
        raise


def _recorded_baseline(record: RunRecord, wl: OptimizeWorkload, kernel: str | None) -> Baseline:
    """No GPU here: the proposals run's own diagnosis (its report) stands for the original."""
    assert record.optimize is not None
    kernels = list(record.kernels)
    profile = record.profile() if kernels else None
    diagnosis = target_kernel(kernels, wl, kernel)
    state = BaselineState(
        diagnosis=diagnosis,
        measured=profile is not None and profile.mode == "counters",
        can_profile=False,
        profile_note="no GPU: candidates are not re-profiled",
        kernel_name=diagnosis.profile.base_name if diagnosis else None,
    )
    return Baseline(
        state=state,
        summary=record.optimize.baseline,
        profile=profile,
        kernels=kernels,
        diagnosis=diagnosis,
        for_loop=LoopInputs(diagnosis.profile.device if diagnosis else None, None),
    )
