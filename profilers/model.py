"""perfagent's data model, at the bottom of the layers: the profile a profiler produces and the diagnosis of it.

Every profiler (ncu, rocprof, static) produces a ``Profile``; everything downstream (roofline,
classifier, renderers, TUI) reads only these names. Units are SI base units (seconds, bytes,
FLOP, hertz) or percent where the field name says ``_pct``. A metric the tool did not provide
is ``None`` — never 0 — so that a rule needing it can be skipped with the reason said.

The diagnosis models (``Finding``, ``Roofline``, ``KernelDiagnosis`` ...) follow; the saved ``RunRecord`` is
in ``perfagent.records``. This module imports nothing of the project: ``profilers`` builds on it (one
spelling of every core type: ``profilers.model.Profile``, never a second path).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "SCHEMA_VERSION",
    "CollectionMode",
    "DeviceInfo",
    "DevicePeaks",
    "Evidence",
    "Finding",
    "Frozen",
    "KernelDiagnosis",
    "KernelProfile",
    "LaunchConfig",
    "MemoryLevel",
    "MetricTier",
    "Metrics",
    "Occupancy",
    "Precision",
    "Profile",
    "Roofline",
    "RooflinePoint",
    "Severity",
    "SkippedRule",
    "SourceLine",
    "ToolFinding",
]

SCHEMA_VERSION = 1

Precision = Literal["fp64", "fp32", "fp16", "tensor"]
MemoryLevel = Literal["dram", "l2", "l1"]
CollectionMode = Literal["counters", "static", "timing-only"]
MetricTier = Literal["duration", "A", "B"]
"""How deeply a kernel was profiled (staged ncu profiling, ``profilers.ncu.tiers``): 'duration' = its launch
times only (stage 1), 'A' = speed of light, memory, occupancy and FLOP counters, 'B' = warp-stall reasons
and scheduler state."""


class Frozen(BaseModel):
    """Base for every boundary model: immutable, unknown keys rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class DevicePeaks(Frozen):
    """Peak rates of a device, used as roofline ceilings."""

    dram_bytes_per_s: float | None = None
    """Peak DRAM (HBM/GDDR) bandwidth, byte/s."""
    l2_bytes_per_s: float | None = None
    """Peak L2 bandwidth, byte/s."""
    l1_bytes_per_s: float | None = None
    """Peak L1/shared bandwidth summed over SMs, byte/s."""
    flops_per_s: dict[str, float] = Field(default_factory=dict)
    """Peak FLOP/s per precision (keys: fp64, fp32, fp16, tensor)."""
    source: str = "unknown"
    """Where the peaks came from: 'report' (measured at profiled clocks), 'knowledge:<gpu>' (datasheet) or
    'empirical:roofline.csv' (rocprof-compute's measured roofline benchmark)."""


class DeviceInfo(Frozen):
    """The device a kernel ran on (or was compiled for, in static mode)."""

    name: str | None = None
    """Marketing name, e.g. 'NVIDIA H100 80GB HBM3'."""
    vendor: Literal["nvidia", "amd", "unknown"] = "unknown"
    arch: str | None = None
    """Target architecture: 'sm_90', 'gfx942'."""
    compute_capability: str | None = None
    """NVIDIA compute capability, '9.0'."""
    sm_count: int | None = None
    """Streaming multiprocessors (NVIDIA) or compute units (AMD)."""
    sm_clock_hz: float | None = None
    """SM clock while profiling, Hz."""
    dram_clock_hz: float | None = None
    """Memory clock while profiling, Hz."""
    l2_cache_bytes: int | None = None
    """L2 size, byte."""
    max_shared_memory_per_sm_bytes: int | None = None
    """Shared memory (LDS) capacity per SM/CU, byte."""
    xcd_count: int | None = None
    """AMD accelerator complex dies the device spans (MI300X 8, MI300A 6; 1 for one MI250X GCD). Counters
    such as GRBM_GUI_ACTIVE are summed over them, and workgroups are dispatched round-robin across them,
    each with its own L2 (why block order matters: grid-swizzle). None when unknown or not AMD."""
    peaks: DevicePeaks = Field(default_factory=DevicePeaks)


class LaunchConfig(Frozen):
    """How a kernel was launched and what it asked of each SM."""

    grid: tuple[int, int, int] | None = None
    """Grid dimensions in blocks."""
    block: tuple[int, int, int] | None = None
    """Block dimensions in threads."""
    grid_size: int | None = None
    """Total blocks."""
    block_size: int | None = None
    """Threads per block."""
    registers_per_thread: int | None = None
    shared_memory_static_bytes: int | None = None
    """Static shared memory per block, byte."""
    shared_memory_dynamic_bytes: int | None = None
    """Dynamic shared memory per block, byte."""
    local_memory_per_thread_bytes: int | None = None
    """Stack frame / local memory per thread, byte (static mode)."""
    spill_store_bytes_per_thread: int | None = None
    """Register-spill stores in the compiled code, byte per thread (static mode: ptxas ``-v``; not executed traffic)."""
    spill_load_bytes_per_thread: int | None = None
    """Register-spill loads in the compiled code, byte per thread (static mode: ptxas ``-v``; not executed traffic)."""
    waves_per_sm: float | None = None
    """Grid size divided by how many blocks all SMs hold at once."""


class Occupancy(Frozen):
    """Theoretical and achieved occupancy and what limits it."""

    theoretical_pct: float | None = None
    """Theoretical active warps per SM as % of the hardware maximum."""
    achieved_pct: float | None = None
    """Measured active warps per SM as % of the hardware maximum."""
    limiter: str | None = None
    """What bounds theoretical occupancy: 'registers', 'shared-memory', 'block-slots', 'warps', or None."""
    blocks_per_sm_limits: dict[str, int] = Field(default_factory=dict)
    """Blocks per SM each resource allows (keys: registers, shared-memory, block-slots, warps)."""
    max_warps_per_sm: int | None = None
    """Hardware maximum resident warps per SM."""


class Metrics(Frozen):
    """Canonical metrics of one kernel (aggregated over its profiled launches)."""

    duration_s: float | None = None
    """Kernel duration, s (as measured by the profiler, under its clock/cache control)."""
    sm_throughput_pct: float | None = None
    """Compute (SM) throughput, % of peak (ncu Speed of Light)."""
    memory_throughput_pct: float | None = None
    """Memory throughput, % of peak: the busiest of DRAM, L2, L1 (ncu Speed of Light)."""
    dram_throughput_pct: float | None = None
    l1_throughput_pct: float | None = None
    l2_throughput_pct: float | None = None
    dram_bytes: float | None = None
    """Bytes read + written to DRAM, byte."""
    l2_bytes: float | None = None
    """Bytes moved between L2 and L1 (lts2xbar traffic), byte."""
    l1_bytes: float | None = None
    """Bytes moved between L1 and the SM's load/store unit, byte."""
    flops: dict[str, float] = Field(default_factory=dict)
    """Floating-point operations per precision (fp64, fp32, fp16, tensor), FLOP. Absent key = not measured."""
    issue_slot_utilization_pct: float | None = None
    """Cycles in which a scheduler issued an instruction, % of active cycles."""
    eligible_warps_per_scheduler: float | None = None
    active_warps_per_scheduler: float | None = None
    cycles_per_issued_instruction: float | None = None
    """Average warp latency per issued instruction (CPI), cycle."""
    warp_stalls: dict[str, float] = Field(default_factory=dict)
    """Cycles each warp spends stalled per issued instruction, by reason (long_scoreboard, barrier, ...)."""
    pipe_utilization_pct: dict[str, float] = Field(default_factory=dict)
    """Busiest execution pipes, % of peak (fma, alu, fp64, tensor, lsu, ...)."""
    global_load_bytes_per_sector: float | None = None
    """Useful bytes per 32-byte sector for global loads (32 = fully coalesced), byte."""
    global_store_bytes_per_sector: float | None = None
    global_load_sectors: float | None = None
    """32-byte sectors moved by global loads (L1 to L2 requests), count."""
    global_store_sectors: float | None = None
    """32-byte sectors moved by global stores, count."""
    global_load_sectors_per_request: float | None = None
    """Sectors per global load request (older ncu versions: 4 = ideal for 4-byte accesses)."""
    shared_load_requests: float | None = None
    shared_store_requests: float | None = None
    shared_load_wavefronts: float | None = None
    shared_store_wavefronts: float | None = None
    shared_load_bank_conflicts: float | None = None
    shared_store_bank_conflicts: float | None = None
    shared_bank_conflict_pct: float | None = None
    """Bank-conflict wavefronts as % of all shared wavefronts (ncu's SharedMemoryConflicts measure).
    AMD: LDS bank-conflict cycles as % of LDS active cycles (SQ_LDS_BANK_CONFLICT / SQ_LDS_IDX_ACTIVE)."""
    threads_per_instruction: float | None = None
    """Average active threads per executed warp instruction (32 = no divergence; AMD wave64: 64, VALU only)."""
    predicated_threads_per_instruction: float | None = None
    """As above, counting only threads whose predicate is on."""
    local_load_bytes: float | None = None
    """Local-memory (spill/stack) load traffic, byte."""
    local_store_bytes: float | None = None
    spill_instructions: float | None = None
    """SASS instructions executed for register spilling."""
    atomic_instructions: float | None = None
    """Global atomic/reduction instructions executed (warp level)."""
    atomic_latency_cycles: float | None = None
    """Mean latency of the atomics L2 forwards to memory, cycle (AMD MI300+: TCC_EA0_ATOMIC_LEVEL_sum /
    TCC_EA0_ATOMIC_sum; IntelliPerf treats > 1000 as contention). None on NVIDIA and on MI200."""
    l1_hit_rate_pct: float | None = None
    l2_hit_rate_pct: float | None = None
    instructions_executed: float | None = None
    """Warp-level instructions executed."""
    sm_active_cycles: float | None = None
    elapsed_cycles: float | None = None


class ToolFinding(Frozen):
    """One of the profiler's own rule results (ncu guided analysis), kept as secondary evidence."""

    rule_id: str
    title: str
    message: str = ""
    kind: Literal["optimization", "warning", "info", "error"] = "info"
    estimated_speedup_pct: float | None = None
    """The tool's own estimate, % of kernel time."""
    speedup_scope: Literal["local", "global"] | None = None


class SourceLine(Frozen):
    """A source line with profiler attribution."""

    file: str
    line: int
    text: str | None = None
    samples: float | None = None
    """Warp-state samples attributed to the line (hot-ness)."""
    note: str | None = None
    """Why it is marked (e.g. the profiler's source marker message)."""


class KernelProfile(Frozen):
    """Everything measured (or derived statically) about one kernel."""

    name: str
    """Demangled name with signature when known."""
    base_name: str
    """Function name without parameters or templates."""
    invocations: int = 1
    """Profiled launches aggregated into this entry."""
    total_duration_s: float | None = None
    """Summed duration of all aggregated launches, s (metrics.duration_s is the per-launch mean)."""
    launch: LaunchConfig = Field(default_factory=LaunchConfig)
    occupancy: Occupancy = Field(default_factory=Occupancy)
    metrics: Metrics = Field(default_factory=Metrics)
    device: DeviceInfo = Field(default_factory=DeviceInfo)
    tool_findings: list[ToolFinding] = Field(default_factory=list)
    source_lines: list[SourceLine] = Field(default_factory=list)
    raw_metric_count: int | None = None
    """How many raw metrics the tool reported for this kernel."""
    tiers: list[MetricTier] = Field(default_factory=list)
    """Metric tiers collected for this kernel (staged profiling); empty = whatever the report holds (a
    recorded report, a one-run targeted or full profile), read as every tier."""
    tier_reason: str | None = None
    """Why this kernel got these tiers, in words (e.g. 'not profiled in depth (0.4 % of GPU time)')."""
    harness: bool = False
    """Launched by perfagent's harness outside the workload's NVTX range (``WORKLOAD_NVTX_RANGE``: input
    preparation, set-up, warm-up), not by the workload: listed, never diagnosed or ranked."""


class Profile(Frozen):
    """A profiling session: one or more kernels measured by one tool."""

    schema_version: int = SCHEMA_VERSION
    tool: str
    """'ncu', 'rocprofv3', 'rocprof-compute', 'static'."""
    tool_version: str | None = None
    """Version of the tool that recorded the data (not of the reader)."""
    mode: CollectionMode = "counters"
    """'counters' (hardware counters), 'static' (compiler resource usage only), 'timing-only'."""
    source: str
    """Report path or command that produced the data."""
    command: str | None = None
    """The command line recorded in the report, when known."""
    kernels: list[KernelProfile] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    """Plain-language remarks every output must show (fallbacks, skipped kernels, dropped dispatches)."""


Severity = Literal["high", "medium", "low", "info"]


class Evidence(Frozen):
    """One measured fact behind a finding."""

    metric: str
    """Canonical metric name (see ``Metrics``) or a derived quantity."""
    value: float | str | None
    threshold: float | None = None
    """The value the rule compares against."""
    comparison: str | None = None
    """How value relates to threshold: '<', '<=', '>', '>='."""
    unit: str = ""
    note: str | None = None


class Finding(Frozen):
    """One diagnosed problem (or an at-its-bound statement) of one kernel."""

    category: str
    """Bottleneck taxonomy id (knowledge/data/taxonomy.toml)."""
    severity: Severity
    title: str
    explanation: str
    """Plain words with the numbers in."""
    evidence: list[Evidence] = Field(default_factory=list)
    estimated_speedup: float | None = None
    """ESTIMATE of the kernel's speed-up if this is fixed (x), by ``speedup_formula``. None when not estimable."""
    speedup_formula: str | None = None
    """How ``estimated_speedup`` was computed, so that readers can judge it."""
    recoverable_s: float | None = None
    """ESTIMATE: kernel time this could save, s = duration x (1 - 1/estimated_speedup)."""
    recoverable_share: float | None = None
    """ESTIMATE: share of the whole profile's time this could save (ranks findings across kernels)."""
    transforms: list[str] = Field(default_factory=list)
    """Transform catalog ids, best first."""
    source_lines: list[SourceLine] = Field(default_factory=list)
    rule: str
    """The classifier rule that produced this finding."""
    tool_rules: list[str] = Field(default_factory=list)
    """The profiler's own rules that agree (secondary evidence)."""


class SkippedRule(Frozen):
    """A classifier rule that could not run, and why (usually a missing metric)."""

    rule: str
    reason: str


class RooflinePoint(Frozen):
    """A kernel placed on one roofline (one memory level, one precision)."""

    level: Literal["dram", "l2", "l1"]
    precision: str
    arithmetic_intensity: float | None
    """FLOP per byte moved at this level."""
    achieved_flops_per_s: float | None
    achieved_bytes_per_s: float | None
    peak_flops_per_s: float | None
    peak_bytes_per_s: float | None
    ridge_intensity: float | None
    """Intensity where the memory roof meets the compute roof, FLOP/byte."""
    bound: Literal["memory", "compute"] | None
    """Which roof the kernel sits under at this level."""
    attainable_flops_per_s: float | None
    """min(peak FLOP/s, intensity x peak B/s)."""
    fraction_of_roof: float | None
    """Achieved / attainable (0..1)."""


class Roofline(Frozen):
    """Speed-of-light summary of a kernel."""

    points: list[RooflinePoint] = Field(default_factory=list)
    bound: Literal["memory", "compute", "unknown"] = "unknown"
    bounding_resource: str | None = None
    """What the speed of light is set by: 'dram', 'l2', 'l1', 'fp32', 'tensor', ..."""
    speed_of_light_s: float | None = None
    """max(FLOP / peak FLOP/s, bytes / peak B/s) over levels and precisions, s."""
    fraction_of_sol: float | None = None
    """speed_of_light_s / duration (1.0 = at the roofline)."""
    headroom_s: float | None = None
    """duration - speed_of_light_s, s."""
    floors_s: dict[str, float] = Field(default_factory=dict)
    """Lower bound on the time from each resource alone (bytes / peak B/s per level, FLOP / peak per precision), s."""
    peaks_source: str = "unknown"


class KernelDiagnosis(Frozen):
    """One kernel with its roofline and ranked findings."""

    name: str
    duration_s: float | None
    share_of_total: float | None = None
    """This kernel's share of the summed kernel time (None without durations)."""
    recoverable_s: float | None = None
    """ESTIMATE: best finding's recoverable time, s."""
    findings: list[Finding] = Field(default_factory=list)
    skipped: list[SkippedRule] = Field(default_factory=list)
    roofline: Roofline | None = None
    profile: KernelProfile
