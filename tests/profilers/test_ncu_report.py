"""The .ncu-rep reader on the real public reports in shared/fixtures/ncu-public (ncu.md section 3 check values)."""

from __future__ import annotations

from pathlib import Path

import pytest

from profilers.core_errors import ExitCode
from profilers.errors import BadReport, NoKernelsProfiled
from profilers.model import KernelProfile, Profile
from profilers.ncu.profiler import NcuProfiler
from profilers.ncu.report_reader import clean_markup, read_ncu_rep

pytest.importorskip("ncu_report", reason="the ncu-report package reads .ncu-rep files")

FIXTURES = Path(__file__).resolve().parents[2] / ".." / "shared" / "fixtures" / "ncu-public"
if not FIXTURES.is_dir():
    pytest.skip(f"shared ncu fixtures not found at {FIXTURES}", allow_module_level=True)

MEMCPY = FIXTURES / "a100_memcpyasync_matrixtransfer_pd1_ncu2023.3.1_full.ncu-rep"
MMA = FIXTURES / "a100_mmaptx_full_tensorcore_ncu2023.3.1_full.ncu-rep"
SGEMM = FIXTURES / "a10g_sgemm_4kernels_ncu2023.1.1_roofline.ncu-rep"
VEC_ADD = FIXTURES / "gtx1660s_vec_add_ncu2024.1.1_full.ncu-rep"


@pytest.fixture(scope="module")
def reports() -> dict[str, Profile]:
    return {p.name: read_ncu_rep(p) for p in (MEMCPY, MMA, SGEMM, VEC_ADD)}


def one(profile: Profile) -> KernelProfile:
    assert len(profile.kernels) == 1
    return profile.kernels[0]


@pytest.mark.parametrize(
    ("path", "kernels", "version"),
    [(MEMCPY, 1, "2023.3.1.0"), (MMA, 1, "2023.3.1.0"), (SGEMM, 4, "2023.1.1.0"), (VEC_ADD, 1, "2024.1.1.0")],
)
def test_every_fixture_loads(reports: dict[str, Profile], path: Path, kernels: int, version: str) -> None:
    profile = reports[path.name]
    assert profile.tool == "ncu"
    assert profile.mode == "counters"
    assert profile.source == str(path)
    assert len(profile.kernels) == kernels
    # the recording ncu's version (not the reader module's), and its command line
    assert profile.tool_version is not None and profile.tool_version.startswith(version)
    assert "(build " in profile.tool_version
    assert profile.command is not None and "ncu" in profile.command and " -o " in profile.command
    for kernel in profile.kernels:
        assert kernel.device.vendor == "nvidia"
        assert kernel.device.peaks.source == "report"
        assert kernel.metrics.duration_s is not None and kernel.metrics.duration_s > 0
        assert kernel.raw_metric_count is not None and kernel.raw_metric_count > 300


def test_sgemm_kernel_names_and_order(reports: dict[str, Profile]) -> None:
    kernels = reports[SGEMM.name].kernels
    assert [k.base_name for k in kernels] == [
        "one_blocktiling",
        "two_blocktiling",
        "vectorized_blocktiling",
        "warptiling",
    ]
    assert kernels[0].name.startswith("void one_blocktiling<(int)64, (int)64, (int)8, (int)8>(int, int, int")
    assert all(k.invocations == 1 and k.total_duration_s == k.metrics.duration_s for k in kernels)


def test_vec_add_check_values(reports: dict[str, Profile]) -> None:
    k = one(reports[VEC_ADD.name])
    m = k.metrics
    assert k.name == "vec_add(float *, float *, float *, int)"
    assert k.base_name == "vec_add"
    assert m.duration_s == pytest.approx(41.696e-6, rel=1e-9)
    assert k.launch.grid == (4096, 1, 1) and k.launch.block == (256, 1, 1)
    assert k.launch.grid_size == 4096 and k.launch.block_size == 256
    assert k.device.name == "NVIDIA GeForce GTX 1660 SUPER"
    assert k.device.compute_capability == "7.5" and k.device.arch == "sm_75"
    assert k.device.sm_count == 22
    assert m.dram_bytes is not None and m.duration_s is not None
    assert m.dram_bytes / m.duration_s == pytest.approx(297e9, rel=0.01)
    assert k.device.peaks.dram_bytes_per_s == pytest.approx(324e9, rel=0.01)
    # FP32 non-fused: one FADD per element, no FFMA; 25 GFLOP/s at an arithmetic intensity of 0.08
    assert m.flops["fp32"] == pytest.approx(2**20, rel=1e-4)
    assert m.flops["fp32"] / m.duration_s == pytest.approx(25e9, rel=0.02)
    assert m.flops["fp32"] / m.dram_bytes == pytest.approx(0.085, abs=0.005)
    assert "fp16" not in m.flops  # not in this report: absent, never 0
    titles = {(f.rule_id, f.title) for f in k.tool_findings}
    assert ("FPInstructions", "FP32 Non-Fused Instructions") in titles
    assert m.global_load_bytes_per_sector == 32.0
    assert m.global_load_sectors_per_request == pytest.approx(4.0)
    assert m.warp_stalls["long_scoreboard"] == pytest.approx(58.43, rel=1e-3)
    assert k.occupancy.theoretical_pct == 100.0 and k.occupancy.limiter is None
    assert k.occupancy.achieved_pct == pytest.approx(89.18, rel=1e-3)
    assert m.spill_instructions is None  # not collected by that run
    assert k.source_lines == []  # built without -lineinfo: PCs have no source lines


def test_a10g_sgemm_roofline_check_values(reports: dict[str, Profile]) -> None:
    kernels = reports[SGEMM.name].kernels
    achieved_tflops = [k.metrics.flops["fp32"] / k.metrics.duration_s / 1e12 for k in kernels]  # type: ignore[operator]
    assert achieved_tflops == pytest.approx([4.98, 7.24, 8.24, 9.65], rel=0.01)
    dram_ai = [k.metrics.flops["fp32"] / k.metrics.dram_bytes for k in kernels]  # type: ignore[operator]
    assert dram_ai == pytest.approx([104, 125, 144, 170], rel=0.02)
    for k in kernels:
        peaks = k.device.peaks
        assert peaks.flops_per_s["fp32"] == pytest.approx(26.9e12, rel=0.01)
        assert peaks.dram_bytes_per_s == pytest.approx(598e9, rel=0.01)
        assert peaks.dram_bytes_per_s is not None
        assert peaks.flops_per_s["fp32"] / peaks.dram_bytes_per_s == pytest.approx(45, rel=0.02)
        assert k.device.name == "NVIDIA A10G" and k.device.compute_capability == "8.6"


def test_roofline_set_report_leaves_uncollected_metrics_none(reports: dict[str, Profile]) -> None:
    k = reports[SGEMM.name].kernels[0]
    m = k.metrics
    # the roofline set has no occupancy-achieved, scheduler, stall or L2-byte metrics: None / empty, never 0
    assert k.occupancy.achieved_pct is None
    assert m.issue_slot_utilization_pct is None
    assert m.eligible_warps_per_scheduler is None
    assert m.warp_stalls == {}
    assert m.l2_bytes is None
    assert m.shared_bank_conflict_pct is None
    assert k.device.peaks.l2_bytes_per_s is None
    # ...but what it has is used: theoretical occupancy and its limiter, L1 bytes and peak
    assert k.occupancy.theoretical_pct == pytest.approx(66.67, rel=1e-3)
    assert k.occupancy.limiter == "registers"
    assert k.occupancy.blocks_per_sm_limits == {
        "registers": 2,
        "shared-memory": 3,
        "warps": 3,
        "block-slots": 16,
    }
    assert m.l1_bytes is not None and m.l1_bytes > 0
    assert k.device.peaks.l1_bytes_per_s == pytest.approx(13.47e12, rel=0.01)


def test_a100_peaks(reports: dict[str, Profile]) -> None:
    peaks = one(reports[MMA.name]).device.peaks
    assert peaks.flops_per_s["fp32"] == pytest.approx(19.2e12, rel=0.01)
    assert peaks.flops_per_s["fp64"] == pytest.approx(9.6e12, rel=0.01)
    assert peaks.dram_bytes_per_s == pytest.approx(1555e9, rel=0.01)


def test_memcpy_rules_occupancy_and_source(reports: dict[str, Profile]) -> None:
    k = one(reports[MEMCPY.name])
    findings = {(f.rule_id, f.title): f for f in k.tool_findings}
    sol = findings[("SOLBottleneck", "High Memory Throughput")]
    assert sol.kind == "optimization"
    assert "@section" not in sol.message and "Memory Workload Analysis section" in sol.message
    occupancy = findings[("AchievedOccupancy", "Achieved Occupancy")]
    assert occupancy.estimated_speedup_pct == pytest.approx(20.05, rel=1e-3)
    assert occupancy.speedup_scope == "global"
    assert findings[("IssueSlotUtilization", "Issue Slot Utilization")].speedup_scope == "local"
    assert ("MemoryCacheAccessPattern", "L1TEX Global Load Access Pattern") in findings
    assert k.occupancy.limiter == "shared-memory"  # 9 blocks by shared memory, the lowest limit
    assert k.metrics.memory_throughput_pct == pytest.approx(79.95, rel=1e-3)
    assert k.metrics.sm_throughput_pct == pytest.approx(6.61, rel=1e-3)
    assert k.launch.waves_per_sm == pytest.approx(0.1317, rel=1e-3)
    assert k.launch.shared_memory_dynamic_bytes == 16384
    assert k.metrics.atomic_instructions == 512
    # -lineinfo + SourceCounters: the hottest line carries ncu's CPIStall marker and most samples
    assert 0 < len(k.source_lines) <= 20
    hottest = k.source_lines[0]
    assert hottest.file.endswith("memCpyAsyncTest/main.cu") and hottest.line == 153
    assert hottest.samples is not None and hottest.samples > 10_000
    assert hottest.note is not None and "warp stalls" in hottest.note
    assert hottest.text is not None and hottest.text.startswith("for (int kStart")


def test_tensor_core_kernel(reports: dict[str, Profile]) -> None:
    k = one(reports[MMA.name])
    m = k.metrics
    assert m.pipe_utilization_pct["tensor"] == pytest.approx(98.95, rel=1e-3)
    assert m.shared_bank_conflict_pct == pytest.approx(100 / 3, rel=1e-3)
    assert m.shared_store_bank_conflicts == 10368
    # 2023.3 full set: no tensor op-path counters, but InstructionStats' per-opcode SASS counts:
    # 17.28e9 HMMA.16816.F32 (m16n8k16, 2 x 16 x 8 x 16 = 4096 FLOP each).
    assert m.flops["tensor"] == 17_280_000_000 * 4096
    marked = [s for s in k.source_lines if s.note]
    assert {s.line for s in marked} >= {151, 159}
    assert any("shared wavefronts are excessive" in (s.note or "") for s in marked)


def test_kernel_regex_filter(reports: dict[str, Profile]) -> None:
    profile = read_ncu_rep(SGEMM, kernel_regex="warp")
    assert [k.base_name for k in profile.kernels] == ["warptiling"]
    assert any("kept 1 of 4" in note for note in profile.notes)
    # the demangled name is searched too
    assert [k.base_name for k in read_ncu_rep(SGEMM, kernel_regex=r"\(int\)16,").kernels] == ["warptiling"]


def test_kernel_regex_matching_nothing_lists_kernels() -> None:
    with pytest.raises(NoKernelsProfiled) as info:
        read_ncu_rep(SGEMM, kernel_regex="^nope$")
    assert info.value.available == [
        "one_blocktiling",
        "two_blocktiling",
        "vectorized_blocktiling",
        "warptiling",
    ]
    assert "warptiling" in info.value.hint


def test_non_report_file_is_bad_report(tmp_path: Path) -> None:
    fake = tmp_path / "notes.ncu-rep"
    fake.write_text("this is a text file, not a report\n")
    with pytest.raises(BadReport, match="is not an Nsight Compute report") as info:
        read_ncu_rep(fake)
    assert info.value.exit_code == ExitCode.USAGE
    assert "--export" in info.value.hint


def test_missing_report_is_bad_report(tmp_path: Path) -> None:
    with pytest.raises(BadReport, match="does not exist"):
        read_ncu_rep(tmp_path / "absent.ncu-rep")


def test_profiler_read_dispatches(tmp_path: Path) -> None:
    profiler = NcuProfiler()
    assert profiler.can_read(VEC_ADD)
    assert profiler.can_read(Path("x.ncu-repz"))
    assert not profiler.can_read(tmp_path / "x.txt")
    assert profiler.read(VEC_ADD).kernels[0].base_name == "vec_add"


def test_clean_markup() -> None:
    text = "See @section:SourceCounters:Warp Stall Sampling (All Samples)@ and the @url:Kernel Profiling Guide:https://docs.nvidia.com/x#y@."
    assert clean_markup(text) == "See Warp Stall Sampling (All Samples) and the Kernel Profiling Guide."
