"""Reading every AMD profiler output perfagent knows into a ``Profile`` (format sniffed from the content).

Accepted (never judged by the file name):

- rocprofv3 ``*_kernel_trace.csv`` and ``*_counter_collection.csv`` (both schemas), with the same-prefix
  ``*_agent_info.csv`` / sibling trace or counter file when present, or a folder of them;
- a rocpd SQLite database (``*.db``; reader untested on real files, see ``profilers.rocprof.rocpd``);
- rocprof v1 ``results.csv`` (timestamps and/or counters);
- a rocprof-compute workload folder (``pmc_perf.csv`` + ``sysinfo.csv`` [+ ``roofline.csv``]) or its
  ``pmc_perf.csv`` directly (``*pmc_perf*.csv``: the ``sysinfo``/``roofline`` files with the same name
  pattern beside it are used).

Separate counter passes of one program are joined per kernel dispatch here (``join_dispatches``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Literal

from profilers.errors import BadReport
from profilers.model import DevicePeaks, Profile
from profilers.rocprof.assemble import RocprofRun, build_profile
from profilers.rocprof.compute import (
    PMC_PERF,
    ROOFLINE,
    SYSINFO,
    find_workload_dir,
    looks_like_pmc_perf,
    read_pmc_perf,
    read_roofline,
    read_sysinfo,
)
from profilers.rocprof.csv import (
    AgentRow,
    agent_for,
    looks_like_v1_results,
    looks_like_v3_agent_info,
    looks_like_v3_counter_collection,
    looks_like_v3_kernel_trace,
    read_header,
    read_v1_results,
    read_v3_agent_info,
    read_v3_counter_collection,
    read_v3_kernel_trace,
)
from profilers.rocprof.device import DeviceFacts, facts_from_agent, facts_from_rocpd, facts_from_sysinfo
from profilers.rocprof.dispatch import Dispatch
from profilers.rocprof.names import display_name
from profilers.rocprof.rocpd import is_rocpd, read_rocpd

Format = Literal[
    "rocprofv3-kernel-trace",
    "rocprofv3-counter-collection",
    "rocprofv3-folder",
    "rocpd",
    "rocprof-v1",
    "rocprof-compute-pmc-perf",
    "rocprof-compute-workload",
]

TRACE_SUFFIX = "_kernel_trace.csv"
COUNTER_SUFFIX = "_counter_collection.csv"
AGENT_SUFFIX = "_agent_info.csv"


# --------------------------------------------------------------------------- detection


def detect_format(path: Path) -> Format | None:
    """Which AMD output ``path`` is, from its content (None when it is none of them)."""
    if path.is_dir():
        if find_workload_dir(path) is not None:
            return "rocprof-compute-workload"
        if v3_files(path, TRACE_SUFFIX) or v3_files(path, COUNTER_SUFFIX):
            return "rocprofv3-folder"
        return None
    if not path.is_file():
        return None
    if is_rocpd(path):
        return "rocpd"
    header = read_header(path)
    if looks_like_v3_kernel_trace(header):
        return "rocprofv3-kernel-trace"
    if looks_like_v3_counter_collection(header):
        return "rocprofv3-counter-collection"
    if looks_like_pmc_perf(header):
        return "rocprof-compute-pmc-perf"
    if looks_like_v1_results(header):
        return "rocprof-v1"
    return None


def v3_files(folder: Path, suffix: str) -> list[Path]:
    """rocprofv3 files under ``folder`` (its default layout nests them as <host>/<pid>_...; depth <= 3)."""
    found: list[Path] = []
    for depth in range(4):
        pattern = "/".join(["*"] * depth + [f"*{suffix}"])
        found.extend(p for p in folder.glob(pattern) if p.is_file())
    return sorted(set(found))


def _sibling(path: Path, suffix: str, replaces: str) -> Path | None:
    """The file of the same rocprofv3 run: ``<prefix>{replaces}`` -> ``<prefix>{suffix}``."""
    if not path.name.endswith(replaces):
        return None
    candidate = path.with_name(path.name[: -len(replaces)] + suffix)
    return candidate if candidate.is_file() else None


# --------------------------------------------------------------------------- joining passes


def join_dispatches(base: list[Dispatch], extra: list[Dispatch]) -> list[Dispatch]:
    """Add the counters (and any timing/launch fields ``base`` lacks) of ``extra`` to ``base``.

    Dispatches of the same run are joined by dispatch id (when the ids and names agree for at least 90 %
    of ``extra``); dispatches of separate replays by kernel name and occurrence index (the n-th dispatch of
    a kernel in one pass is the n-th in the other: GT's ``join_prof``). Dispatches of ``extra`` without a
    partner are appended.
    """
    by_id: dict[tuple[int | None, str], int] = {
        (d.dispatch_id, display_name(d.kernel)): i for i, d in enumerate(base) if d.dispatch_id is not None
    }
    id_hits = sum(1 for d in extra if (d.dispatch_id, display_name(d.kernel)) in by_id)
    use_ids = bool(extra) and id_hits >= 0.9 * len(extra)
    occurrences: dict[str, list[int]] = defaultdict(list)
    for i, d in enumerate(base):
        occurrences[display_name(d.kernel)].append(i)
    seen: dict[str, int] = defaultdict(int)
    merged = list(base)
    for d in extra:
        name = display_name(d.kernel)
        target: int | None
        if use_ids:
            target = by_id.get((d.dispatch_id, name))
        else:
            k = seen[name]
            seen[name] += 1
            target = occurrences[name][k] if k < len(occurrences[name]) else None
        if target is None:
            merged.append(d)
            continue
        b = merged[target]
        merged[target] = replace(
            b,
            counters={**b.counters, **d.counters},
            start_ns=b.start_ns if b.duration_ns is not None else d.start_ns,
            end_ns=b.end_ns if b.duration_ns is not None else d.end_ns,
            grid=b.grid or d.grid,
            grid_size=b.grid_size if b.grid_size is not None else d.grid_size,
            workgroup=b.workgroup or d.workgroup,
            workgroup_size=b.workgroup_size if b.workgroup_size is not None else d.workgroup_size,
            lds_bytes=b.lds_bytes if b.lds_bytes is not None else d.lds_bytes,
            scratch_bytes=b.scratch_bytes if b.scratch_bytes is not None else d.scratch_bytes,
            arch_vgpr=b.arch_vgpr if b.arch_vgpr is not None else d.arch_vgpr,
            accum_vgpr=b.accum_vgpr if b.accum_vgpr is not None else d.accum_vgpr,
            sgpr=b.sgpr if b.sgpr is not None else d.sgpr,
        )
    return merged


# --------------------------------------------------------------------------- reading


def _agent_facts(agents: list[AgentRow], dispatches: list[Dispatch]) -> DeviceFacts | None:
    if not agents:
        return None
    agent_id = next((d.agent for d in dispatches if d.agent), None)
    agent = agent_for(agents, agent_id)
    return facts_from_agent(agent) if agent else None


def read_rocprofv3(
    paths: Sequence[Path], *, agent_info: Path | None = None, source: str | None = None
) -> RocprofRun:
    """Read rocprofv3 CSV files of one session: any number of kernel traces and counter collections.

    Kernel traces form the base (timing, launch); counter files are joined onto it (``join_dispatches``).

    Args:
        paths: ``*_kernel_trace.csv`` and/or ``*_counter_collection.csv`` files.
        agent_info: the session's ``*_agent_info.csv`` (device facts), if any.
        source: what to record as the profile's source (default: the first path).

    Raises:
        BadReport: a path is neither a kernel trace nor a counter collection.
    """
    traces: list[list[Dispatch]] = []
    counter_sets: list[list[Dispatch]] = []
    for path in paths:
        header = read_header(path)
        if looks_like_v3_kernel_trace(header):
            traces.append(read_v3_kernel_trace(path))
        elif looks_like_v3_counter_collection(header):
            counter_sets.append(read_v3_counter_collection(path))
        else:
            raise BadReport(f"{path} is not a rocprofv3 kernel trace or counter collection")
    base: list[Dispatch] = [d for t in traces for d in t]
    rest = counter_sets
    if not base and counter_sets:
        base, rest = counter_sets[0], counter_sets[1:]
    for extra in rest:
        base = join_dispatches(base, extra)
    agents = read_v3_agent_info(agent_info) if agent_info else []
    notes: list[str] = []
    if traces and counter_sets:
        notes.append(
            "durations from the kernel trace; counters joined per dispatch from the counter collection"
        )
    if not agents:
        notes.append("no *_agent_info.csv with these files: device unknown, no peaks")
    return RocprofRun(
        tool="rocprofv3",
        source=source or str(paths[0]),
        dispatches=base,
        device=_agent_facts(agents, base),
        notes=notes,
    )


def read_rocprof_compute(folder: Path, *, pmc_perf: Path | None = None) -> RocprofRun:
    """Read a rocprof-compute workload folder (or a ``pmc_perf.csv`` with sysinfo/roofline beside it).

    Args:
        folder: the workload folder (``pmc_perf.csv`` inside it or in its only sub-folder).
        pmc_perf: a pmc_perf file named otherwise; its ``sysinfo``/``roofline`` companions are found by
            replacing ``pmc_perf`` in its name.

    Raises:
        BadReport: no pmc_perf.csv.
    """
    source = str(pmc_perf) if pmc_perf is not None else str(folder)
    if pmc_perf is None:
        workload = find_workload_dir(folder)
        if workload is None:
            raise BadReport(f"{folder} has no {PMC_PERF}", hint="point at a rocprof-compute workload folder")
        pmc_perf = workload / PMC_PERF
        sysinfo, roofline = workload / SYSINFO, workload / ROOFLINE
    else:
        sysinfo = pmc_perf.with_name(pmc_perf.name.replace("pmc_perf", "sysinfo"))
        roofline = pmc_perf.with_name(pmc_perf.name.replace("pmc_perf", "roofline"))
    dispatches = read_pmc_perf(pmc_perf)
    notes: list[str] = []
    facts = None
    tool_version = None
    command = None
    if sysinfo.is_file() and sysinfo != pmc_perf:
        info = read_sysinfo(sysinfo)
        facts = facts_from_sysinfo(info)
        command = info.command
        if info.version or info.rocm_version:
            tool_version = " ".join(
                p for p in (info.version, f"(ROCm {info.rocm_version})" if info.rocm_version else None) if p
            )
    else:
        notes.append("no sysinfo.csv beside pmc_perf.csv: device facts unknown")
    peaks: DevicePeaks | None = None
    if roofline.is_file() and roofline != pmc_perf:
        rows = read_roofline(roofline)
        if rows:
            chosen = next((r for r in rows if r.device == 0), rows[0])
            peaks = chosen.peaks()
            if len(rows) > 1:
                notes.append(
                    f"roofline.csv measured {len(rows)} devices; peaks of device {chosen.device} used"
                )
    return RocprofRun(
        tool="rocprof-compute",
        source=source,
        dispatches=dispatches,
        tool_version=tool_version,
        command=command,
        device=facts,
        empirical_peaks=peaks,
        notes=notes,
    )


def read_rocprof_v1(path: Path, *, kernel_trace: Path | None = None) -> RocprofRun:
    """Read a rocprof v1 ``results.csv``; with ``kernel_trace`` (a v1 ``--timestamp on`` results file of
    another run) the two are joined by dispatch ``Index``, as the two files of one study are
    (rocprof.md 1.4: counter and timing runs join only by Index)."""
    dispatches = read_v1_results(path)
    notes: list[str] = []
    if kernel_trace is not None:
        timing = read_v1_results(kernel_trace)
        dispatches = join_dispatches(timing, dispatches)
        notes.append(
            f"counters from {path.name} joined by dispatch Index with timing from {kernel_trace.name}"
        )
    return RocprofRun(tool="rocprof", source=str(path), dispatches=dispatches, notes=notes)


def read_rocpd_run(path: Path) -> RocprofRun:
    """Read a rocpd database: its dispatches, and the device of the GPU agent they ran on."""
    data = read_rocpd(path)
    used = next((d.agent for d in data.dispatches if d.agent is not None), None)
    agent = next(
        (a for a in data.agents if str(a.absolute_index) == used), data.agents[0] if data.agents else None
    )
    version = data.metadata.get("version") or data.metadata.get("schema_version")
    return RocprofRun(
        tool="rocprofv3",
        source=str(path),
        dispatches=data.dispatches,
        tool_version=version,
        device=facts_from_rocpd(agent) if agent else None,
        notes=["read from a rocpd database (reader not yet verified on real rocpd files)"],
    )


def read_rocprof(
    path: Path,
    *,
    kernel_regex: str | None = None,
    agent_info: Path | None = None,
    kernel_trace: Path | None = None,
) -> Profile:
    """Read any AMD profiler output into a ``Profile`` (see the module docstring for what is accepted).

    Args:
        path: the file or folder.
        kernel_regex: keep only matching kernels.
        agent_info: a rocprofv3 agent-info file to use when it is not the same-prefix sibling of ``path``.
        kernel_trace: a timing file to join with a counter file (rocprofv3 trace, or v1 results with
            timestamps) when it is not the same-prefix sibling.

    Raises:
        BadReport: not a readable AMD profiler output.
        NoKernelsProfiled: nothing matched ``kernel_regex``.
    """
    fmt = detect_format(path)
    run: RocprofRun
    if fmt is None:
        raise BadReport(
            f"{path} is not a rocprofv3, rocprof, rocpd or rocprof-compute output perfagent can read",
            hint="give a *_kernel_trace.csv, *_counter_collection.csv, results.csv, .db or a workload folder",
        )
    if fmt in ("rocprofv3-kernel-trace", "rocprofv3-counter-collection"):
        files = [path]
        if fmt == "rocprofv3-kernel-trace":
            counters = _sibling(path, COUNTER_SUFFIX, TRACE_SUFFIX)
            files += [counters] if counters else []
        else:
            trace = kernel_trace or _sibling(path, TRACE_SUFFIX, COUNTER_SUFFIX)
            files = ([trace] if trace else []) + files
        agents = (
            agent_info
            or _sibling(path, AGENT_SUFFIX, TRACE_SUFFIX)
            or _sibling(path, AGENT_SUFFIX, COUNTER_SUFFIX)
        )
        run = read_rocprofv3(files, agent_info=agents, source=str(path))
    elif fmt == "rocprofv3-folder":
        files = v3_files(path, TRACE_SUFFIX) + v3_files(path, COUNTER_SUFFIX)
        agent_files = v3_files(path, AGENT_SUFFIX)
        run = read_rocprofv3(
            files, agent_info=agent_info or (agent_files[0] if agent_files else None), source=str(path)
        )
    elif fmt == "rocpd":
        run = read_rocpd_run(path)
    elif fmt == "rocprof-v1":
        run = read_rocprof_v1(path, kernel_trace=kernel_trace)
    elif fmt == "rocprof-compute-workload":
        run = read_rocprof_compute(path)
    else:
        run = read_rocprof_compute(path.parent, pmc_perf=path)
    if agent_info is not None and run.device is None and looks_like_v3_agent_info(read_header(agent_info)):
        run.device = _agent_facts(read_v3_agent_info(agent_info), run.dispatches)
    return build_profile(run, kernel_regex=kernel_regex)
