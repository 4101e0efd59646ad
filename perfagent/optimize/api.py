"""``perfagent.optimize``: diagnose a kernel, rewrite it one targeted transform at a time, keep what won.

Order of work: resolve the workload → choose the backend (``auto``: recipes and the llm together when
configured, else recipes, said plainly) → probe the GPU → profile and diagnose the original (ncu through the harness
on a GPU; a recorded report or static analysis without one) → time it (GPU) → run the loop
(``perfagent.optimize.loop``; ``record.json`` is rewritten after every candidate, and on Ctrl-C or an
error the record keeps what was measured) → ``apply``: ``perfagent.optimize.apply`` (a fresh
``<file>.orig[.N]`` backup, the best candidate written over the file, and the launch spec it needs).

Without a GPU the loop still runs: candidates are proposed, built (nvcc) or verified on the CPU
(KernelBench, Triton through its interpreter) and every one is left ``not timed``: no speed-up is
ever claimed that was not measured.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from perfagent._version import __version__
from perfagent.llm_client import LLMConfig
from perfagent.optimize.baseline import Baseline, measure_baseline
from perfagent.optimize.events import Info, ProgressCallback, ignore_progress
from perfagent.optimize.limits import LoopLimits, MeasureLimits
from perfagent.optimize.loop import one_machine_loop
from perfagent.optimize.loop_state import LoopResult
from perfagent.optimize.result import conclude
from perfagent.optimize.rewriter_choice import choose_rewriter, conversation_seed
from perfagent.optimize.run_writer import RunHeader, RunWriter, shown_path
from perfagent.optimize.services import Services, current, workers_ahead_for
from perfagent.optimize.settings import OptimizeSettings
from perfagent.records import (
    RunRecord,
)
from perfagent.rewrite.base import WRITE_KERNEL, Rewriter
from perfagent.rewrite.hardware import gpu_device
from perfagent.session import new_run_dir
from perfagent.workloads.optimizable import OptimizeWorkload
from perfagent.workloads.registry import optimize_workload
from profilers.core_errors import BadInput
from profilers.model import DeviceInfo

Progress = ProgressCallback
NO_GPU_NOTE = "no GPU here: candidates were verified where the workload allows (CPU) and not timed; no speed-up is claimed"


def optimize(
    target: str | Path,
    *,
    settings: OptimizeSettings | None = None,
    progress: Progress | None = None,
    llm_config: LLMConfig | None = None,
    services: Services | None = None,
    **options: Any,
) -> RunRecord:
    """Optimize the kernel in ``target`` and return the run's record (kind 'optimize').

    Args:
        target: a ``.cu`` kernel file with a launch spec (or the spec), a KernelBench problem, a
            ``ModelNew`` file (with ``problem``), or a Triton script.
        settings: the run's options (``OptimizeSettings``: every field documented there); default: the
            defaults.
        progress: receives every ``LoopEvent`` (may raise to cancel).
        llm_config: LLM endpoint settings (default: from the environment and the ``llm_*`` settings).
        services: what reaches the GPU, the compilers and the profiler (``perfagent.optimize.services``;
            default: the real ones, or those ``services.using`` put in place).
        **options: ``OptimizeSettings`` fields over ``settings`` (``backend='recipes'``, ``iterations=2``,
            ``transforms=[...]`` or ``transform='id'``, ``max_candidates``, ``device``, ``out``, ``apply`` ...).

    Returns:
        The ``RunRecord`` (kind 'optimize'): ``baseline``, ``candidates``, ``best`` and ``optimize``
        (plan, before/after table, notes), saved as ``<run>/record.json``.

    Raises:
        BadInput: unusable target or options.
        LLMError: ``backend='llm'`` and no endpoint is configured.
        TypeError: an option that ``OptimizeSettings`` does not have.
    """
    chosen = OptimizeSettings.build(settings, **options)
    emit = progress or ignore_progress
    svc = current(services)
    wl = optimize_workload(
        svc.describe(target, problem=chosen.problem, spec=chosen.spec, report=chosen.report)
    )
    parts = _compose(chosen, llm_config, emit, svc)
    start = _start(str(target), wl, parts, emit)
    run = RunWriter(start.header, start.notes)
    asked = _Asked(
        report=chosen.report,
        kernel=chosen.kernel,
        apply=chosen.apply,
        compile_baseline=not chosen.no_compile_baseline,
    )
    base, outcome = _measure_and_loop(start, parts, asked, run, progress)
    result = conclude(run, outcome, base.diagnosis, apply=chosen.apply)
    if start.plain_pytorch and not outcome.candidates:
        result = result.model_copy(
            update={
                "stopped": f"nothing to try: {start.plain_pytorch[0]}",
                "notes": [*result.notes, *start.plain_pytorch],
            }
        )
    record = run.save(result)
    emit(Info(message=f"run saved to {shown_path(parts.run_dir)}"))
    return record


@dataclass(frozen=True)
class _Parts:
    """The run's parts, composed once from the settings before the target is measured: what proposes
    (the rewriter), where it runs (the GPU, the services), where it writes, and the loop's limits."""

    rewriter: Rewriter
    backend: str
    backend_reason: str
    limits: LoopLimits
    """What the loop plans and how far it goes (candidates raised to the LLM's samples, the transforms to try)."""
    measuring: MeasureLimits
    """How the original and each candidate are built, verified, timed and re-profiled."""
    named_gpu: DeviceInfo | None
    """``--gpu`` looked up once in the knowledge base (None: not given)."""
    asked_gpu: str | None
    """``--gpu`` as the user wrote it."""
    gpu: bool
    device_label: str
    run_dir: Path
    services: Services
    asks_first_kernel: bool
    """``--transform write-kernel`` was given (a target that has a kernel already is refused)."""
    language: str
    """``--language``: the first kernel's language (a plain-PyTorch problem, the llm backend)."""


@dataclass(frozen=True)
class _Asked:
    """What the user asked of this run's baseline and result (``--report``, ``--kernel``, ``--apply``)."""

    report: str | Path | None
    kernel: str | None
    apply: bool
    compile_baseline: bool
    """KernelBench on a GPU: also time ``torch.compile(Model)`` (not ``--no-compile-baseline``)."""


@dataclass(frozen=True)
class _Start:
    """What the target decides before measuring: a first kernel to write, or why nothing can be tried."""

    wl: OptimizeWorkload
    header: RunHeader
    """What the record says of the run before anything is measured (the run writer's one value)."""
    write_kernel: Literal["cuda", "triton"] | None
    plain_pytorch: list[str]
    notes: list[str]


def _measure_and_loop(
    start: _Start, parts: _Parts, asked: _Asked, run: RunWriter, progress: Progress | None
) -> tuple[Baseline, LoopResult]:
    """Measure the original, then run the loop; on Ctrl-C, an LLM or internal failure the record keeps
    what was measured. Fresh workers are kept started ahead meanwhile (``sandbox.standby``: where
    workers start fresh, as confined GPU workers do), unless the services are simulated."""
    emit = progress or ignore_progress
    wl = start.wl
    with workers_ahead_for(parts.services, parts.gpu):
        try:
            base = measure_baseline(
                wl,
                gpu=parts.gpu,
                report=asked.report,
                kernel=asked.kernel,
                run_dir=parts.run_dir,
                measuring=parts.measuring,
                emit=emit,
                services=parts.services,
                named_gpu=parts.named_gpu,
                asked_gpu=parts.asked_gpu,
                compile_baseline=asked.compile_baseline,
            )
            run.baseline(base.summary, base.profile, base.kernels)
            wl.description.check_unchanged("the loop")
            if base.for_loop.hardware_note is not None:
                run.notes.append(base.for_loop.hardware_note)
                emit(Info(message=base.for_loop.hardware_note))
            outcome = one_machine_loop(
                wl,
                parts.rewriter,
                parts.run_dir,
                gpu=parts.gpu,
                baseline=base.state,
                limits=parts.limits,
                measuring=parts.measuring,
                services=parts.services,
                hardware=base.for_loop.hardware,
                progress=run.watch(progress),
                writer=run,
                write_kernel=start.write_kernel,
                reference_profile=base.for_loop.reference_profile,
            ).run()
            wl.description.check_unchanged("its result was written" + (" and applied" if asked.apply else ""))
            return base, outcome
        except BaseException as exc:
            run.save_partial(exc)
            raise


def _compose(
    settings: OptimizeSettings, llm_config: LLMConfig | None, emit: Progress, services: Services
) -> _Parts:
    """Look up ``--gpu`` (once), choose the rewriter, probe the GPU, make the run folder."""
    named_gpu = gpu_device(settings.gpu) if settings.gpu is not None else None  # unknown: exit 2 here
    chosen = choose_rewriter(settings, llm_config, emit)
    gpu, device_label = services.probe_gpu(settings.device)
    run_dir = _run_dir(settings.out, settings.force)
    wanted = tuple(t for t in settings.transforms if t != WRITE_KERNEL)
    loop_settings = chosen.settings.model_copy(
        update={"transforms": wanted, "verify_seed": conversation_seed(chosen.config)}
    )
    return _Parts(
        rewriter=chosen.rewriter,
        backend=chosen.name,
        backend_reason=chosen.reason,
        limits=loop_settings.loop_limits(),
        measuring=loop_settings.measure_limits(),
        named_gpu=named_gpu,
        asked_gpu=settings.gpu,
        gpu=gpu,
        device_label=device_label,
        run_dir=run_dir,
        services=services,
        asks_first_kernel=WRITE_KERNEL in settings.transforms,
        language=settings.language,
    )


def _start(target: str, wl: OptimizeWorkload, parts: _Parts, emit: Progress) -> _Start:
    """Say what the run does, keep a copy of the original; a first kernel to write, or why nothing can be tried."""
    emit(
        Info(
            message=f"{wl.describe()}: backend {parts.backend}, device {parts.device_label}, "
            f"run folder {shown_path(parts.run_dir)}"
        )
    )
    write_kernel = _write_kernel(wl, parts.backend, parts.asks_first_kernel, parts.language)
    wanted = parts.limits.transforms
    plain_pytorch = [] if (wanted or write_kernel) else _nothing_to_try(wl, parts.backend)
    for line in plain_pytorch:  # said up front: the plan will be empty, and why
        emit(Info(message=line))
    snapshot = parts.run_dir / "original"
    snapshot.mkdir(parents=True, exist_ok=True)
    shutil.copy2(wl.file, snapshot / wl.file.name)
    notes: list[str] = []
    if write_kernel == "cuda" and not parts.gpu:
        notes.append(
            "no GPU: the first kernel is CUDA (load_inline), which cannot be built or verified here; "
            "--language triton verifies on the CPU (Triton interpreter)"
        )
        emit(Info(message=notes[-1]))
    if not parts.gpu:
        notes.append(NO_GPU_NOTE)
    header = RunHeader.of(
        parts.run_dir,
        wl,
        target=target,
        backend=parts.backend,
        backend_reason=parts.backend_reason,
        device=parts.device_label,
        gpu=parts.gpu,
        iterations=parts.limits.iterations,
        version=__version__,
    )
    return _Start(wl=wl, header=header, write_kernel=write_kernel, plain_pytorch=plain_pytorch, notes=notes)


def _write_kernel(
    wl: OptimizeWorkload, backend: str, asked: bool, language: str
) -> Literal["cuda", "triton"] | None:
    """The kernel language of a write-kernel step (llm backend, plain-PyTorch problem), else None.

    Raises:
        BadInput: ``write-kernel`` was asked for on a target that already has a kernel.
    """
    plain = wl.is_plain_pytorch
    if asked and not plain:
        raise BadInput(
            f"write-kernel writes a first kernel for a plain-PyTorch KernelBench problem; {wl.file.name} has one",
            hint="leave out --transform write-kernel",
        )
    if not plain or backend not in ("llm", "auto"):  # 'auto' here: recipes and the model together
        return None
    return "triton" if language == "triton" else "cuda"


def _nothing_to_try(wl: OptimizeWorkload, backend: str) -> list[str]:
    """Why a KernelBench run produced no candidate, and the next step (plain PyTorch: no kernel yet)."""
    if not wl.is_plain_pytorch:
        return []
    return [
        f"{wl.file.name} is plain PyTorch (class Model, no ModelNew and no Triton or CUDA kernel): there is no kernel "
        f"for the {backend} backend to rewrite yet; writing a first kernel from the reference needs the llm backend "
        "(--backend llm, --language cuda|triton)",
        "next step: write a ModelNew with a Triton or CUDA kernel (e.g. examples/kernelbench/01_vector_add_triton.py) "
        f"and run `perfagent optimize MODELNEW.py --problem {wl.file.name}`",
    ]


def _run_dir(out: str | Path | None, force: bool) -> Path:
    """The run folder, absolute: candidate paths under it are handed to workers and profilers that run elsewhere."""
    if out is None:
        return new_run_dir().absolute()
    path = Path(out).absolute()
    if path.exists() and not path.is_dir():
        raise BadInput(f"{path} exists and is not a folder", hint="--out takes a folder for the run")
    if (path / "record.json").exists() and not force:
        raise BadInput(
            f"{path} already holds a run", hint="choose another --out folder, or pass --force to reuse it"
        )
    path.mkdir(parents=True, exist_ok=True)
    return path
