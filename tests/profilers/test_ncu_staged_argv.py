"""Exact ncu argv of each stage of staged profiling, and the tier partition of the targeted metrics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from profilers.base import ProfileRequest
from profilers.ncu.argv import build_ncu_argv, build_timing_argv, targeted_metrics
from profilers.ncu.tiers import LAUNCH_IDENTITY_METRICS, fields_provided, is_tier_b, metrics_for, tier_metrics

REPORT = Path("/w/run/perfagent-ncu-1.ncu-rep")
LOG = Path("/w/run/perfagent-ncu-1.log")
NCU = "/opt/nvidia/nsight-compute/2025.3.1/ncu"
APP = ["/w/run/prog", "--n", "4"]
COMMON = ["--target-processes", "all", "--clock-control", "none", "--kernel-name-base", "function"]
SECTIONS = ["--section", "SpeedOfLight", "--section", "LaunchStats", "--section", "Occupancy"]


def request(**fields: Any) -> ProfileRequest:
    return ProfileRequest(workdir=Path("/w/run"), command=APP, **fields)


def test_stage1_times_every_launch_in_one_pass_as_csv() -> None:
    assert build_timing_argv(request(), ncu=NCU, log_path=LOG) == [
        NCU,
        "--log-file",
        str(LOG),
        *COMMON,
        "--metrics",
        "gpu__time_duration.sum,launch__block_size,launch__grid_size,launch__registers_per_thread,"
        "launch__shared_mem_per_block_dynamic,launch__shared_mem_per_block_static",
        "--apply-rules",
        "no",
        "--csv",
        "--page",
        "raw",
        "--print-units",
        "base",
        *APP,
    ]


def test_stage1_keeps_the_users_kernel_and_nvtx_filters() -> None:
    got = build_timing_argv(
        request(kernel_regex="gemm", nvtx_include=["perfagent_forward/"]), ncu=NCU, log_path=LOG
    )
    assert got[: 3 + len(COMMON) + 5] == [
        NCU,
        "--log-file",
        str(LOG),
        *COMMON,
        "--kernel-name",
        "regex:gemm",
        "--nvtx",
        "--nvtx-include",
        "perfagent_forward/",
    ]


def test_stage2_tier_a_one_launch_per_configuration_of_the_chosen_kernels() -> None:
    req = request(
        kernel_regex="^(histogram_global_atomics|sgemm_naive)$",
        per_launch_config=True,
        launch_skip=1,
        launch_count=1,
        metric_tiers=("A",),
    )
    assert build_ncu_argv(req, ncu=NCU, report_path=REPORT, log_path=LOG) == [
        NCU,
        "--export",
        str(REPORT),
        "--force-overwrite",
        "--log-file",
        str(LOG),
        *COMMON,
        "--kernel-name",
        "regex:^(histogram_global_atomics|sgemm_naive)$",
        "--filter-mode",
        "per-launch-config",
        "--launch-skip",
        "1",
        "--launch-count",
        "1",
        *SECTIONS,
        "--metrics",
        ",".join(tier_metrics("A")),
        *APP,
    ]


def test_stage2_tier_b_run_adds_only_launch_identity_to_its_counters() -> None:
    req = request(
        kernel_regex="^(sgemm_smem_tiled)$", per_launch_config=True, launch_count=1, metric_tiers=("B",)
    )
    metrics = sorted({*tier_metrics("B"), *LAUNCH_IDENTITY_METRICS})
    assert build_ncu_argv(req, ncu=NCU, report_path=REPORT, log_path=LOG) == [
        NCU,
        "--export",
        str(REPORT),
        "--force-overwrite",
        "--log-file",
        str(LOG),
        *COMMON,
        "--kernel-name",
        "regex:^(sgemm_smem_tiled)$",
        "--filter-mode",
        "per-launch-config",
        "--launch-count",
        "1",
        "--section",
        "LaunchStats",
        "--metrics",
        ",".join(metrics),
        *APP,
    ]


def test_both_tiers_are_the_whole_targeted_list() -> None:
    got = build_ncu_argv(request(), ncu=NCU, report_path=REPORT, log_path=LOG)
    assert got[got.index("--metrics") + 1] == ",".join(targeted_metrics())
    assert "--filter-mode" not in got


def test_tiers_partition_the_targeted_metrics() -> None:
    a, b = set(tier_metrics("A")), set(tier_metrics("B"))
    assert not a & b
    assert a | b == set(targeted_metrics())
    assert metrics_for(("A", "B")) == targeted_metrics()
    stalls = [m for m in targeted_metrics() if "issue_stalled" in m]
    assert len(stalls) == 18 and all(is_tier_b(m) for m in stalls)
    # tensor paths feed the roofline: tier A (left out only when the SASS shows no tensor instruction)
    assert not is_tier_b("sm__ops_path_tensor_src_fp16.sum")
    assert not is_tier_b("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active")
    assert len(tier_metrics("B")) == 22  # 18 stall reasons + 4 scheduler-state ratios
    # the occupancy section's achieved warps stays in A; the scheduler's warps per cycle is B
    assert not is_tier_b("sm__warps_active.avg.pct_of_peak_sustained_active")
    assert is_tier_b("smsp__warps_active.avg.per_cycle_active")


def test_tier_a_alone_fills_the_speed_of_light_memory_and_occupancy_keys() -> None:
    a = fields_provided(("A",))
    for key in (
        "metrics.duration_s",
        "metrics.sm_throughput_pct",
        "metrics.dram_bytes",
        "metrics.flops.fp32",
        "metrics.global_load_bytes_per_sector",
        "metrics.shared_bank_conflict_pct",
        "metrics.local_load_bytes",
        "occupancy.theoretical_pct",
        "launch.waves_per_sm",
        "peaks.dram_bytes_per_s",
        "metrics.flops.tensor",
    ):
        assert key in a, key
    assert "metrics.warp_stalls.long_scoreboard" not in a
    assert "metrics.warp_stalls.long_scoreboard" in fields_provided(("A", "B"))
