"""The AMD backend: rocprofv3 (kernel trace + counter passes) and rocprof-compute, behind ``Profiler``.

``RocprofProfiler.profile`` builds a HIP source with hipcc when given one, runs one rocprofv3 kernel-trace
pass for timing and one rocprofv3 counter pass per group of counters that fits the hardware
(``rocprof_passes``), joins the passes per kernel dispatch and returns the canonical ``Profile``.
``read`` accepts every AMD output perfagent knows (format sniffed from the header, never the file name):

- rocprofv3 ``*_kernel_trace.csv`` and ``*_counter_collection.csv`` (both schemas), with the same-prefix
  ``*_agent_info.csv`` / sibling trace or counter file when present, or a folder of them;
- a rocpd SQLite database (``*.db``; reader untested on real files, see ``rocprof_rocpd``);
- rocprof v1 ``results.csv`` (timestamps and/or counters);
- a rocprof-compute workload folder (``pmc_perf.csv`` + ``sysinfo.csv`` [+ ``roofline.csv``]) or its
  ``pmc_perf.csv`` directly (``*pmc_perf*.csv``: the ``sysinfo``/``roofline`` files with the same name
  pattern beside it are used).

The module split: ``rocprof_argv`` (argv), ``rocprof_passes`` (counter passes), ``rocprof_csv`` /
``rocprof_compute`` / ``rocprof_rocpd`` (readers), ``rocprof_names`` (kernel names), ``rocprof_dispatch``
(dispatch records, outlier dropping), ``rocprof_metrics`` (metric map evaluation), ``rocprof_device``
(device and peaks), ``rocprof_occupancy`` (theoretical occupancy), ``rocprof_build`` (Profile assembly).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Literal

from knowledge.rocprof_metric_map import rocprof_metric_map
from profilers.base import ProfileRequest
from profilers.errors import (
    ApplicationFailed,
    BadReport,
    BuildFailed,
    CounterPermissionDenied,
    NoKernelsProfiled,
    ProfilerFailed,
    ProfilerUnavailable,
)
from profilers.model import DevicePeaks, Profile
from profilers.process import CompletedCommand, run_command
from profilers.rocprof_argv import (
    hipcc_argv,
    rocprof_compute_profile_argv,
    rocprof_compute_version_argv,
    rocprofv3_counter_argv,
    rocprofv3_list_counters_argv,
    rocprofv3_trace_argv,
    rocprofv3_version_argv,
)
from profilers.rocprof_build import RocprofRun, build_profile
from profilers.rocprof_compute import (
    PMC_PERF,
    ROOFLINE,
    SYSINFO,
    find_workload_dir,
    looks_like_pmc_perf,
    read_pmc_perf,
    read_roofline,
    read_sysinfo,
)
from profilers.rocprof_csv import (
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
from profilers.rocprof_device import DeviceFacts, facts_from_agent, facts_from_rocpd, facts_from_sysinfo
from profilers.rocprof_dispatch import Dispatch
from profilers.rocprof_names import display_name
from profilers.rocprof_passes import plan_passes
from profilers.rocprof_rocpd import is_rocpd, read_rocpd

Format = Literal[
    "rocprofv3-kernel-trace",
    "rocprofv3-counter-collection",
    "rocprofv3-folder",
    "rocpd",
    "rocprof-v1",
    "rocprof-compute-pmc-perf",
    "rocprof-compute-workload",
]

HIP_SUFFIXES = (".hip", ".cpp", ".cc", ".cxx")
_TRACE_SUFFIX = "_kernel_trace.csv"
_COUNTER_SUFFIX = "_counter_collection.csv"
_AGENT_SUFFIX = "_agent_info.csv"
_VERSION = re.compile(r"(\d+\.\d+(?:\.\d+)?)")
_COUNTER_TOKEN = re.compile(r"\b([A-Z][A-Z0-9]*_[A-Za-z0-9_]+)\b")


# --------------------------------------------------------------------------- detection


def detect_format(path: Path) -> Format | None:
    """Which AMD output ``path`` is, from its content (None when it is none of them)."""
    if path.is_dir():
        if find_workload_dir(path) is not None:
            return "rocprof-compute-workload"
        if _v3_files(path, _TRACE_SUFFIX) or _v3_files(path, _COUNTER_SUFFIX):
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


def _v3_files(folder: Path, suffix: str) -> list[Path]:
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
            counters = _sibling(path, _COUNTER_SUFFIX, _TRACE_SUFFIX)
            files += [counters] if counters else []
        else:
            trace = kernel_trace or _sibling(path, _TRACE_SUFFIX, _COUNTER_SUFFIX)
            files = ([trace] if trace else []) + files
        agents = (
            agent_info
            or _sibling(path, _AGENT_SUFFIX, _TRACE_SUFFIX)
            or _sibling(path, _AGENT_SUFFIX, _COUNTER_SUFFIX)
        )
        run = read_rocprofv3(files, agent_info=agents, source=str(path))
    elif fmt == "rocprofv3-folder":
        files = _v3_files(path, _TRACE_SUFFIX) + _v3_files(path, _COUNTER_SUFFIX)
        agent_files = _v3_files(path, _AGENT_SUFFIX)
        run = read_rocprofv3(
            files, agent_info=agent_info or (agent_files[0] if agent_files else None), source=str(path)
        )
    elif fmt == "rocpd":
        data = read_rocpd(path)
        used = next((d.agent for d in data.dispatches if d.agent is not None), None)
        agent = next(
            (a for a in data.agents if str(a.absolute_index) == used), data.agents[0] if data.agents else None
        )
        facts = facts_from_rocpd(agent) if agent else None
        version = data.metadata.get("version") or data.metadata.get("schema_version")
        run = RocprofRun(
            tool="rocprofv3",
            source=str(path),
            dispatches=data.dispatches,
            tool_version=version,
            device=facts,
            notes=["read from a rocpd database (reader not yet verified on real rocpd files)"],
        )
    elif fmt == "rocprof-v1":
        run = read_rocprof_v1(path, kernel_trace=kernel_trace)
    elif fmt == "rocprof-compute-workload":
        run = read_rocprof_compute(path)
    else:
        run = read_rocprof_compute(path.parent, pmc_perf=path)
    if agent_info is not None and run.device is None and looks_like_v3_agent_info(read_header(agent_info)):
        run.device = _agent_facts(read_v3_agent_info(agent_info), run.dispatches)
    return build_profile(run, kernel_regex=kernel_regex)


# --------------------------------------------------------------------------- the backend


class RocprofProfiler:
    """AMD GPUs through rocprofv3 (and rocprof-compute on request).

    Args:
        formats: rocprofv3 output formats to write; perfagent reads the CSV. Add 'rocpd' to keep the
            SQLite database too (ROCm >= 7.0 only: older rocprofv3 rejects the choice).
        collect_counters: False runs the kernel-trace pass only (timing, launch configuration).
    """

    name = "rocprof"
    vendor = "amd"
    measures_time = True

    def __init__(self, *, formats: Sequence[str] = ("csv",), collect_counters: bool = True) -> None:
        self.formats = tuple(formats)
        self.collect_counters = collect_counters
        self._version: str | None = None
        self._version_probed = False

    # ----------------------------------------------------------------- probes

    def availability(self) -> str | None:
        """None when rocprofv3 is on PATH, else why not (hipcc is only needed for sources)."""
        if shutil.which("rocprofv3") is None:
            return "rocprofv3 not on PATH (install ROCm >= 6.2 or add /opt/rocm/bin to PATH)"
        return None

    def hipcc_availability(self) -> str | None:
        """None when hipcc is on PATH (needed to build .hip sources), else why not."""
        return None if shutil.which("hipcc") else "hipcc not on PATH (install ROCm's HIP SDK)"

    def compute_availability(self) -> str | None:
        """None when rocprof-compute is on PATH, else why not."""
        return None if shutil.which("rocprof-compute") else "rocprof-compute not on PATH"

    def version(self) -> str | None:
        """rocprofv3's version ('1.0.0'), or None when absent or unparseable (probed once)."""
        if not self._version_probed:
            self._version_probed = True
            if shutil.which("rocprofv3"):
                self._version = _probe_version(rocprofv3_version_argv())
        return self._version

    def compute_version(self) -> str | None:
        """rocprof-compute's version, or None."""
        return _probe_version(rocprof_compute_version_argv()) if shutil.which("rocprof-compute") else None

    # ----------------------------------------------------------------- reading

    def can_read(self, path: Path) -> bool:
        """True for a rocprofv3 CSV (by header), rocpd .db, v1 results.csv or rocprof-compute workload."""
        return detect_format(path) is not None

    def read(self, path: Path, *, kernel_regex: str | None = None) -> Profile:
        """Read an existing AMD profiler output (see ``read_rocprof``).

        Raises:
            BadReport: not a readable AMD output (exit code 2).
            NoKernelsProfiled: nothing matched ``kernel_regex``.
        """
        return read_rocprof(path, kernel_regex=kernel_regex)

    # ----------------------------------------------------------------- running

    def profile(self, request: ProfileRequest) -> Profile:
        """Build (hipcc, for a .hip/.cpp ``request.source``), trace, collect counters, read.

        ``request.command`` is the application argv; with a HIP ``source`` it holds the built program's
        arguments instead. ``request.arch`` is passed to hipcc as ``--offload-arch`` when it is a gfx
        target. ``launch_skip``/``launch_count`` are applied per kernel when reading.

        Raises:
            ProfilerUnavailable: rocprofv3 (or hipcc for a source) is missing.
            BuildFailed: hipcc failed.
            ApplicationFailed: the program failed under the kernel trace.
            CounterPermissionDenied: counters are restricted.
            NoKernelsProfiled: no kernel matched.
            ToolTimeout: a step ran past ``request.timeout_s``.
        """
        reason = self.availability()
        if reason:
            raise ProfilerUnavailable(
                reason, hint="run `perfagent doctor`; or read existing rocprof output files"
            )
        out = request.workdir / "rocprof"
        out.mkdir(parents=True, exist_ok=True)
        app = self._application(request)
        env = {**os.environ, **request.env}
        notes: list[str] = []

        trace = run_command(
            rocprofv3_trace_argv(app, output_dir=out / "trace", formats=self.formats),
            timeout_s=request.timeout_s,
            env=env,
        )
        _check(trace, "kernel trace")
        trace_files = _v3_files(out / "trace", _TRACE_SUFFIX)
        agent_files = _v3_files(out / "trace", _AGENT_SUFFIX)
        if not trace_files:
            raise NoKernelsProfiled(
                "rocprofv3 wrote no kernel trace: the program launched no GPU kernel",
                hint="check that the program runs a HIP kernel on an AMD GPU",
            )
        agent_info = agent_files[0] if agent_files else None
        files = list(trace_files)
        if self.collect_counters:
            files += self._counter_passes(app, out, request, agent_info, env, notes)
        run = read_rocprofv3(files, agent_info=agent_info, source=str(out))
        run.command = shlex.join(app)
        run.tool_version = self.version()
        run.notes = [*notes, *run.notes]
        run.dispatches = _skip_and_count(run.dispatches, request.launch_skip, request.launch_count)
        return build_profile(run, kernel_regex=request.kernel_regex)

    def profile_compute(
        self, request: ProfileRequest, *, name: str = "perfagent", roofline: bool = True
    ) -> Profile:
        """Run ``rocprof-compute profile`` (every panel, ~24 replays on MI300X) and read the workload.

        Raises:
            ProfilerUnavailable: rocprof-compute is missing.
            ApplicationFailed: the run failed.
        """
        reason = self.compute_availability()
        if reason:
            raise ProfilerUnavailable(reason, hint="install rocprofiler-compute, or use `--profiler rocprof`")
        app = self._application(request)
        path = request.workdir / "rocprof-compute" / name
        kernels = [request.kernel_regex] if request.kernel_regex else []
        result = run_command(
            rocprof_compute_profile_argv(app, name=name, path=path, kernels=kernels, roofline=roofline),
            timeout_s=request.timeout_s,
            env={**os.environ, **request.env},
        )
        _check(result, "rocprof-compute profile")
        profile = read_rocprof(path, kernel_regex=request.kernel_regex)
        return profile.model_copy(update={"command": shlex.join(app), "tool_version": self.compute_version()})

    def _application(self, request: ProfileRequest) -> list[str]:
        if request.source is not None and request.source.suffix.lower() in HIP_SUFFIXES:
            reason = self.hipcc_availability()
            if reason:
                raise ProfilerUnavailable(reason, hint="install ROCm, or pass the built program after `--`")
            binary = request.workdir / "build" / request.source.stem
            binary.parent.mkdir(parents=True, exist_ok=True)
            arch = request.arch if request.arch.startswith("gfx") else None
            build = run_command(
                hipcc_argv(request.source, binary, offload_arch=arch), timeout_s=min(request.timeout_s, 600.0)
            )
            if not build.ok:
                raise BuildFailed(
                    f"hipcc could not build {request.source.name}:\n{build.tail()}",
                    hint="fix the compile error above",
                )
            return [str(binary), *request.command]
        if not request.command:
            raise ProfilerFailed(
                "nothing to run: no command and no HIP source", hint="give `-- ./app args` or a .hip file"
            )
        return list(request.command)

    def _counter_passes(
        self,
        app: list[str],
        out: Path,
        request: ProfileRequest,
        agent_info: Path | None,
        env: dict[str, str],
        notes: list[str],
    ) -> list[Path]:
        agents = read_v3_agent_info(agent_info) if agent_info else []
        facts = facts_from_agent(agents[0]) if agents else None
        arch = facts.arch if facts else None
        mmap = rocprof_metric_map()
        counters = mmap.collect_for(arch)
        if not counters:
            notes.append(f"no counter list for architecture {arch or 'unknown'}: timing only")
            return []
        counters = self._supported(counters, notes)
        passes = plan_passes(counters, mmap.block_limits)
        files: list[Path] = []
        for number, group in enumerate(passes, start=1):
            folder = out / f"pass{number}"
            result = run_command(
                rocprofv3_counter_argv(
                    app,
                    group,
                    output_dir=folder,
                    prefix=f"pass{number}",
                    kernel_regex=request.kernel_regex,
                    formats=self.formats,
                ),
                timeout_s=request.timeout_s,
                env=env,
            )
            if not result.ok:
                if _permission_denied(result):
                    raise CounterPermissionDenied(
                        "rocprofv3 may not read the GPU performance counters",
                        hint="run as a user in the 'render'/'video' groups, or check /dev/kfd permissions",
                    )
                notes.append(f"counter pass {number} ({', '.join(group)}) failed: {result.tail(3)}")
                continue
            files += _v3_files(folder, _COUNTER_SUFFIX)
        notes.append(f"{len(counters)} counters collected in {len(passes)} replay passes (per-block limits)")
        return files

    def _supported(self, counters: list[str], notes: list[str]) -> list[str]:
        """Drop counters ``rocprofv3 --list-avail`` does not list (best effort: on any doubt keep all)."""
        try:
            result = run_command(rocprofv3_list_counters_argv(), timeout_s=120.0)
        except ProfilerFailed:
            return counters
        listed = set(_COUNTER_TOKEN.findall(result.stdout))
        if not result.ok or len(listed) < 20:
            return counters
        keep = [c for c in counters if c in listed or c.removesuffix("_sum") in listed]
        dropped = [c for c in counters if c not in keep]
        if dropped:
            notes.append(f"counters not offered by this GPU/ROCm and skipped: {', '.join(dropped)}")
        return keep


def _probe_version(argv: list[str]) -> str | None:
    try:
        result = run_command(argv, timeout_s=30.0)
    except (ProfilerUnavailable, ProfilerFailed):
        return None
    match = _VERSION.search(result.stdout + "\n" + result.stderr)
    return match.group(1) if match else None


def _permission_denied(result: CompletedCommand) -> bool:
    text = (result.stderr + result.stdout).lower()
    return "permission denied" in text and ("counter" in text or "kfd" in text or "perf" in text)


def _check(result: CompletedCommand, what: str) -> None:
    """Raise the right error for a failed profiler run."""
    if result.ok:
        return
    if _permission_denied(result):
        raise CounterPermissionDenied(
            f"{what}: permission denied on the GPU", hint="add the user to the 'render' and 'video' groups"
        )
    text = result.stderr + result.stdout
    if "Fatal error" in text or "rocprofv3: error" in text or "unrecognized arguments" in text:
        raise ProfilerFailed(
            f"{what} failed (exit {result.returncode}):\n{result.tail()}", hint="see the tool's message above"
        )
    raise ApplicationFailed(
        f"the program failed under {what} (exit {result.returncode}):\n{result.tail()}",
        hint="run it without the profiler to check it works",
        returncode=result.returncode,
    )


def _skip_and_count(dispatches: list[Dispatch], skip: int, count: int | None) -> list[Dispatch]:
    """Per kernel: drop its first ``skip`` dispatches and keep at most ``count`` after them."""
    if skip <= 0 and count is None:
        return dispatches
    seen: dict[str, int] = defaultdict(int)
    kept: list[Dispatch] = []
    for d in dispatches:
        name = display_name(d.kernel)
        k = seen[name]
        seen[name] += 1
        if k < skip:
            continue
        if count is not None and k >= skip + count:
            continue
        kept.append(d)
    return kept
