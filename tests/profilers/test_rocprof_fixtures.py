"""The AMD readers on the REAL rocprof fixtures in ../shared/fixtures/rocprof (provenance: SOURCES.md there).

Expected numbers are either the derived values SOURCES.md documents or recomputed here from the file with
the csv module, independently of the reader. Where a test needs a rocprof-style folder or file name, the
real file is copied byte for byte into a temporary folder under the name the tool would have written.
"""

from __future__ import annotations

import csv
import shutil
import statistics
from pathlib import Path

import pytest

from profilers.errors import BadReport, NoKernelsProfiled
from profilers.model import Profile
from profilers.rocprof.compute import read_pmc_perf, read_roofline, read_roofline_peaks, read_sysinfo
from profilers.rocprof.metrics import evaluate
from profilers.rocprof.profiler import RocprofProfiler
from profilers.rocprof.reader import detect_format, read_rocprof

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "rocprof"
if not FIXTURES.is_dir():
    pytest.skip(
        f"shared rocprof fixtures not found at {FIXTURES} (../shared is absent)", allow_module_level=True
    )

MI300A_TRACE = FIXTURES / "rocprofv3_mi300a_kernel_trace.csv"
GFX950_LDS = FIXTURES / "rocprofv3_gfx950_lds_conflict_counter_collection.csv"
GFX950_AGENTS = FIXTURES / "rocprofv3_gfx950_agent_info.csv"
DOCS_TRACE = FIXTURES / "rocprofv3_sdk_docs_kernel_trace.csv"
DOCS_COUNTERS = FIXTURES / "rocprofv3_sdk_docs_counter_collection.csv"
MI300X_PMC = FIXTURES / "rocprof_compute_mi300x_vcopy_pmc_perf.csv"
MI300X_SYSINFO = FIXTURES / "rocprof_compute_mi300x_vcopy_sysinfo.csv"
MI200_ROOFLINE = FIXTURES / "rocprof_compute_mi200_roofline.csv"
V1_RESULTS = FIXTURES / "rocprofv1_mi250x_results.csv"
V1_DATA = FIXTURES / "rocprofv1_mi250x_data_movement.csv"


def alone(tmp_path: Path, source: Path, name: str | None = None) -> Path:
    """A byte-for-byte copy of ``source`` in a folder of its own (no sibling files to pick up)."""
    folder = tmp_path / source.stem
    folder.mkdir()
    target = folder / (name or source.name)
    shutil.copyfile(source, target)
    return target


def kernel(profile: Profile, base: str):  # type: ignore[no-untyped-def]
    return next(k for k in profile.kernels if k.base_name == base)


# --------------------------------------------------------------------------- every fixture


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        (MI300A_TRACE, "rocprofv3-kernel-trace"),
        (DOCS_TRACE, "rocprofv3-kernel-trace"),
        (GFX950_LDS, "rocprofv3-counter-collection"),
        (DOCS_COUNTERS, "rocprofv3-counter-collection"),
        (MI300X_PMC, "rocprof-compute-pmc-perf"),
        (V1_RESULTS, "rocprof-v1"),
        (V1_DATA, "rocprof-v1"),
        (MI300X_SYSINFO, None),
        (MI200_ROOFLINE, None),
        (GFX950_AGENTS, None),
    ],
    ids=lambda v: v.name if isinstance(v, Path) else str(v),
)
def test_format_detected_by_content(path: Path, fmt: str | None) -> None:
    assert detect_format(path) == fmt
    assert RocprofProfiler().can_read(path) is (fmt is not None)


@pytest.mark.parametrize(
    "path",
    [MI300A_TRACE, DOCS_TRACE, GFX950_LDS, DOCS_COUNTERS, MI300X_PMC, V1_RESULTS, V1_DATA],
    ids=lambda p: p.name,
)
def test_every_profile_fixture_reads(path: Path, tmp_path: Path) -> None:
    profile = RocprofProfiler().read(alone(tmp_path, path))
    assert profile.kernels
    for k in profile.kernels:
        assert k.device.vendor == "amd"
        assert k.invocations >= 1
        assert " (.kd)" not in k.name and "[clone .kd]" not in k.name and not k.name.endswith(".kd")
    # The Profile is a boundary object: it must round-trip through JSON.
    assert Profile.model_validate_json(profile.model_dump_json()) == profile


def test_non_amd_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(BadReport):
        read_rocprof(MI300X_SYSINFO)
    with pytest.raises(BadReport):
        read_rocprof(GFX950_AGENTS)
    assert not RocprofProfiler().can_read(tmp_path)


# --------------------------------------------------------------------------- MI300A kernel trace


def test_mi300a_warmup_dispatch_dropped_with_note(tmp_path: Path) -> None:
    rows = list(csv.DictReader(MI300A_TRACE.open()))
    durations = [int(r["End_Timestamp"]) - int(r["Start_Timestamp"]) for r in rows]
    assert durations == [8292, 5528, 5488]  # the file: one kernel, three identical dispatches

    profile = read_rocprof(alone(tmp_path, MI300A_TRACE))
    assert profile.tool == "rocprofv3" and profile.mode == "timing-only"
    [vec] = profile.kernels
    assert vec.name == "vecCopy(double*, double*, double*, int, int)"
    assert vec.base_name == "vecCopy"
    assert vec.invocations == 2
    assert vec.metrics.duration_s == pytest.approx(5508e-9)  # median of 5528 and 5488 ns
    assert vec.total_duration_s == pytest.approx(11016e-9)
    assert (
        "vecCopy: dropped 1 warm-up dispatch of 3 (first took 8.29 µs vs median 5.51 µs of the rest)"
        in profile.notes
    )
    assert vec.launch.block == (256, 1, 1) and vec.launch.grid == (4096, 1, 1)  # 1,048,576 work-items / 256
    assert vec.launch.registers_per_thread == 4
    assert vec.occupancy.theoretical_pct == 100.0  # 4 + 4 VGPRs, 256-thread workgroups, no LDS


def test_sdk_docs_trace_old_schema_keeps_every_dispatch(tmp_path: Path) -> None:
    profile = read_rocprof(alone(tmp_path, DOCS_TRACE))
    addition = kernel(profile, "addition_kernel")
    # 48744, 100895, 130526, 133341 ns: the first is the FASTEST, so nothing is dropped.
    assert addition.invocations == 4
    assert addition.metrics.duration_s == pytest.approx(
        statistics.median([48744, 100895, 130526, 133341]) * 1e-9
    )
    assert kernel(profile, "subtract_kernel").invocations == 2
    assert kernel(profile, "multiply_kernel").metrics.duration_s == pytest.approx(139563e-9)
    assert not [n for n in profile.notes if "dropped" in n]
    assert addition.launch.block == (64, 1, 1) and addition.launch.grid == (16, 1024, 1)


# --------------------------------------------------------------------------- gfx950 LDS conflicts


def test_gfx950_lds_conflicts_only_for_micro_tk(tmp_path: Path) -> None:
    path = alone(tmp_path, GFX950_LDS, "lds_conflict_counter_collection.csv")
    shutil.copyfile(GFX950_AGENTS, path.with_name("lds_conflict_agent_info.csv"))
    profile = read_rocprof(path)
    assert [k.base_name for k in profile.kernels] == [
        "vectorized_elementwise_kernel",
        "__amd_rocclr_copyBuffer",
        "micro_tk",
    ]
    micro = kernel(profile, "micro_tk")
    # SQ_LDS_BANK_CONFLICT = 60 cycles, SQ_INSTS_LDS = 1, no SQ_LDS_IDX_ACTIVE: the estimating alternative
    # takes LDS active cycles as 60 + 2 * 1 -> 100 * 60 / 62.
    assert micro.metrics.shared_bank_conflict_pct == pytest.approx(100 * 60 / 62)
    assert micro.metrics.shared_bank_conflict_pct > 0
    for other in ("vectorized_elementwise_kernel", "__amd_rocclr_copyBuffer"):
        assert kernel(profile, other).metrics.shared_bank_conflict_pct == 0.0
    assert any("estimated without SQ_LDS_IDX_ACTIVE" in n and "(micro_tk)" in n for n in profile.notes)
    assert any("__amd_rocclr_copyBuffer" in n and "runtime" in n for n in profile.notes)
    assert [f.rule_id for f in micro.tool_findings] == ["metrix.lds_bank_conflicts"]
    assert micro.metrics.duration_s == pytest.approx((8543927507437907 - 8543927507436108) * 1e-9)


def test_gfx950_agent_info_identifies_mi355x(tmp_path: Path) -> None:
    profile = read_rocprof(GFX950_LDS, agent_info=GFX950_AGENTS)
    device = profile.kernels[0].device
    assert device.arch == "gfx950"
    assert device.sm_count == 256 and device.xcd_count == 8
    assert device.sm_clock_hz == 2400e6
    assert device.max_shared_memory_per_sm_bytes == 160 * 1024
    assert device.name == "AMD Instinct MI355X"
    assert device.peaks.source == "knowledge:mi355x"
    assert device.peaks.dram_bytes_per_s == 8000e9
    assert any("identified as AMD Instinct MI355X from gfx950, 256 CUs, 2400 MHz" in n for n in profile.notes)


def test_kernel_regex_filters_and_reports_what_exists() -> None:
    profile = read_rocprof(GFX950_LDS, kernel_regex="micro")
    assert [k.base_name for k in profile.kernels] == ["micro_tk"]
    with pytest.raises(NoKernelsProfiled) as info:
        read_rocprof(GFX950_LDS, kernel_regex="^nothing$")
    assert "micro_tk" in info.value.available


# --------------------------------------------------------------------------- old counter schema + join


def test_sdk_docs_counter_collection_old_schema(tmp_path: Path) -> None:
    profile = read_rocprof(alone(tmp_path, DOCS_COUNTERS))
    addition = kernel(profile, "addition_kernel")
    assert addition.invocations == 4
    assert addition.metrics.duration_s is None  # the 2024 schema has no timestamps
    assert addition.raw_metric_count == 1  # SQ_WAVES only
    assert addition.launch.block_size == 64 and addition.launch.grid_size == 1048576 // 64
    assert addition.launch.registers_per_thread == 8


def test_same_prefix_trace_and_counters_are_joined_by_dispatch_id() -> None:
    # The two docs files share the 'rocprofv3_sdk_docs' prefix, as one rocprofv3 run's files do; their
    # dispatch ids 1..13 carry the same kernel names in both.
    profile = read_rocprof(DOCS_TRACE)
    addition = kernel(profile, "addition_kernel")
    assert addition.invocations == 4
    assert addition.metrics.duration_s is not None and addition.raw_metric_count == 1
    assert any("joined per dispatch" in n for n in profile.notes)


# --------------------------------------------------------------------------- rocprof-compute MI300X


def test_mi300x_dispatch0_matches_documented_values() -> None:
    first = read_pmc_perf(MI300X_PMC)[0]
    assert first.kernel == "vecCopy(double*, double*, double*, int, int) (.kd)"
    assert first.duration_ns == 16160
    info = read_sysinfo(MI300X_SYSINFO)
    ev = evaluate(
        first.counters,
        {
            "duration_ns": 16160,
            "sclk_mhz": info.cur_sclk_mhz,
            "cu_count": info.cu_per_gpu,
            "num_xcd": info.num_xcd,
            "max_waves_per_cu": info.max_waves_per_cu,
        },
        arch="gfx942",
    )
    assert ev.values["l2_hit_rate_pct"] == pytest.approx(33.50, abs=0.005)
    assert ev.values["l1_hit_rate_pct"] == pytest.approx(62.5)
    assert ev.values["hbm_read_bytes"] == 8_404_160
    assert ev.values["hbm_write_bytes"] == 8_388_608
    assert ev.values["coalescing_pct"] == pytest.approx(25.0)
    assert ev.values["shared_bank_conflict_pct"] == 0.0  # SQ_LDS_* all 0
    assert ev.values["l2_bytes"] == 16 * 1024 * 1024  # 65,536 x 128 B reads + 131,072 x 64 B writes
    # 4 x SQ_WAVE_CYCLES / (16160 ns x 2100 MHz) / (32 x 304)
    assert ev.values["achieved_occupancy_pct"] == pytest.approx(100 * 4 * 37852719 / 33936 / (32 * 304))


def test_mi300x_workload_folder(tmp_path: Path) -> None:
    workload = tmp_path / "workloads" / "path" / "MI300X_A1"
    workload.mkdir(parents=True)
    shutil.copyfile(MI300X_PMC, workload / "pmc_perf.csv")
    shutil.copyfile(MI300X_SYSINFO, workload / "sysinfo.csv")
    profiler = RocprofProfiler()
    assert profiler.can_read(workload) and profiler.can_read(workload.parent)
    profile = profiler.read(workload.parent)
    assert profile.tool == "rocprof-compute"
    assert profile.command == "./tests/vcopy -n 1048576 -b 256 -i 3"
    assert profile.tool_version == "2 (ROCm 6.2.0-13611)"
    [vec] = profile.kernels
    assert vec.base_name == "vecCopy" and vec.invocations == 3
    assert vec.metrics.duration_s == pytest.approx(14640e-9)  # median of 16160, 14640, 13800 ns
    rows = list(csv.DictReader(MI300X_PMC.open()))

    def hbm(r: dict[str, str]) -> float:
        bubble, rd, rd32 = (
            float(r[c]) for c in ("TCC_BUBBLE_sum", "TCC_EA0_RDREQ_sum", "TCC_EA0_RDREQ_32B_sum")
        )
        wr, wr64 = float(r["TCC_EA0_WRREQ_sum"]), float(r["TCC_EA0_WRREQ_64B_sum"])
        return 128 * bubble + 64 * (rd - bubble - rd32) + 32 * rd32 + 64 * wr64 + 32 * (wr - wr64)

    assert vec.metrics.dram_bytes == pytest.approx(statistics.fmean(hbm(r) for r in rows))
    hits = sum(float(r["TCC_HIT_sum"]) for r in rows)
    misses = sum(float(r["TCC_MISS_sum"]) for r in rows)
    assert vec.metrics.l2_hit_rate_pct == pytest.approx(100 * hits / (hits + misses))
    assert vec.metrics.l1_hit_rate_pct == pytest.approx(62.5)
    assert vec.metrics.flops == {"fp64": 0.0, "fp32": 0.0, "fp16": 0.0, "tensor": 0.0}
    assert vec.metrics.atomic_instructions == 0.0
    assert vec.metrics.atomic_latency_cycles is None  # no atomics reached the fabric: no latency to report
    assert vec.metrics.threads_per_instruction == 64.0
    assert "rocprof-compute.coalescing" in [f.rule_id for f in vec.tool_findings]
    device = vec.device
    assert (device.name, device.arch, device.sm_count, device.xcd_count) == ("MI300X_A1", "gfx942", 304, 8)
    assert device.sm_clock_hz == 2100e6 and device.dram_clock_hz == 1300e6
    assert device.l2_cache_bytes == 4096 * 1024 * 8
    assert device.peaks.source == "knowledge:mi300x"
    assert vec.metrics.dram_throughput_pct == pytest.approx(
        100 * vec.metrics.dram_bytes / (statistics.fmean([16160, 14640, 13800]) * 1e-9) / 5300e9
    )


def test_pmc_perf_file_finds_its_sysinfo_by_name() -> None:
    profile = read_rocprof(MI300X_PMC)  # rocprof_compute_mi300x_vcopy_{pmc_perf,sysinfo}.csv side by side
    assert profile.kernels[0].device.name == "MI300X_A1"


# --------------------------------------------------------------------------- MI200 roofline


def test_mi200_roofline_empirical_peaks() -> None:
    rows = read_roofline(MI200_ROOFLINE)
    assert [r.device for r in rows] == [0, 1, 2, 3]
    peaks = read_roofline_peaks(MI200_ROOFLINE)
    assert peaks.source == "empirical:roofline.csv"
    assert peaks.dram_bytes_per_s == pytest.approx(1388.9302e9)
    assert peaks.l2_bytes_per_s == pytest.approx(5018.2891e9)
    assert peaks.l1_bytes_per_s == pytest.approx(9226.7266e9)
    assert peaks.flops_per_s["fp32"] == pytest.approx(20941.971e9)
    assert peaks.flops_per_s["fp64"] == pytest.approx(20272.537e9)
    assert peaks.flops_per_s["tensor"] == pytest.approx(170483.16e9)  # max of MFMA BF16 and F16
    assert read_roofline_peaks(MI200_ROOFLINE, device=2).dram_bytes_per_s == pytest.approx(1389.0227e9)


def test_roofline_in_workload_folder_is_preferred_over_datasheet(tmp_path: Path) -> None:
    # Plumbing only: two real files of DIFFERENT workloads (MI300X counters, MI200 roofline) are combined
    # to show that a roofline.csv in the folder wins; the resulting numbers are not interpreted.
    shutil.copyfile(MI300X_PMC, tmp_path / "pmc_perf.csv")
    shutil.copyfile(MI200_ROOFLINE, tmp_path / "roofline.csv")
    profile = read_rocprof(tmp_path)
    assert profile.kernels[0].device.peaks.source == "empirical:roofline.csv"
    assert any("roofline.csv measured 4 devices; peaks of device 0 used" in n for n in profile.notes)
    assert any("no sysinfo.csv" in n for n in profile.notes)


# --------------------------------------------------------------------------- rocprof v1 (MI250X)


def _v1_means(path: Path, column: str) -> dict[str, float]:
    values: dict[str, list[float]] = {}
    for row in csv.DictReader(path.open()):
        values.setdefault(row["KernelName"], []).append(float(row[column]))
    return {k: statistics.fmean(v) for k, v in values.items()}


def test_v1_results_trace(tmp_path: Path) -> None:
    profile = read_rocprof(alone(tmp_path, V1_RESULTS))
    assert profile.tool == "rocprof" and profile.mode == "timing-only"
    assert len(profile.kernels) == 13
    assert sum(k.invocations for k in profile.kernels) == 1024  # no dispatch is an outlier in this file
    assert not [n for n in profile.notes if "dropped" in n]
    fill = kernel(profile, "__amd_rocclr_fillBufferAligned")
    assert fill.name == "__amd_rocclr_fillBufferAligned"  # '.kd' stripped
    z, x = kernel(profile, "compute_fd_z_kernel"), kernel(profile, "compute_fd_x_kernel")
    assert x.metrics.duration_s is not None and z.metrics.duration_s is not None
    assert z.metrics.duration_s / x.metrics.duration_s == pytest.approx(3738730 / 1297763)  # ~2.9x


def test_v1_data_movement_counters(tmp_path: Path) -> None:
    profile = read_rocprof(alone(tmp_path, V1_DATA))
    fetch = _v1_means(V1_DATA, "FETCH_SIZE")
    write = _v1_means(V1_DATA, "WRITE_SIZE")
    z, x = kernel(profile, "compute_fd_z_kernel"), kernel(profile, "compute_fd_x_kernel")
    for k in (x, z):
        assert k.metrics.dram_bytes == pytest.approx((fetch[k.name] + write[k.name]) * 1024)
    assert fetch["compute_fd_z_kernel"] / fetch["compute_fd_x_kernel"] == pytest.approx(6.77, abs=0.01)
    assert z.metrics.duration_s is None  # counters only


def test_v1_counters_joined_with_timing_by_index() -> None:
    profile = read_rocprof(V1_DATA, kernel_trace=V1_RESULTS)
    z, x = kernel(profile, "compute_fd_z_kernel"), kernel(profile, "compute_fd_x_kernel")
    assert z.invocations == x.invocations == 100
    assert z.metrics.duration_s == pytest.approx(3738730e-9)
    assert z.metrics.dram_bytes is not None and x.metrics.dram_bytes is not None
    assert z.metrics.dram_bytes > x.metrics.dram_bytes
    assert any("joined by dispatch Index" in n for n in profile.notes)
    # v1 collected L1->L2 read/write requests but not the atomic ones: the hit rate says so.
    assert any("without the atomic request counters" in n for n in profile.notes)
    lds_vec = kernel(profile, "compute_fd_xyz_lds_window_vec_kernel")
    # 64 arch + 128 accumulation VGPRs -> 192 -> 2 waves/SIMD -> 8 waves/CU = one 512-thread workgroup.
    assert lds_vec.occupancy.theoretical_pct == 25.0 and lds_vec.occupancy.limiter == "registers"
