"""Tensor-core FLOPs (issue 10): ncu's op-path counters per chip family, else priced SASS opcode counts.

Real reports only: ``examples/reports/tensor_mma_h100.ncu-rep`` (H100, ncu 2025.3.1; one 2048³ matmul per
launch through HMMA and HGMMA, see examples/reports/MANIFEST.md), ``examples/reports/triton_matmul.ncu-rep``
(H200, recorded before the map named Hopper's fp16 path) and the public A100 tensor-core fixture.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import perfagent
from perfagent.render import OutputFormat, render
from perfagent.render.chart import chart_plan
from profilers.ncu.mapping import evaluate_fields, ncu_metric_map, to_base_values
from profilers.ncu.report_reader import opcode_counts, read_ncu_rep
from profilers.ncu.tensor import SASS_TENSOR_FLOP, tensor_flop_from_opcodes, uncounted_tensor_work
from tests.conftest import EXAMPLE_REPORTS, ncu_fixture

H100 = EXAMPLE_REPORTS / "tensor_mma_h100.ncu-rep"
TRITON_H200 = EXAMPLE_REPORTS / "triton_matmul.ncu-rep"
A100_MMA = "a100_mmaptx_full_tensorcore_ncu2023.3.1_full.ncu-rep"
MATMUL_FLOP = 2 * 2048**3
"""Each launch of the H100 probe multiplies two 2048 x 2048 matrices."""


def _actions(path: Path) -> list[object]:
    import ncu_report  # type: ignore[import-not-found]

    context = ncu_report.load_report(str(path))
    return [
        context.range_by_idx(r).action_by_idx(a)
        for r in range(context.num_ranges())
        for a in range(context.range_by_idx(r).num_actions())
    ]


def _raw(action: object) -> dict[str, float | str]:
    """A launch's raw values for the map's names, as the reader reads them (base units)."""
    raw = {}
    for name in ncu_metric_map().metric_names():
        metric = action.metric_by_name(name)  # type: ignore[attr-defined]
        if metric is not None:
            raw[name] = (metric.value(), metric.unit())
    return to_base_values(raw, set())


def test_h100_op_path_counters_count_two_flop_per_fma() -> None:
    """ncu's counters on the H100: 2·M·N·K for mma.sync and wgmma, fp16, bf16 and tf32 alike."""
    paths = [
        "sm__ops_path_tensor_src_fp16.sum",
        "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
        "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
    ]
    per_launch = []
    for action in _actions(H100):
        raw = _raw(action)
        per_launch.append([raw[p] for p in paths])
        fields = evaluate_fields(raw)
        assert fields["metrics.flops.tensor"] == MATMUL_FLOP
    assert per_launch == [
        [MATMUL_FLOP, 0.0, 0.0],  # fp16, HMMA.16816.F32
        [MATMUL_FLOP, 0.0, 0.0],  # fp16, HGMMA.64x128x16.F32
        [0.0, MATMUL_FLOP, 0.0],  # bf16
        [0.0, 0.0, MATMUL_FLOP],  # tf32
    ]


def test_sass_opcode_pricing_agrees_with_the_counters_on_the_h100() -> None:
    opcodes = []
    for action in _actions(H100):
        counts = opcode_counts(action)
        mma = {op: n for op, n in counts.items() if "MMA" in op}
        opcodes.append(mma)
        assert tensor_flop_from_opcodes(counts) == MATMUL_FLOP
    assert opcodes == [
        {"HMMA.16816.F32": 4_194_304},
        {"HGMMA.64x128x16.F32": 262_144},
        {"HGMMA.64x128x16.F32.BF16": 262_144},
        {"HGMMA.64x128x8.F32.TF32": 524_288},
    ]


def test_h100_report_reads_tensor_flops_and_the_dense_peak() -> None:
    profile = read_ncu_rep(H100)
    # The three wgmma launches share name, grid and block: one kernel with per-launch means.
    assert [(k.base_name, k.launch.block, k.invocations) for k in profile.kernels] == [
        ("mma_kernel", (32, 1, 1), 1),
        ("mma_kernel", (128, 1, 1), 3),
    ]
    for kernel in profile.kernels:
        assert kernel.metrics.flops["tensor"] == MATMUL_FLOP
        peak = kernel.device.peaks.flops_per_s["tensor"]
        clock = kernel.device.sm_clock_hz
        assert clock is not None
        # HGMMA dense fp16: 4096 FLOP per SM per cycle, 132 SMs.
        assert peak / clock == pytest.approx(4096 * 132, rel=1e-3)
    assert not profile.notes


def test_h100_tensor_kernels_land_on_the_roofline() -> None:
    record = perfagent.diagnose(H100)
    plan = chart_plan(record)
    assert {p.precision for p in plan.points} == {"tensor"}
    assert len(plan.points) == 2 and not plan.bars
    wgmma = next(k for k in record.kernels if k.profile.launch.block == (128, 1, 1))
    assert wgmma.roofline is not None and wgmma.roofline.floors_s["tensor"] > 0


def test_sass_fallback_on_the_a100_fixture() -> None:
    """2023.3 full set: no op-path counters; 17.28e9 HMMA.16816.F32 at 4096 FLOP each."""
    path = ncu_fixture(A100_MMA)
    (action,) = _actions(path)
    counts = opcode_counts(action)
    assert counts["HMMA.16816.F32"] == 17_280_000_000
    raw = _raw(action)
    assert not any(name.startswith("sm__ops_path_tensor") for name in raw)
    (kernel,) = read_ncu_rep(path).kernels
    flops = kernel.metrics.flops["tensor"]
    assert flops == 17_280_000_000 * 4096
    # Cross-check against the tensor pipe: 1024 dense FMA per SM and cycle on the A100 (108 SMs), at the
    # profiled clock, gives the share of the peak the pipe counter shows (98.95 %).
    duration, clock = kernel.metrics.duration_s, kernel.device.sm_clock_hz
    assert duration is not None and clock is not None
    share = flops / duration / (2 * 1024 * 108 * clock)
    assert share == pytest.approx(kernel.metrics.pipe_utilization_pct["tensor"] / 100, abs=0.01)


def test_report_without_the_hopper_fp16_counter_says_tensor_flops_are_not_measured() -> None:
    """The H200 Triton report predates the map's Hopper fp16 path: its present bf16/tf32/fp8/fp64 paths
    read 0, which used to make 0 tensor FLOP. Now: not measured, with a note, and off the chart."""
    profile = read_ncu_rep(TRITON_H200)
    (kernel,) = profile.kernels
    assert "tensor" not in kernel.metrics.flops
    assert {p: kernel.metrics.flops[p] for p in ("fp32", "fp16")} == {"fp32": 0.0, "fp16": 0.0}
    busy = uncounted_tensor_work(kernel.metrics)
    assert busy == pytest.approx(5.36, abs=0.01)
    (note,) = profile.notes
    assert note.startswith("matmul_kernel: the tensor pipe was busy 5.36 % of the time")
    record = perfagent.diagnose(TRITON_H200)
    plan = chart_plan(record)
    assert plan.points == () and plan.bars == ()
    assert plan.not_plotted == (
        ("[1] matmul_kernel", "tensor pipe busy 5.36 % but no tensor FLOP count in this report"),
    )
    md = render(record, OutputFormat.MARKDOWN)
    assert "No roofline chart: \\[1\\] matmul_kernel (tensor pipe busy 5.36 % but no tensor FLOP count" in md


def test_kernels_without_mma_keep_zero_or_no_tensor_flops() -> None:
    """Per-opcode counts without MMA: 0 (the count is complete); no counts at all: not measured."""
    vec_add = read_ncu_rep(ncu_fixture("gtx1660s_vec_add_ncu2024.1.1_full.ncu-rep")).kernels[0]
    assert vec_add.metrics.flops["tensor"] == 0.0
    transpose = read_ncu_rep(EXAMPLE_REPORTS / "01_transpose_naive.ncu-rep").kernels[0]
    assert "tensor" not in transpose.metrics.flops
    assert uncounted_tensor_work(transpose.metrics) is None  # its tensor pipe was idle: no note
    assert tensor_flop_from_opcodes({}) is None
    assert tensor_flop_from_opcodes({"FFMA": 1e6, "LDG.E": 1e3}) == 0.0


@pytest.mark.parametrize(
    "opcode",
    [
        "HMMA.884.F32.F32.STEP0",  # Volta quad-pair steps
        "HMMA.16816.F32.SP",  # sparse
        "HGMMA.64x128x32.F32.SP",
        "UTCHMMA.2CTA",  # Blackwell tcgen05
        "HMMA.999.F32",  # unknown shape
    ],
)
def test_unknown_mma_makes_the_whole_count_unknown(opcode: str) -> None:
    assert tensor_flop_from_opcodes({"HMMA.16816.F32": 10, opcode: 1}) is None


def test_integer_mma_is_not_floating_point() -> None:
    counts = {"IMMA.16832.S8.S8": 100, "IGMMA.64x128x32.S8.S8": 4, "HMMA.1688.F32.TF32": 2}
    assert tensor_flop_from_opcodes(counts) == 2 * (2 * 16 * 8 * 8)


def test_derived_value_is_a_fallback_not_collected() -> None:
    metric_map = ncu_metric_map()
    assert SASS_TENSOR_FLOP in metric_map.metric_names()
    assert SASS_TENSOR_FLOP not in metric_map.collected_metric_names()
    spec = metric_map.fields["metrics.flops.tensor"]
    assert spec.fallbacks[0] == SASS_TENSOR_FLOP
