"""The AMD backend: rocprofv3 (kernel trace + counter passes) and rocprof-compute, behind ``Profiler``.

``RocprofProfiler.profile`` builds a HIP source with hipcc when given one, runs one rocprofv3 kernel-trace
pass for timing and one rocprofv3 counter pass per group of counters that fits the hardware
(``profilers.rocprof.passes``), joins the passes per kernel dispatch and returns the canonical
``Profile``. ``read`` accepts every AMD output perfagent knows (``profilers.rocprof.reader``).
"""

from __future__ import annotations

import re
import shlex
import shutil
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from knowledge.rocprof_metric_map import rocprof_metric_map
from profilers.base import ProfileRequest
from profilers.errors import (
    ApplicationFailed,
    BuildFailed,
    CounterPermissionDenied,
    NoKernelsProfiled,
    ProfilerFailed,
    ProfilerUnavailable,
)
from profilers.model import Profile
from profilers.process import CompletedCommand, run_command
from profilers.rocprof.argv import (
    hipcc_argv,
    rocprof_compute_profile_argv,
    rocprof_compute_version_argv,
    rocprofv3_counter_argv,
    rocprofv3_list_counters_argv,
    rocprofv3_trace_argv,
    rocprofv3_version_argv,
)
from profilers.rocprof.assemble import build_profile
from profilers.rocprof.csv import read_v3_agent_info
from profilers.rocprof.device import facts_from_agent
from profilers.rocprof.dispatch import Dispatch
from profilers.rocprof.names import display_name
from profilers.rocprof.passes import plan_passes
from profilers.rocprof.reader import (
    AGENT_SUFFIX,
    COUNTER_SUFFIX,
    TRACE_SUFFIX,
    detect_format,
    read_rocprof,
    read_rocprofv3,
    v3_files,
)

HIP_SUFFIXES = (".hip", ".cpp", ".cc", ".cxx")
_VERSION = re.compile(r"(\d+\.\d+(?:\.\d+)?)")
_COUNTER_TOKEN = re.compile(r"\b([A-Z][A-Z0-9]*_[A-Za-z0-9_]+)\b")


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
        trace_argv, env = request.launched(
            rocprofv3_trace_argv(app, output_dir=out / "trace", formats=self.formats)
        )
        notes: list[str] = []

        trace = run_command(trace_argv, timeout_s=request.timeout_s, env=env)
        _check(trace, "kernel trace")
        trace_files = v3_files(out / "trace", TRACE_SUFFIX)
        agent_files = v3_files(out / "trace", AGENT_SUFFIX)
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
        argv, env = request.launched(
            rocprof_compute_profile_argv(app, name=name, path=path, kernels=kernels, roofline=roofline)
        )
        result = run_command(argv, timeout_s=request.timeout_s, env=env)
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
            argv, _ = request.launched(
                rocprofv3_counter_argv(
                    app,
                    group,
                    output_dir=folder,
                    prefix=f"pass{number}",
                    kernel_regex=request.kernel_regex,
                    formats=self.formats,
                )
            )
            result = run_command(argv, timeout_s=request.timeout_s, env=env)
            if not result.ok:
                if _permission_denied(result):
                    raise CounterPermissionDenied(
                        "rocprofv3 may not read the GPU performance counters",
                        hint="run as a user in the 'render'/'video' groups, or check /dev/kfd permissions",
                    )
                notes.append(f"counter pass {number} ({', '.join(group)}) failed: {result.tail(3)}")
                continue
            files += v3_files(folder, COUNTER_SUFFIX)
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
