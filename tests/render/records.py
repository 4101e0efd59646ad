"""Hand-built ``RunRecord``s for renderer tests.

These are perfagent's own model objects (a diagnosis as the classifier would produce it), not profiler
output: the renderers only read the models, so building them directly is the honest input. Numbers are
consistent with each other (H100 SXM peaks, bytes / duration = achieved bandwidth, ...).
"""

from __future__ import annotations

from perfagent.records import RunRecord
from profilers.model import (
    DeviceInfo,
    DevicePeaks,
    Evidence,
    Finding,
    KernelDiagnosis,
    KernelProfile,
    LaunchConfig,
    Metrics,
    Occupancy,
    Roofline,
    RooflinePoint,
    SkippedRule,
    SourceLine,
    ToolFinding,
)

H100_PEAKS = DevicePeaks(
    dram_bytes_per_s=3.35e12,
    l2_bytes_per_s=1.2e13,
    flops_per_s={"fp32": 6.69e13, "fp64": 3.35e13, "fp16": 1.34e14, "tensor": 9.89e14},
    source="knowledge:h100-sxm",
)

H100 = DeviceInfo(
    name="NVIDIA H100 80GB HBM3",
    vendor="nvidia",
    arch="sm_90",
    compute_capability="9.0",
    sm_count=132,
    sm_clock_hz=1.59e9,
    dram_clock_hz=2.6e9,
    l2_cache_bytes=50 * 2**20,
    max_shared_memory_per_sm_bytes=228 * 2**10,
    peaks=H100_PEAKS,
)

STENCIL_NAME = "void stencil_column<float>(float*, const float*, int, int)"
GEMM_NAME = "void gemm_tiled<float, 32>(const float*, const float*, float*, int)"
COALESCING_TITLE = "Global loads use 8 of 32 bytes per sector"
OCCUPANCY_TITLE = "Occupancy limited to 37.5 % by 128 registers/thread"
NOTE = "3 kernels with fewer than 1 % of the total time were left out (use --kernel to select them)."


def _stencil() -> KernelDiagnosis:
    duration = 48.2e-6
    dram_bytes = 1.4e8
    flops = 2.1e8
    bw = dram_bytes / duration
    profile = KernelProfile(
        name=STENCIL_NAME,
        base_name="stencil_column",
        invocations=100,
        total_duration_s=duration * 100,
        launch=LaunchConfig(
            grid=(128, 4096, 1),
            block=(32, 8, 1),
            grid_size=128 * 4096,
            block_size=256,
            registers_per_thread=32,
            shared_memory_static_bytes=0,
            shared_memory_dynamic_bytes=0,
            waves_per_sm=496.5,
        ),
        occupancy=Occupancy(
            theoretical_pct=100.0,
            achieved_pct=87.3,
            limiter=None,
            blocks_per_sm_limits={"registers": 8, "shared-memory": 32, "block-slots": 32, "warps": 8},
            max_warps_per_sm=64,
        ),
        metrics=Metrics(
            duration_s=duration,
            sm_throughput_pct=21.4,
            memory_throughput_pct=86.7,
            dram_throughput_pct=86.7,
            l2_throughput_pct=41.0,
            dram_bytes=dram_bytes,
            l2_bytes=4.6e8,
            flops={"fp32": flops},
            global_load_bytes_per_sector=8.0,
            global_store_bytes_per_sector=32.0,
            warp_stalls={"long_scoreboard": 18.2, "lg_throttle": 6.1, "wait": 1.3},
            l2_hit_rate_pct=51.0,
        ),
        device=H100,
        tool_findings=[
            ToolFinding(
                rule_id="UncoalescedGlobalAccess",
                title="Uncoalesced Global Accesses",
                message=(
                    "This kernel has uncoalesced global accesses resulting in a total of 3276800 excessive "
                    "sectors (75% of the total 4369066 sectors). Check the L2 Theoretical Sectors Global "
                    "Excessive table for the primary source locations."
                ),
                kind="optimization",
                estimated_speedup_pct=62.3,
                speedup_scope="global",
            ),
            ToolFinding(
                rule_id="SOLBottleneck",
                title="DRAM Throughput",
                message="Memory is more heavily utilized than Compute.",
                kind="info",
            ),
        ],
        source_lines=[
            SourceLine(file="stencil.cu", line=31, text="float left = in[(x - 1) * n + y];", samples=812)
        ],
        raw_metric_count=1642,
    )
    point = RooflinePoint(
        level="dram",
        precision="fp32",
        arithmetic_intensity=flops / dram_bytes,
        achieved_flops_per_s=flops / duration,
        achieved_bytes_per_s=bw,
        peak_flops_per_s=6.69e13,
        peak_bytes_per_s=3.35e12,
        ridge_intensity=6.69e13 / 3.35e12,
        bound="memory",
        attainable_flops_per_s=flops / dram_bytes * 3.35e12,
        fraction_of_roof=bw / 3.35e12,
    )
    sol = dram_bytes / 3.35e12
    coalescing = Finding(
        category="global-coalescing",
        severity="high",
        title=COALESCING_TITLE,
        explanation=(
            "Each warp's loads use 8 of the 32 bytes in every DRAM sector they fetch, so the kernel moves "
            "about 4× the bytes it needs; it is DRAM-bound, so fewer bytes is directly less time."
        ),
        evidence=[
            Evidence(
                metric="global_load_bytes_per_sector", value=8.0, threshold=16.0, comparison="<", unit="B"
            ),
            Evidence(metric="dram_throughput_pct", value=86.7, threshold=60.0, comparison=">", unit="%"),
            Evidence(metric="duration_s", value=duration, unit="s", note="per launch"),
        ],
        estimated_speedup=1.8,
        speedup_formula="DRAM bytes × 8/32 for loads, bounded by the load share of traffic (≈ 55 %)",
        recoverable_s=duration * 100 * (1 - 1 / 1.8),
        recoverable_share=0.362,
        transforms=["coalesce-access", "smem-tiling", "vectorize-access"],
        source_lines=[
            SourceLine(
                file="stencil.cu",
                line=28,
                text="float up = in[x * n + (y - 1)];",
                samples=1520,
                note="75 % excessive sectors",
            )
        ],
        rule="coalescing",
        tool_rules=["UncoalescedGlobalAccess"],
    )
    at_bound = Finding(
        category="dram-bandwidth",
        severity="info",
        title="At 86.7 % of DRAM peak; little headroom beyond moving fewer bytes",
        explanation="Achieved 2.9 TB/s of 3.35 TB/s; the speed of light for the bytes moved is 41.8 µs.",
        evidence=[
            Evidence(metric="dram_bytes_per_s", value=bw, threshold=0.8 * 3.35e12, comparison=">", unit="B/s")
        ],
        rule="dram-bandwidth",
    )
    return KernelDiagnosis(
        name=STENCIL_NAME,
        duration_s=duration,
        share_of_total=0.814,
        recoverable_s=coalescing.recoverable_s,
        findings=[coalescing, at_bound],
        skipped=[SkippedRule(rule="bank-conflicts", reason="shared-memory metrics not collected")],
        roofline=Roofline(
            points=[point],
            bound="memory",
            bounding_resource="dram",
            speed_of_light_s=sol,
            fraction_of_sol=sol / duration,
            headroom_s=duration - sol,
            peaks_source="knowledge:h100-sxm",
        ),
        profile=profile,
    )


def _gemm() -> KernelDiagnosis:
    duration = 1.1e-3
    flops = 2 * 2048.0**3
    dram_bytes = 1.0e8
    profile = KernelProfile(
        name=GEMM_NAME,
        base_name="gemm_tiled",
        launch=LaunchConfig(
            grid=(64, 64, 1),
            block=(32, 32, 1),
            registers_per_thread=128,
            shared_memory_static_bytes=8192,
            shared_memory_dynamic_bytes=0,
            waves_per_sm=31.0,
        ),
        occupancy=Occupancy(theoretical_pct=37.5, achieved_pct=31.2, limiter="registers"),
        metrics=Metrics(
            duration_s=duration, dram_bytes=dram_bytes, flops={"fp32": flops}, sm_throughput_pct=38.0
        ),
        device=H100,
    )
    point = RooflinePoint(
        level="dram",
        precision="fp32",
        arithmetic_intensity=flops / dram_bytes,
        achieved_flops_per_s=flops / duration,
        achieved_bytes_per_s=dram_bytes / duration,
        peak_flops_per_s=6.69e13,
        peak_bytes_per_s=3.35e12,
        ridge_intensity=6.69e13 / 3.35e12,
        bound="compute",
        attainable_flops_per_s=6.69e13,
        fraction_of_roof=flops / duration / 6.69e13,
    )
    sol = flops / 6.69e13
    finding = Finding(
        category="low-occupancy",
        severity="medium",
        title=OCCUPANCY_TITLE,
        explanation="128 registers per thread allow 2 blocks of 1024 threads... only 24 of 64 warps per SM.",
        evidence=[
            Evidence(metric="occupancy.achieved_pct", value=31.2, threshold=50.0, comparison="<", unit="%"),
            Evidence(
                metric="launch.registers_per_thread", value=128.0, threshold=64.0, comparison=">", unit=""
            ),
            Evidence(metric="occupancy.limiter", value="registers"),
        ],
        estimated_speedup=1.3,
        speedup_formula="latency hiding model",
        recoverable_s=duration * (1 - 1 / 1.3),
        recoverable_share=0.044,
        transforms=["reduce-register-pressure", "launch-config"],
        rule="occupancy",
    )
    return KernelDiagnosis(
        name=GEMM_NAME,
        duration_s=duration,
        share_of_total=0.186,
        recoverable_s=finding.recoverable_s,
        findings=[finding],
        roofline=Roofline(
            points=[point],
            bound="compute",
            bounding_resource="fp32",
            speed_of_light_s=sol,
            fraction_of_sol=sol / duration,
            headroom_s=duration - sol,
            peaks_source="knowledge:h100-sxm",
        ),
        profile=profile,
    )


def counters_record() -> RunRecord:
    """A two-kernel ncu diagnosis: a DRAM-bound stencil with a coalescing finding, then a GEMM."""
    return RunRecord(
        id="20250101-120000-abcd",
        created="2025-01-01T12:00:00+00:00",
        perfagent_version="0.1.0",
        target="examples/cuda/stencil.ncu-rep",
        tool="ncu",
        tool_version="2025.1.1",
        mode="counters",
        command="./stencil 4096",
        notes=[NOTE],
        kernels=[_stencil(), _gemm()],
    )


STATIC_NOTE = "static mode: compiled with nvcc -arch=sm_90 -Xptxas -v; no GPU was used."


def static_record() -> RunRecord:
    """A static (ptxas) record: resource usage only, no durations, no roofline."""
    profile = KernelProfile(
        name="void k<float>(float*)",
        base_name="k",
        launch=LaunchConfig(
            registers_per_thread=255, shared_memory_static_bytes=49152, local_memory_per_thread_bytes=64
        ),
        device=DeviceInfo(arch="sm_90", vendor="nvidia"),
    )
    finding = Finding(
        category="register-spills",
        severity="medium",
        title="ptxas reports 64 bytes of register spills per thread",
        explanation="The kernel uses all 255 registers and spills 64 bytes per thread to local memory.",
        evidence=[
            Evidence(
                metric="launch.local_memory_per_thread_bytes",
                value=64.0,
                threshold=0.0,
                comparison=">",
                unit="B",
            )
        ],
        transforms=["reduce-register-pressure"],
        rule="spills-static",
    )
    return RunRecord(
        created="2025-01-01T12:00:00+00:00",
        target="kernels/k.cu",
        tool="static",
        tool_version="ptxas 12.6",
        mode="static",
        notes=[STATIC_NOTE],
        kernels=[
            KernelDiagnosis(
                name="void k<float>(float*)",
                duration_s=None,
                findings=[finding],
                skipped=[SkippedRule(rule="dram-bandwidth", reason="needs hardware counters (static mode)")],
                profile=profile,
            )
        ],
    )


def copy_kernel_record() -> RunRecord:
    """The counters record plus a pure-copy kernel (DRAM traffic, no FLOPs) that the chart cannot place."""
    base = counters_record()
    duration = 20e-6
    moved = 6.0e7
    copy = KernelDiagnosis(
        name="void copy_kernel(float4*, const float4*, unsigned long)",
        duration_s=duration,
        share_of_total=0.003,
        roofline=Roofline(
            points=[
                RooflinePoint(
                    level="dram",
                    precision="fp32",
                    arithmetic_intensity=None,
                    achieved_flops_per_s=None,
                    achieved_bytes_per_s=moved / duration,
                    peak_flops_per_s=6.69e13,
                    peak_bytes_per_s=3.35e12,
                    ridge_intensity=6.69e13 / 3.35e12,
                    bound="memory",
                    attainable_flops_per_s=None,
                    fraction_of_roof=None,
                )
            ],
            bound="memory",
            bounding_resource="dram",
            speed_of_light_s=moved / 3.35e12,
            fraction_of_sol=moved / 3.35e12 / duration,
            headroom_s=duration - moved / 3.35e12,
        ),
        profile=KernelProfile(
            name="void copy_kernel(float4*, const float4*, unsigned long)",
            base_name="copy_kernel",
            metrics=Metrics(duration_s=duration, dram_bytes=moved),
            device=H100,
        ),
    )
    return base.model_copy(update={"kernels": [*base.kernels, copy]})


TIMING_NOTE = "ncu could not read performance counters (ERR_NVGPUCTRPERM); kernels were timed only."


def timing_only_record() -> RunRecord:
    """Durations without counters: no roofline, no counter findings."""
    profile = KernelProfile(
        name=STENCIL_NAME,
        base_name="stencil_column",
        launch=LaunchConfig(grid=(128, 4096, 1), block=(32, 8, 1)),
        metrics=Metrics(duration_s=48.2e-6),
        device=H100,
    )
    return RunRecord(
        created="2025-01-01T12:00:00+00:00",
        target="./stencil",
        tool="ncu",
        tool_version="2025.1.1",
        mode="timing-only",
        notes=[TIMING_NOTE],
        kernels=[KernelDiagnosis(name=STENCIL_NAME, duration_s=48.2e-6, share_of_total=1.0, profile=profile)],
    )
