"""The roofline chart: PNG for measured records, None when nothing can be placed."""

from __future__ import annotations

import struct

import pytest

import perfagent
from knowledge.gpus import spec_for
from perfagent.records import RunRecord
from perfagent.render.chart import MAX_POINTS, chart_plan, summarize_not_plotted
from perfagent.render.chart_png import DPI, FIGSIZE, roofline_png
from perfagent.render.roofline_text import roofline_summary
from perfagent.render.units import fmt_share
from profilers.model import DeviceInfo
from tests.conftest import EXAMPLE_REPORTS


def test_png_for_counters(counters: RunRecord) -> None:
    png = roofline_png(counters)
    assert png is not None
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert b"Software" not in png


def test_deterministic(counters: RunRecord) -> None:
    assert roofline_png(counters) == roofline_png(counters)


def test_none_without_measurements(static: RunRecord, timing_only: RunRecord) -> None:
    assert roofline_png(static) is None
    assert roofline_png(timing_only) is None
    assert roofline_png(RunRecord(target="t", tool="ncu")) is None


def test_plan_places_kernels_and_roofs(counters: RunRecord) -> None:
    plan = chart_plan(counters)
    assert [p.label for p in plan.points] == ["[1] stencil_column", "[2] gemm_tiled"]
    stencil = plan.points[0]
    assert abs(stencil.intensity - 1.5) < 1e-9
    assert stencil.precision == "fp32"
    assert dict(plan.memory_roofs) == {"DRAM": 3.35e12, "L2": 1.2e13}
    # Only the precisions the kernels use get a compute roof.
    assert dict(plan.compute_roofs) == {"FP32": 6.69e13}
    assert plan.not_plotted == ()
    assert plan.device == "NVIDIA H100 80GB HBM3"


def test_kernels_without_flops_become_bandwidth_bars(with_copy: RunRecord) -> None:
    plan = chart_plan(with_copy)
    assert len(plan.points) == 2
    assert plan.not_plotted == ()
    (bar,) = plan.bars
    assert bar.label == "[3] copy_kernel"
    assert bar.peak_bytes_per_s == 3.35e12
    assert bar.describe() == "3 TB/s = 89.6 % of 3.35 TB/s DRAM peak"
    png = roofline_png(with_copy)
    assert png is not None and png.startswith(b"\x89PNG")
    # The bar panel makes the picture taller than the roofline alone.
    roofline_only = with_copy.model_copy(update={"kernels": with_copy.kernels[:2]})
    assert _png_size(png)[1] > _png_size(roofline_png(roofline_only))[1]


def test_static_plan_says_why(static: RunRecord) -> None:
    plan = chart_plan(static)
    assert plan.points == ()
    assert plan.not_plotted == (("[1] k", "no roofline data"),)


def test_copy_kernel_without_points_or_device_peaks(with_copy: RunRecord) -> None:
    """The roofline module gives a FLOP-less kernel no points; the peak then comes from the speed of light."""
    copy = with_copy.kernels[2]
    assert copy.roofline is not None
    bare = copy.model_copy(
        update={
            "roofline": copy.roofline.model_copy(update={"points": []}),
            "profile": copy.profile.model_copy(update={"device": DeviceInfo(name="NVIDIA H100 80GB HBM3")}),
        }
    )
    record = with_copy.model_copy(update={"kernels": [*with_copy.kernels[:2], bare]})
    (bar,) = chart_plan(record).bars
    assert bar.describe() == "3 TB/s = 89.6 % of 3.35 TB/s DRAM peak"
    assert "DRAM-bound: 3 TB/s = 89.6 % of 3.35 TB/s peak" in roofline_summary(bare)


def test_bar_peak_falls_back_to_the_gpu_table(with_copy: RunRecord) -> None:
    """No DRAM peak in the report and the speed of light set elsewhere: the datasheet peak, as the roofline's."""
    copy = with_copy.kernels[2]
    assert copy.roofline is not None
    bare = copy.model_copy(
        update={
            "roofline": copy.roofline.model_copy(update={"points": [], "bounding_resource": "l2"}),
            "profile": copy.profile.model_copy(update={"device": DeviceInfo(name="NVIDIA H100 80GB HBM3")}),
        }
    )
    (bar,) = chart_plan(with_copy.model_copy(update={"kernels": [bare]})).bars
    spec = spec_for("NVIDIA H100 80GB HBM3")
    assert spec is not None
    assert bar.peak_bytes_per_s == spec.dram_bandwidth_gbs * 1e9


def test_bar_without_any_peak_says_so(with_copy: RunRecord) -> None:
    copy = with_copy.kernels[2]
    assert copy.roofline is not None
    bare = copy.model_copy(
        update={
            "roofline": copy.roofline.model_copy(update={"points": [], "bounding_resource": "l2"}),
            "profile": copy.profile.model_copy(update={"device": DeviceInfo(name="an unknown GPU")}),
        }
    )
    record = with_copy.model_copy(update={"kernels": [bare]})
    (bar,) = chart_plan(record).bars
    assert bar.share is None and bar.describe() == "3 TB/s DRAM (peak unknown)"
    png = roofline_png(record)
    assert png is not None and png.startswith(b"\x89PNG")


def test_point_count_is_capped(counters: RunRecord) -> None:
    many = counters.model_copy(update={"kernels": [counters.kernels[1]] * (MAX_POINTS + 2)})
    plan = chart_plan(many)
    assert len(plan.points) == MAX_POINTS
    assert len(plan.not_plotted) == 2
    assert "only the first" in plan.not_plotted[0][1]
    assert summarize_not_plotted(plan.not_plotted, limit=1).endswith("; +1 more")


def _png_size(png: bytes | None) -> tuple[int, int]:
    assert png is not None
    width, height = struct.unpack(">II", png[16:24])
    return width, height


# Real recorded reports (examples/reports, recorded on an H200, see MANIFEST.md): transposes and histograms
# execute no floating-point instruction, so they have no arithmetic intensity.


def _report(name: str) -> RunRecord:
    return perfagent.diagnose(EXAMPLE_REPORTS / f"{name}.ncu-rep")


def test_transpose_report_draws_bandwidth_bars() -> None:
    record = _report("01_transpose_naive")
    plan = chart_plan(record)
    assert plan.points == () and plan.not_plotted == ()
    assert [b.label for b in plan.bars] == ["[1] transpose_naive", "[2] transpose_tiled_padded"]
    for bar, kd in zip(plan.bars, record.kernels, strict=True):
        # The numbers come from the report: DRAM bytes / duration against the report's own DRAM peak.
        assert not any(kd.profile.metrics.flops.values())
        assert kd.profile.metrics.dram_bytes is not None and kd.duration_s is not None
        assert bar.achieved_bytes_per_s == pytest.approx(kd.profile.metrics.dram_bytes / kd.duration_s)
        assert bar.peak_bytes_per_s == kd.profile.device.peaks.dram_bytes_per_s
    naive, tiled = plan.bars
    assert naive.describe() == "596 GB/s = 12.4 % of 4.81 TB/s DRAM peak"
    assert tiled.describe() == "3.52 TB/s = 73.2 % of 4.81 TB/s DRAM peak"
    assert plan.device == "NVIDIA H200"
    png = roofline_png(record)
    assert png is not None and png.startswith(b"\x89PNG")
    assert roofline_png(record) == png


def test_histogram_report_draws_bandwidth_bars() -> None:
    plan = chart_plan(_report("09_histogram_atomics"))
    assert [(b.label, fmt_share(b.share)) for b in plan.bars] == [
        ("[1] histogram_global_atomics", "0.23 %"),
        ("[2] histogram_smem_privatized", "45.8 %"),
    ]


def test_suite_report_draws_points_and_bars() -> None:
    """Kernels with FLOPs on the roofline, the transposes and histograms as bars under it."""
    plan = chart_plan(_report("suite"))
    assert len(plan.points) == MAX_POINTS
    bars = {b.label.split(" ", 1)[1] for b in plan.bars}
    assert {"transpose_naive", "histogram_global_atomics", "histogram_smem_privatized"} <= bars
    assert not bars & {p.label.split(" ", 1)[1] for p in plan.points}
    png = roofline_png(_report("suite"))
    assert png is not None
    assert _png_size(png)[1] > FIGSIZE[1] * DPI
