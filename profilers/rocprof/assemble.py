"""Turn the dispatches one AMD run recorded into the canonical ``Profile``.

Per kernel (grouped by display name, in order of first dispatch): drop warm-up and gross outlier
dispatches (``dispatch``), take the median kept duration, average the counters of the kept
dispatches, evaluate the metric map on them (``metrics``), and attach the device and the
theoretical occupancy. Everything dropped, estimated or assumed is said in ``Profile.notes``.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from profilers.errors import KernelFilterUnmatched, NoKernelsProfiled, compile_kernel_filter
from profilers.model import (
    CollectionMode,
    DeviceInfo,
    DevicePeaks,
    KernelProfile,
    LaunchConfig,
    Metrics,
    Occupancy,
    Profile,
    ToolFinding,
)
from profilers.rocprof.device import DEFAULT_MAX_WAVES_PER_CU, DeviceFacts, device_info
from profilers.rocprof.dispatch import Dispatch, drop_note, split_outliers
from profilers.rocprof.metrics import Evaluation, evaluate, split_targets
from profilers.rocprof.names import base_name, display_name, is_runtime_kernel, matches
from profilers.rocprof.occupancy import theoretical_occupancy


@dataclass
class RocprofRun:
    """Everything read from one AMD profiling session, before aggregation."""

    tool: str
    """'rocprofv3', 'rocprof' (v1) or 'rocprof-compute'."""
    source: str
    """The file or folder read."""
    dispatches: list[Dispatch]
    tool_version: str | None = None
    command: str | None = None
    device: DeviceFacts | None = None
    """Facts of the GPU (one device per session is assumed)."""
    empirical_peaks: DevicePeaks | None = None
    notes: list[str] = field(default_factory=list)


def build_profile(run: RocprofRun, *, kernel_regex: str | None = None) -> Profile:
    """Aggregate ``run`` into a ``Profile``.

    Args:
        run: the dispatches and device facts read from the tool's files.
        kernel_regex: keep only kernels whose display or base name matches (``re.search``).

    Raises:
        NoKernelsProfiled: no dispatch matched ``kernel_regex`` (or the files held none).
    """
    pattern = compile_kernel_filter(kernel_regex)
    groups: dict[str, list[Dispatch]] = defaultdict(list)
    for dispatch in run.dispatches:
        if matches(pattern, dispatch.kernel):
            groups[display_name(dispatch.kernel)].append(dispatch)
    if not groups:
        available = sorted({base_name(d.kernel) for d in run.dispatches})
        what = f"matching '{kernel_regex}'" if kernel_regex else "at all"
        unmatched = bool(kernel_regex and available)  # the filter, not the run, found nothing
        raise (KernelFilterUnmatched if unmatched else NoKernelsProfiled)(
            f"{run.source}: no kernel dispatches {what}",
            hint=f"kernels in the file: {', '.join(available[:12]) or 'none'}",
            available=available,
        )
    device, notes = device_info(run.device, run.empirical_peaks)
    notes = [*run.notes, *notes]
    kernels: list[KernelProfile] = []
    estimates: dict[str, list[str]] = defaultdict(list)
    any_counters = False
    for name, dispatches in groups.items():
        kernel, kernel_notes, kernel_estimates = _kernel_profile(name, dispatches, device, run.device)
        kernels.append(kernel)
        notes.extend(kernel_notes)
        for sentence in kernel_estimates:
            estimates[sentence].append(kernel.base_name)
        any_counters = any_counters or kernel.raw_metric_count not in (None, 0)
    for sentence, names in estimates.items():
        notes.append(f"{sentence} ({', '.join(_unique(names))})")
    runtime = [k.base_name for k in kernels if is_runtime_kernel(k.name)]
    if runtime:
        notes.append(f"ROCm runtime utility kernels kept but not user code: {', '.join(_unique(runtime))}")
    mode: CollectionMode = "counters" if any_counters else "timing-only"
    return Profile(
        tool=run.tool,
        tool_version=run.tool_version,
        mode=mode,
        source=run.source,
        command=run.command,
        kernels=kernels,
        notes=notes,
    )


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _kernel_profile(
    name: str, dispatches: list[Dispatch], device: DeviceInfo, facts: DeviceFacts | None
) -> tuple[KernelProfile, list[str], list[str]]:
    notes: list[str] = []
    base = base_name(name)
    # Outliers are judged among dispatches of one launch configuration (sizes legitimately differ).
    by_launch: dict[tuple[int | None, int | None], list[int]] = defaultdict(list)
    for position, dispatch in enumerate(dispatches):
        by_launch[dispatch.launch_key].append(position)
    kept_positions: list[int] = []
    for positions in by_launch.values():
        durations = [dispatches[p].duration_ns for p in positions]
        split = split_outliers([float(d) if d is not None else None for d in durations])
        kept_positions.extend(positions[i] for i in split.kept)
        note = drop_note(base, [float(d) if d is not None else None for d in durations], split)
        if note:
            notes.append(note)
    kept = [dispatches[p] for p in sorted(kept_positions)]
    if len(by_launch) > 1:
        notes.append(
            f"{base}: {len(by_launch)} launch configurations merged; launch shown is the most frequent"
        )
    timed = [d.duration_ns for d in kept if d.duration_ns is not None]
    duration_s = statistics.median(timed) * 1e-9 if timed else None
    total_s = sum(timed) * 1e-9 if timed else None

    with_counters = [d for d in kept if d.counters]
    averaged = _mean_counters(with_counters)
    counter_durations = [d.duration_ns for d in with_counters if d.duration_ns is not None]
    context_duration = statistics.fmean(counter_durations) if counter_durations else None
    if context_duration is None and duration_s is not None:
        context_duration = duration_s * 1e9
    launch_dispatch = _most_frequent_launch(kept or dispatches)
    arch = (facts.arch if facts else None) or device.arch
    evaluation: Evaluation | None = None
    metrics = Metrics(duration_s=duration_s)
    achieved: float | None = None
    if averaged:
        context = _context(facts, device, context_duration)
        evaluation = evaluate(averaged, context, arch=arch)
        kwargs, achieved = split_targets(evaluation.targets)
        metrics = Metrics(duration_s=duration_s, **kwargs)  # type: ignore[arg-type]

    occupancy = _occupancy(launch_dispatch, facts, device, achieved)
    kernel = KernelProfile(
        name=name,
        base_name=base,
        invocations=len(kept),
        total_duration_s=total_s,
        launch=_launch(launch_dispatch),
        occupancy=occupancy,
        metrics=metrics,
        device=device,
        tool_findings=_findings(evaluation),
        raw_metric_count=len(averaged) if averaged else None,
    )
    return kernel, notes, list((evaluation.estimates if evaluation else {}).values())


def _mean_counters(dispatches: list[Dispatch]) -> dict[str, float]:
    """Per-counter mean over the dispatches that recorded it."""
    sums: dict[str, float] = defaultdict(float)
    counts: Counter[str] = Counter()
    for dispatch in dispatches:
        for name, value in dispatch.counters.items():
            sums[name] += value
            counts[name] += 1
    return {name: sums[name] / counts[name] for name in sums}


def _context(
    facts: DeviceFacts | None, device: DeviceInfo, duration_ns: float | None
) -> dict[str, float | None]:
    peaks = device.peaks
    return {
        "duration_ns": duration_ns,
        "sclk_mhz": (facts.sclk_mhz if facts else None)
        or (device.sm_clock_hz / 1e6 if device.sm_clock_hz else None),
        "cu_count": float(device.sm_count) if device.sm_count else None,
        "num_xcd": float(device.xcd_count) if device.xcd_count else None,
        "max_waves_per_cu": float((facts.max_waves_per_cu if facts else None) or DEFAULT_MAX_WAVES_PER_CU),
        "lds_banks_per_cu": float(facts.lds_banks_per_cu) if facts and facts.lds_banks_per_cu else None,
        "peak_dram_bytes_per_s": peaks.dram_bytes_per_s,
        "peak_l2_bytes_per_s": peaks.l2_bytes_per_s,
        "peak_l1_bytes_per_s": peaks.l1_bytes_per_s,
    }


def _most_frequent_launch(dispatches: list[Dispatch]) -> Dispatch:
    keys = Counter(d.launch_key for d in dispatches)
    key = keys.most_common(1)[0][0]
    return next(d for d in dispatches if d.launch_key == key)


def _launch(dispatch: Dispatch) -> LaunchConfig:
    block = dispatch.workgroup
    block_size = dispatch.workgroup_items
    grid_blocks: tuple[int, int, int] | None = None
    if dispatch.grid is not None and block is not None:
        grid_blocks = (
            -(-dispatch.grid[0] // block[0]),
            -(-dispatch.grid[1] // block[1]),
            -(-dispatch.grid[2] // block[2]),
        )
    grid_size: int | None = None
    if grid_blocks is not None:
        grid_size = grid_blocks[0] * grid_blocks[1] * grid_blocks[2]
    elif dispatch.total_workitems is not None and block_size:
        grid_size = -(-dispatch.total_workitems // block_size)
    return LaunchConfig(
        grid=grid_blocks,
        block=block,
        grid_size=grid_size,
        block_size=block_size,
        registers_per_thread=dispatch.arch_vgpr,
        shared_memory_static_bytes=dispatch.lds_bytes,
        local_memory_per_thread_bytes=dispatch.scratch_bytes,
    )


def _occupancy(
    dispatch: Dispatch, facts: DeviceFacts | None, device: DeviceInfo, achieved: float | None
) -> Occupancy:
    max_waves = (facts.max_waves_per_cu if facts else None) or DEFAULT_MAX_WAVES_PER_CU
    theoretical = None
    if dispatch.workgroup_items:
        theoretical = theoretical_occupancy(
            workgroup_size=dispatch.workgroup_items,
            wave_size=(facts.wave_size if facts else None) or dispatch.wave_size or 64,
            arch_vgpr=dispatch.arch_vgpr,
            accum_vgpr=dispatch.accum_vgpr,
            sgpr=dispatch.sgpr,
            lds_bytes_per_workgroup=dispatch.lds_bytes or 0,
            lds_bytes_per_cu=device.max_shared_memory_per_sm_bytes or 64 * 1024,
            max_waves_per_cu=max_waves,
        )
    if theoretical is None:
        return Occupancy(achieved_pct=achieved, max_warps_per_sm=max_waves if achieved is not None else None)
    return theoretical.model_copy(update={"achieved_pct": achieved})


def _findings(evaluation: Evaluation | None) -> list[ToolFinding]:
    """Secondary evidence the canonical model has no field for (rocprof-compute's own measures)."""
    if evaluation is None:
        return []
    values = evaluation.values
    out: list[ToolFinding] = []
    if "coalescing_pct" in values:
        per_instr = values.get("l1_accesses_per_memory_instruction")
        extra = f"; {per_instr:.1f} L1 accesses per memory wave instruction" if per_instr is not None else ""
        out.append(
            ToolFinding(
                rule_id="rocprof-compute.coalescing",
                title=f"Memory coalescing (rocprof-compute formula): {values['coalescing_pct']:.1f} %",
                message=(
                    "TA_TOTAL_WAVEFRONTS x 64 x 100 / (TCP_TOTAL_ACCESSES x 4). Access-width sensitive: a "
                    f"perfectly contiguous 8-byte-per-lane copy reads 25 %; not evidence of uncoalesced access on its own{extra}."
                ),
                kind="info",
            )
        )
    if values.get("lds_conflict_cycles_per_instruction"):
        out.append(
            ToolFinding(
                rule_id="metrix.lds_bank_conflicts",
                title=f"LDS bank-conflict cycles per LDS instruction: {values['lds_conflict_cycles_per_instruction']:.1f}",
                message="SQ_LDS_BANK_CONFLICT / SQ_INSTS_LDS (Metrix's unit).",
                kind="info",
            )
        )
    if "mean_wave_lifetime_cycles" in values:
        out.append(
            ToolFinding(
                rule_id="rocprof.wave_lifetime",
                title=f"Mean wavefront lifetime: {values['mean_wave_lifetime_cycles']:.0f} cycles",
                message="4 x SQ_WAVE_CYCLES / SQ_WAVES.",
                kind="info",
            )
        )
    return out
