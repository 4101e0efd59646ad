"""The library API: ``profile``, ``diagnose`` and ``load``. The CLI and the TUI are thin clients.

Choosing a profiler (``profiler="auto"``): recorded reports are read by the tool that wrote
them; a CUDA program or a command runs under ncu when ncu is usable here, otherwise a ``.cu``
source falls back to static analysis (said in the profile's notes); when ncu is denied the GPU
counters (ERR_NVGPUCTRPERM) the result is a timing-only profile, said plainly.
"""

from __future__ import annotations

import shlex
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path

from perfagent._version import __version__
from perfagent.classifier import classify
from perfagent.records import RunRecord
from perfagent.session import load_record, provisional_run_dir, save_record
from perfagent.staging.run import can_stage, staged_profile
from perfagent.target import TargetDescription
from perfagent.workloads.describe import Describe, describe_target
from perfagent.workloads.registry import resolve_profile_target
from perfagent.workloads.targets import ProfileTarget
from profilers import get_profiler
from profilers.base import ClockControl, Launcher, Profiler, ProfileRequest
from profilers.build import build_program
from profilers.core_errors import BadInput
from profilers.errors import CounterPermissionDenied, ProfilerUnavailable
from profilers.model import MetricTier, Profile
from profilers.ncu.profiler import NcuProfiler
from profilers.process import run_command
from profilers.settings import TIMEOUTS

Progress = Callable[[str], None]
PROFILERS = ("auto", "ncu", "rocprof", "static")


def _quiet(_: str) -> None:
    return None


def profile(
    target: str | Path | TargetDescription | ProfileTarget | None,
    *,
    command: Sequence[str] = (),
    profiler: str = "auto",
    kernel: str | None = None,
    launch_skip: int = 0,
    launch_count: int | None = None,
    nvtx_include: Sequence[str] = (),
    clock_control: ClockControl = "none",
    full_set: bool = False,
    source_counters: bool = False,
    arch: str = "sm_90",
    timeout_s: float = TIMEOUTS.profile_s,
    workdir: Path | None = None,
    progress: Progress = _quiet,
    staged: bool = True,
    all_kernels: bool = False,
    metric_tiers: tuple[MetricTier, ...] = ("A", "B"),
    per_launch_config: bool = False,
    launcher: Launcher | None = None,
    describe: Describe = describe_target,
) -> Profile:
    """Measure ``target`` (or read it, when it is a recorded report) into a canonical Profile.

    ``target``: a report (.ncu-rep, ncu/rocprof CSV, rocprof-compute folder), a .cu/.hip/.py file, a resolved
    ``ProfileTarget`` or ``TargetDescription`` (not described again), or None with ``command`` (argv; for a
    file: its extra arguments) set. ``profiler``: 'auto', 'ncu', 'rocprof' or 'static'. ``kernel`` (a name regex), ``launch_skip``, ``launch_count`` (per
    launch configuration with ``per_launch_config``), ``nvtx_include``, ``clock_control``, ``full_set``,
    ``source_counters``, ``arch``: ncu's and the build's options. ``staged``: time every launch, then collect
    counters only for the kernels making 90 % of GPU time (``all_kernels``: every kernel;
    ``perfagent.staging``); off, or with ``launch_skip``/``launch_count``/``full_set``, one run collects
    ``metric_tiers``. ``timeout_s``: per external run. ``workdir``: builds and reports (default: a temporary
    folder). ``progress``: gets progress lines. ``launcher`` starts the profiler and the program (e.g.
    ``perfagent.sandbox.profiled.CANDIDATE_CODE``), its note joining the profile's notes; None: directly, with
    this process's environment. ``describe`` classifies a path (once). Raises BadInput or ProfilerError.
    """
    tgt = _checked_target(target, command, profiler, describe)
    if tgt.is_saved_run:
        return load_record(tgt.path or Path()).profile()
    if tgt.is_recorded:
        return _read_recorded(tgt, profiler, kernel, progress)
    with _work_folder(workdir) as work:
        request = ProfileRequest(
            command=list(tgt.command),
            source=tgt.source,
            workdir=work,
            kernel_regex=kernel,
            launch_skip=launch_skip,
            launch_count=launch_count,
            nvtx_include=list(nvtx_include),
            clock_control=clock_control,
            full_set=full_set,
            source_counters=source_counters,
            metric_tiers=metric_tiers,
            per_launch_config=per_launch_config,
            arch=arch,
            timeout_s=timeout_s,
        )
        return _launched_run(tgt, request, profiler, progress, (staged, all_kernels), launcher)


def _checked_target(
    target: str | Path | TargetDescription | ProfileTarget | None,
    command: Sequence[str],
    profiler: str,
    describe: Describe,
) -> ProfileTarget:
    """The resolved target, once the profiler's name is one of ``PROFILERS``."""
    if profiler not in PROFILERS:
        raise BadInput(f"unknown profiler '{profiler}'", hint=f"use one of {', '.join(PROFILERS)}")
    return resolve_profile_target(target, command, describe)


@contextmanager
def _work_folder(workdir: Path | None) -> Iterator[Path]:
    """``workdir``, or a temporary folder removed afterwards; absolute, because the profiler and the
    profiled program may run in other folders than this process."""
    work = (workdir or Path(tempfile.mkdtemp(prefix="perfagent-"))).absolute()
    work.mkdir(parents=True, exist_ok=True)
    try:
        yield work
    finally:
        if workdir is None:
            shutil.rmtree(work, ignore_errors=True)


def _launched_run(
    tgt: ProfileTarget,
    request: ProfileRequest,
    profiler: str,
    progress: Progress,
    staging: tuple[bool, bool],
    launcher: Launcher | None,
) -> Profile:
    """Profile a program, started through ``launcher`` (its note first among the profile's notes) unless
    the run only reads the source, which launches nothing to confine."""
    opens = launcher is not None and not _static_only(tgt, profiler)
    with launcher.launch(request.workdir) if opens and launcher else nullcontext(None) as launch:
        request = request.model_copy(update={"launch": launch})
        prof = _run(tgt, request, profiler, progress, staging=staging)
    if launch is None or not launch.note:
        return prof
    return prof.model_copy(update={"notes": [launch.note, *prof.notes]})


def _static_only(tgt: ProfileTarget, profiler: str) -> bool:
    """Whether the run only reads the source (static analysis): nothing is launched, nothing to confine."""
    return profiler == "static" or (tgt.way.default_profiler == "static" and profiler == "auto")


def _read_recorded(tgt: ProfileTarget, profiler: str, kernel: str | None, progress: Progress) -> Profile:
    assert tgt.path is not None and tgt.way.tool is not None
    if profiler == "static":
        raise BadInput(
            f"{tgt.path} is a recorded report; static analysis needs a .cu source",
            hint="drop --profiler static",
        )
    name = tgt.way.tool
    if profiler not in ("auto", name):
        raise BadInput(
            f"{tgt.path} was written by {name}, not {profiler}", hint=f"use --profiler {name} or auto"
        )
    reader = get_profiler(name)
    if not reader.can_read(tgt.path):
        alt = get_profiler("rocprof" if name == "ncu" else "ncu")
        if alt.can_read(tgt.path):
            reader = alt
        else:
            raise BadInput(
                f"{tgt.path} is not a report perfagent can read",
                hint="pass an Nsight Compute report (.ncu-rep), `ncu --page raw --csv` output, or rocprof output",
            )
    progress(f"reading {tgt.path} ({reader.name})")
    return reader.read(tgt.path, kernel_regex=kernel)


def _run(
    tgt: ProfileTarget,
    request: ProfileRequest,
    profiler: str,
    progress: Progress,
    *,
    staging: tuple[bool, bool] = (False, False),
) -> Profile:
    if tgt.way.default_profiler == "rocprof" or profiler == "rocprof":
        rocprof = get_profiler("rocprof")
        _require(rocprof)
        progress(f"profiling with {rocprof.name} …")
        return rocprof.profile(request)
    if tgt.way.default_profiler == "static" and profiler in ("auto", "static"):
        return _static(
            request, progress, f"{tgt.path} has no main(): analysed statically (compiler resource usage only)"
        )
    if profiler == "static":
        if request.source is None:
            raise BadInput(
                "static analysis needs a .cu source file", hint="pass a .cu file or use --profiler ncu"
            )
        return _static(request, progress, None)
    ncu = get_profiler("ncu")
    reason = ncu.availability()
    if reason is not None:
        if profiler == "ncu" or request.source is None:
            raise ProfilerUnavailable(f"ncu cannot run here: {reason}", hint=_ncu_hint(request))
        return _static(
            request,
            progress,
            f"ncu unavailable ({reason}): static analysis only — no durations or throughput",
        )
    if tgt.way.is_built and request.source is not None:
        exe = request.workdir / request.source.stem
        progress(f"building {request.source} for {request.arch} (nvcc -O3 -lineinfo) …")
        build_program(request.source, exe, request.arch, request.timeout_s)
        request = request.model_copy(update={"command": [str(exe.resolve()), *request.command]})
    staged, all_kernels = staging
    try:
        if staged and isinstance(ncu, NcuProfiler) and can_stage(request):
            return staged_profile(ncu, request, all_kernels=all_kernels, progress=progress)
        progress(f"profiling with ncu ({'full set' if request.full_set else 'targeted metrics'}) …")
        return ncu.profile(request)
    except CounterPermissionDenied as exc:
        progress(f"{exc.message}; falling back to a timing-only diagnosis")
        return _timing_only(request, progress, exc)


def _require(p: Profiler) -> None:
    reason = p.availability()
    if reason is not None:
        raise ProfilerUnavailable(
            f"{p.name} cannot run here: {reason}", hint="install it, or diagnose a recorded report instead"
        )


def _ncu_hint(request: ProfileRequest) -> str:
    if request.source is not None:
        return "install Nsight Compute (ncu) on a machine with an NVIDIA GPU, or use --profiler static"
    return "install Nsight Compute (ncu) on a machine with an NVIDIA GPU, or diagnose a recorded .ncu-rep"


def _static(request: ProfileRequest, progress: Progress, note: str | None) -> Profile:
    static = get_profiler("static")
    _require(static)
    progress(f"static analysis of {request.source} for {request.arch} (nvcc/ptxas) …")
    prof = static.profile(request)
    if note:
        prof = prof.model_copy(update={"notes": [note, *prof.notes]})
    return prof


def _timing_only(request: ProfileRequest, progress: Progress, denied: CounterPermissionDenied) -> Profile:
    """Counters denied: keep what can be measured without them (wall time) plus static facts."""
    notes = [
        "TIMING-ONLY: ncu was denied the GPU performance counters (ERR_NVGPUCTRPERM), so no hardware metrics "
        f"were collected. {denied.hint}".strip()
    ]
    base: Profile | None = None
    if request.source is not None:
        base = get_profiler("static").profile(request)
    argv = list(request.command)
    if argv:
        start = time.monotonic()
        # the user's folder, as under ncu: the command's relative paths (./app, data files) are the user's
        launched, env = request.launched(argv)
        done = run_command(launched, timeout_s=request.timeout_s, env=env)
        wall = time.monotonic() - start
        notes.append(
            f"whole program wall time {wall:.3f} s (exit code {done.returncode}): {shlex.join(argv)}"
        )
    kernels = base.kernels if base else []
    return Profile(
        tool="ncu",
        mode="timing-only",
        source=str(request.source or shlex.join(argv)),
        command=shlex.join(argv) if argv else None,
        kernels=kernels,
        notes=notes + (base.notes if base else []),
    )


def diagnose(
    target: str | Path | TargetDescription | ProfileTarget | None,
    *,
    command: Sequence[str] = (),
    run_dir: Path | None = None,
    save: bool | None = None,
    progress: Progress = _quiet,
    describe: Describe = describe_target,
    **profile_options: object,
) -> RunRecord:
    """Profile (or read) ``target`` and classify every kernel.

    Args:
        target: as for ``profile``.
        command: as for ``profile``.
        run_dir: where to keep the run (record.json, reports); default a new folder under
            ``.perfagent/runs`` when something is run, nothing saved when only reading a report.
        save: force saving (True) or not (False); default as described for ``run_dir``.
        progress: callback for progress lines.
        describe: classifies ``target`` (once: ``profile`` is handed the result).
        **profile_options: forwarded to ``profile`` (profiler, kernel, full_set, ...).

    Returns:
        The RunRecord, kernels and findings in priority order.
    """
    tgt = resolve_profile_target(target, command, describe)  # once: ``profile`` is handed the result
    if tgt.is_saved_run:
        record = load_record(tgt.path or Path())
        prof = record.profile()
    else:
        should_save = save if save is not None else (run_dir is not None or not tgt.is_recorded)
        if should_save:
            with provisional_run_dir(run_dir) as work:  # a failed profile leaves no empty run folder behind
                prof = profile(tgt, workdir=work, progress=progress, **profile_options)  # type: ignore[arg-type]
            run_dir = work
        else:
            prof = profile(tgt, workdir=None, progress=progress, **profile_options)  # type: ignore[arg-type]
    progress(f"classifying {len(prof.kernels)} kernel(s)")
    record = RunRecord(
        id=run_dir.name if run_dir else "",
        perfagent_version=__version__,
        target=tgt.describe(),
        tool=prof.tool,
        tool_version=prof.tool_version,
        mode=prof.mode,
        command=prof.command,
        notes=prof.notes,
        kernels=classify(prof),
    )
    if run_dir is not None and not tgt.is_saved_run:
        path = save_record(record, run_dir)
        progress(f"run saved to {path}")
    return record


def load(path: str | Path | ProfileTarget, *, describe: Describe = describe_target) -> RunRecord | Profile:
    """Load a saved run (folder or record.json) as a RunRecord, or a report as a Profile.

    ``path`` may be a target already described (``describe`` classifies anything else, once).

    Raises:
        BadInput: the path is neither.
    """
    tgt = resolve_profile_target(path, (), describe)
    if tgt.is_saved_run:
        return load_record(tgt.path or Path())
    if tgt.is_recorded:
        return _read_recorded(tgt, "auto", None, _quiet)
    raise BadInput(
        f"{path} is not a saved run or a report", hint="use perfagent.diagnose() to profile sources"
    )
