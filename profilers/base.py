"""The ``Profiler`` Protocol: the one interface every profiler backend implements.

A backend runs its tool (``profile``), reads the tool's files (``read``) and maps vendor metric
names to the canonical model in ``profilers.model``. Optional capabilities are flags, not more
abstract methods.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from pydantic import Field

from profilers.model import Frozen, MetricTier, Profile
from profilers.settings import TIMEOUTS

ClockControl = Literal["base", "none", "reset"]

WORKLOAD_NVTX_RANGE = "perfagent_forward"
"""The NVTX push/pop range perfagent's harness opens around the workload proper (each KernelBench
``forward()`` call, ``perfagent.workloads.run_spec``). Kernels launched outside it (input preparation,
model set-up, warm-up) belong to the harness, not to the workload."""


def workload_nvtx_include() -> str:
    """ncu's ``--nvtx-include`` expression for ``WORKLOAD_NVTX_RANGE``: ``<range>/`` selects a push/pop range
    of the default domain (a bare name would select a start/end range). Checked with ncu 2025.3.1 on an H100:
    of two kernels launched before the range and two inside it, only the two inside were profiled."""
    return f"{WORKLOAD_NVTX_RANGE}/"


class Launch(Frozen):
    """How a profiler run and the program under it are started: a command prefix and an environment.

    Candidate code profiled under ncu or rocprof runs inside a confinement (``perfagent.sandbox.profiled``
    builds one: a ``bwrap`` prefix, a scrubbed environment with a private ``$HOME``). The profiler goes
    inside with its target: ncu talks to the program over loopback, which a network namespace splits.
    """

    prefix: list[str] = Field(default_factory=list)
    """Prepended to the profiler's argv (``bwrap ... --``); empty: the profiler runs directly."""
    env: dict[str, str] | None = None
    """The whole environment of the run (None: this process's)."""
    note: str = ""
    """What the profile's notes say about how it ran (confined, or unconfined and why)."""


class Launcher(Protocol):
    """A policy for starting profiler runs: opened on the run's report folder, it gives the ``Launch``
    (``perfagent.sandbox.profiled.CANDIDATE_CODE``: the confinement of candidate code)."""

    def launch(self, workdir: Path) -> AbstractContextManager[Launch]:
        """The ``Launch`` of runs writing under ``workdir``, valid until the context exits."""
        ...


class ProfileRequest(Frozen):
    """What to profile and how."""

    command: list[str] = Field(default_factory=list)
    """The application's argv (empty for static analysis of a source file)."""
    source: Path | None = None
    """A kernel source file (static analysis, or to build the program first)."""
    workdir: Path
    """Folder for the tool's outputs (reports, logs, binaries)."""
    kernel_regex: str | None = None
    """Only kernels whose (demangled base) name matches this regular expression."""
    launch_skip: int = 0
    """Matching launches to skip before profiling."""
    launch_count: int | None = None
    """Matching launches to profile (None = all)."""
    nvtx_include: list[str] = Field(default_factory=list)
    """NVTX range filters (ncu ``--nvtx-include``)."""
    clock_control: ClockControl = "none"
    """ncu ``--clock-control``: 'none' keeps the GPU's own clocks so durations match normal runs."""
    full_set: bool = False
    """Collect the tool's full metric set instead of the targeted list (slower, many more passes)."""
    source_counters: bool = False
    """Collect per-source-line counters (needs a -lineinfo build; costs replay passes)."""
    tensor_counters: bool = True
    """Collect the tensor-pipe counters (False when the code certainly has no tensor-core instruction:
    they cost replay passes; see ``profilers.static.sass_scan``)."""
    metric_tiers: tuple[MetricTier, ...] = ("A", "B")
    """Counter tiers of a targeted run (``profilers.ncu.tiers``): 'A' = sections and speed-of-light, memory
    occupancy and FLOP metrics; 'B' = warp-stall reasons and scheduler state. Ignored with ``full_set``."""
    per_launch_config: bool = False
    """Apply ``launch_skip``/``launch_count`` to each launch configuration (ncu ``--filter-mode
    per-launch-config``): one representative launch of every matched kernel and configuration."""
    arch: str = "sm_90"
    """Target architecture for static analysis and builds."""
    timeout_s: float = TIMEOUTS.profile_s
    """Wall-clock limit for the whole tool run, s."""
    env: dict[str, str] = Field(default_factory=dict)
    """Extra environment variables for the application."""
    launch: Launch | None = None
    """How the profiler run is started (a confinement for candidate code); None: directly, our environment."""

    def launched(
        self, argv: Sequence[str], extra_env: Mapping[str, str] | None = None
    ) -> tuple[list[str], dict[str, str]]:
        """``argv`` (a profiler invocation of ``command``) and its environment, under ``launch``."""
        base = dict(os.environ) if self.launch is None or self.launch.env is None else dict(self.launch.env)
        prefix = self.launch.prefix if self.launch is not None else []
        return [*prefix, *argv], {**base, **(extra_env or {}), **self.env}


@runtime_checkable
class Profiler(Protocol):
    """A profiler backend.

    Attributes:
        name: registry name ('ncu', 'static', 'rocprof').
        vendor: 'nvidia', 'amd' or 'any'.
        measures_time: whether ``profile`` measures durations (False for static analysis).
    """

    name: str
    vendor: str
    measures_time: bool

    def availability(self) -> str | None:
        """Return None when the backend can run here, else the reason it cannot (one line)."""
        ...

    def version(self) -> str | None:
        """Return the tool's version string, or None when the tool is absent."""
        ...

    def profile(self, request: ProfileRequest) -> Profile:
        """Run the tool on ``request`` and return the canonical profile.

        Raises:
            ProfilerUnavailable: the tool cannot run here.
            CounterPermissionDenied: hardware counters are restricted.
            NoKernelsProfiled: nothing matched or nothing was launched.
            ApplicationFailed: the profiled program failed on its own.
            ToolTimeout: the run exceeded ``request.timeout_s``.
        """
        ...

    def can_read(self, path: Path) -> bool:
        """Return True when ``path`` looks like one of this tool's output files (cheap check)."""
        ...

    def read(self, path: Path, *, kernel_regex: str | None = None) -> Profile:
        """Read an existing output file of this tool.

        Raises:
            BadReport: the file is not a readable report (exit code 2).
        """
        ...
