"""Exact ncu argv for several requests, and the targeted metric list as a reviewed constant.

``TARGETED`` below is the list a default run collects. Changing the metric map changes it: update it here
on purpose (profiling cost: the benchmark targets at most 1.5x the wall time of ``ncu --set basic``).
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

from knowledge.metric_maps import expression_metrics
from profilers.base import ProfileRequest
from profilers.ncu.argv import build_ncu_argv, targeted_metrics, targeted_sections
from profilers.ncu.mapping import ncu_metric_map

REPORT = Path("/w/run/perfagent-ncu-1.ncu-rep")
LOG = Path("/w/run/perfagent-ncu-1.log")
NCU = "/opt/nvidia/nsight-compute/2025.3.1/ncu"

TARGETED = (
    "device__attribute_compute_capability_major",
    "device__attribute_compute_capability_minor",
    "device__attribute_display_name",
    "device__attribute_l2_cache_size",
    "device__attribute_max_shared_memory_per_multiprocessor",
    "device__attribute_max_warps_per_multiprocessor",
    "device__attribute_multiprocessor_count",
    "dram__bytes.sum",
    "dram__bytes.sum.peak_sustained",
    "dram__cycles_elapsed.avg.per_second",
    "gpc__cycles_elapsed.max",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__time_duration.sum",
    "l1tex__cycles_elapsed.avg.per_second",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__lsu_writeback_active.sum",
    "l1tex__lsu_writeback_active.sum.peak_sustained",
    "l1tex__lsu_writeback_active_mem_lg.sum",
    "l1tex__lsu_writeback_active_mem_lg.sum.peak_sustained",
    "l1tex__lsu_writeback_active_mem_lgds.sum",
    "l1tex__lsu_writeback_active_mem_lgds.sum.peak_sustained",
    "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
    "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sector_hit_rate.pct",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "launch__block_dim_x",
    "launch__block_dim_y",
    "launch__block_dim_z",
    "launch__block_size",
    "launch__grid_dim_x",
    "launch__grid_dim_y",
    "launch__grid_dim_z",
    "launch__grid_size",
    "launch__occupancy_limit_blocks",
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem",
    "launch__occupancy_limit_warps",
    "launch__registers_per_thread",
    "launch__shared_mem_per_block_dynamic",
    "launch__shared_mem_per_block_static",
    "launch__waves_per_multiprocessor",
    "lts__cycles_elapsed.avg.per_second",
    "lts__lts2xbar_cycles_active.sum",
    "lts__lts2xbar_cycles_active.sum.peak_sustained",
    "lts__t_sector_hit_rate.pct",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "sass__inst_executed_register_spilling",
    "sm__cycles_active.avg",
    "sm__cycles_elapsed.avg.per_second",
    "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active",
    "sm__maximum_warps_per_active_cycle_pct",
    "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum.peak_sustained",
    "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
    "sm__ops_path_tensor_src_fp16.sum",
    "sm__ops_path_tensor_src_fp16_bf16_tf32_dst_fp32.sum",
    "sm__ops_path_tensor_src_fp16_dst_fp16.sum",
    "sm__ops_path_tensor_src_fp16_dst_fp32.sum",
    "sm__ops_path_tensor_src_fp16_dst_fp32.sum.peak_sustained",
    "sm__ops_path_tensor_src_fp16_dst_fp32_sparsity_off.sum.peak_sustained",
    "sm__ops_path_tensor_src_fp4_dst_fp32.sum",
    "sm__ops_path_tensor_src_fp4_fp6_dst_fp16.sum",
    "sm__ops_path_tensor_src_fp4_fp6_dst_fp32.sum",
    "sm__ops_path_tensor_src_fp4_fp6_fp8_dst_fp16.sum",
    "sm__ops_path_tensor_src_fp4_fp6_fp8_dst_fp32.sum",
    "sm__ops_path_tensor_src_fp64.sum",
    "sm__ops_path_tensor_src_fp8.sum",
    "sm__ops_path_tensor_src_fp8_dst_fp16.sum",
    "sm__ops_path_tensor_src_fp8_dst_fp32.sum",
    "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
    "sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_tensor_cycles_active_v2.avg.pct_of_peak_sustained_active",
    "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
    "sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "smsp__average_warp_latency_per_inst_issued.ratio",
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_branch_resolving_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_drain_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_gmma_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_imc_miss_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_membar_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_misc_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_tex_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",
    "smsp__inst_executed.sum",
    "smsp__inst_executed_op_ldsm.sum",
    "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio",
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio",
    "smsp__sass_inst_executed_op_global_atom.sum",
    "smsp__sass_inst_executed_op_global_red.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum",
    "smsp__sass_inst_executed_op_shared_st.sum",
    "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum",
    "smsp__thread_inst_executed_per_inst_executed.ratio",
    "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio",
    "smsp__warps_active.avg.per_cycle_active",
    "smsp__warps_eligible.avg.per_cycle_active",
)

HEAD = [
    NCU,
    "--export",
    str(REPORT),
    "--force-overwrite",
    "--log-file",
    str(LOG),
    "--target-processes",
    "all",
    "--clock-control",
    "none",
    "--kernel-name-base",
    "function",
]
TARGETED_TAIL = [
    "--section",
    "SpeedOfLight",
    "--section",
    "LaunchStats",
    "--section",
    "Occupancy",
    "--metrics",
    ",".join(TARGETED),
]


def argv(**fields: Any) -> list[str]:
    request = ProfileRequest(workdir=Path("/w/run"), **fields)
    return build_ncu_argv(request, ncu=NCU, report_path=REPORT, log_path=LOG)


def test_targeted_metric_list_is_the_reviewed_constant() -> None:
    assert targeted_metrics() == TARGETED
    assert targeted_sections() == ("SpeedOfLight", "LaunchStats", "Occupancy")
    assert len(TARGETED) == len(set(TARGETED)) <= 130


def test_targeted_list_covers_the_first_alternatives_only() -> None:
    wanted: set[str] = set()
    for spec in ncu_metric_map().fields.values():
        for text in spec.exprs:
            wanted |= expression_metrics(text)
    assert wanted <= set(TARGETED)
    # roofline-set fallbacks (rates x duration) are read, never collected
    assert "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed" not in TARGETED
    assert "dram__bytes.sum.per_second" not in TARGETED
    for name in (
        "gpu__time_duration.sum",
        "dram__bytes.sum",
        "dram__bytes.sum.peak_sustained",
        "dram__cycles_elapsed.avg.per_second",
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
        "launch__occupancy_limit_registers",
        "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
        "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio",
        "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
        "sass__inst_executed_register_spilling",
        "device__attribute_display_name",
    ):
        assert name in TARGETED


def test_default_request() -> None:
    assert argv(command=["./vec_add", "--n", "1024"]) == [*HEAD, *TARGETED_TAIL, "./vec_add", "--n", "1024"]


def test_filters_and_clock_control() -> None:
    got = argv(
        command=["python", "bench.py"],
        kernel_regex="gemm|conv",
        launch_skip=3,
        launch_count=2,
        nvtx_include=["step/", "fwd@Domain"],
        clock_control="base",
    )
    head = [*HEAD]
    head[head.index("none")] = "base"
    assert got == [
        *head,
        "--kernel-name",
        "regex:gemm|conv",
        "--launch-skip",
        "3",
        "--launch-count",
        "2",
        "--nvtx",
        "--nvtx-include",
        "step/",
        "--nvtx-include",
        "fwd@Domain",
        *TARGETED_TAIL,
        "python",
        "bench.py",
    ]


def test_full_set_with_source_counters() -> None:
    got = argv(command=["./app"], full_set=True, source_counters=True, launch_count=1)
    assert got == [
        *HEAD,
        "--launch-count",
        "1",
        "--set",
        "full",
        "--metrics",
        ",".join(TARGETED),
        "--section",
        "SourceCounters",
        "--import-source",
        "yes",
        "./app",
    ]


def test_targeted_with_source_counters_and_zero_skip() -> None:
    got = argv(command=["./app"], source_counters=True, launch_skip=0)
    assert got == [*HEAD, *TARGETED_TAIL, "--section", "SourceCounters", "--import-source", "yes", "./app"]


def test_percent_in_report_path_is_escaped() -> None:
    request = ProfileRequest(workdir=Path("/w"), command=["./a"])
    got = build_ncu_argv(
        request, ncu="ncu", report_path=Path("/w/100%/r.ncu-rep"), log_path=Path("/w/100%/r.log")
    )
    assert got[1:3] == ["--export", "/w/100%%/r.ncu-rep"]
    assert got[4:6] == ["--log-file", "/w/100%/r.log"]


def test_tensor_counters_are_left_out_only_when_asked_and_their_peaks_stay() -> None:
    full = _metrics_of(argv(command=["./app"]))
    lean = _metrics_of(argv(command=["./app"], tensor_counters=False))
    dropped = full - lean
    assert dropped and all("tensor" in m for m in dropped)
    assert "sm__ops_path_tensor_src_fp16_dst_fp32.sum" in dropped
    assert "sm__ops_path_tensor_src_fp16_dst_fp32.sum.peak_sustained" in lean  # a constant: no pass


def _metrics_of(line: list[str]) -> set[str]:
    return set(line[line.index("--metrics") + 1].split(","))


def test_no_tensor_code_is_never_claimed_without_proof(tmp_path: Path) -> None:
    import sys

    from profilers.static.sass_scan import no_tensor_code

    assert no_tensor_code([sys.executable, "-c", "pass"]) is None  # an interpreter: its kernels are unknown
    assert no_tensor_code([str(tmp_path / "missing")]) is None
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n")
    assert no_tensor_code([str(script)]) is None  # not an ELF file
    assert no_tensor_code([]) is None


SASS = Path(__file__).resolve().parents[1] / "data" / "sass"
"""Real ``cuobjdump -sass`` listings recorded on an H100 machine (CUDA 13.0; see cuobjdump_version.txt)
from tests/data/sass/{wmma,gemma}.cu."""


def test_a_wmma_kernel_listing_holds_tensor_instructions() -> None:
    from profilers.static.sass_scan import has_tensor_instruction

    listing = (SASS / "wmma_sm90.sass").read_text()
    assert "HMMA.16816.F32" in listing
    assert has_tensor_instruction(listing)


def test_a_kernel_named_like_an_opcode_is_not_tensor_code() -> None:
    from profilers.static.sass_scan import has_tensor_instruction

    listing = (SASS / "gemma_sm90.sass").read_text()
    assert "gemma_scale" in listing and "FMUL" in listing
    assert not has_tensor_instruction(listing)
    assert has_tensor_instruction(listing.replace("FMUL", "HGMMA.64x64x16.F32"))


def test_an_fma_on_the_mma_pipe_is_not_a_tensor_instruction() -> None:
    """The H100 build of examples/cuda/suite/main.cu is full of ``HFMA2.MMA`` (register moves issued on
    the FMA pipe's MMA port) and has no tensor-core opcode."""
    from profilers.static.sass_scan import has_tensor_instruction

    listing = gzip.decompress((SASS / "suite_sm90.sass.gz").read_bytes()).decode()
    assert "HFMA2.MMA" in listing
    assert not has_tensor_instruction(listing)
    assert has_tensor_instruction(listing.replace("HFMA2.MMA R21", "@!P0 HMMA.16816.F32 R21", 1))
