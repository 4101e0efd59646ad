"""The roofline chart: PNG for measured records, None when nothing can be placed."""

from __future__ import annotations

from perfagent.models import DeviceInfo, RunRecord
from perfagent.render.chart import MAX_POINTS, chart_plan, roofline_png, summarize_not_plotted
from perfagent.render.view import roofline_summary


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


def test_kernels_without_flops_are_listed_with_the_reason(with_copy: RunRecord) -> None:
    plan = chart_plan(with_copy)
    assert len(plan.points) == 2
    ((name, why),) = plan.not_plotted
    assert name == "[3] copy_kernel"
    assert "no FLOPs measured" in why
    assert "3 TB/s = 89.6 % of peak" in why
    png = roofline_png(with_copy)
    assert png is not None and png.startswith(b"\x89PNG")


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
    ((_, why),) = chart_plan(record).not_plotted
    assert why == "no FLOPs measured (pure data movement); achieved DRAM 3 TB/s = 89.6 % of peak"
    assert "DRAM-bound: 3 TB/s = 89.6 % of 3.35 TB/s peak" in roofline_summary(bare)


def test_point_count_is_capped(counters: RunRecord) -> None:
    many = counters.model_copy(update={"kernels": [counters.kernels[1]] * (MAX_POINTS + 2)})
    plan = chart_plan(many)
    assert len(plan.points) == MAX_POINTS
    assert len(plan.not_plotted) == 2
    assert "only the first" in plan.not_plotted[0][1]
    assert summarize_not_plotted(plan.not_plotted, limit=1).endswith("; +1 more")
