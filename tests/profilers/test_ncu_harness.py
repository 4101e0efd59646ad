"""Harness kernels (issue 10): launches outside perfagent's NVTX workload range are listed, never ranked.

``examples/reports/nvtx_harness_h100.ncu-rep`` is a real recording (H100, ncu 2025.3.1, ``--nvtx``): two Triton
``fill_kernel`` launches before the range (input preparation), two ``add_kernel`` launches inside
``perfagent_forward`` (see examples/reports/MANIFEST.md and scripts/nvtx_harness_probe.py).
"""

from __future__ import annotations

import perfagent
from perfagent.classifier import HARNESS_REASON, classify
from perfagent.optimize.reprofile import pick_kernel
from perfagent.render import OutputFormat, render
from perfagent.render.chart import chart_plan
from profilers.ncu.report_reader import read_ncu_rep
from tests.conftest import EXAMPLE_REPORTS

NVTX = EXAMPLE_REPORTS / "nvtx_harness_h100.ncu-rep"


def test_reader_marks_launches_outside_the_workload_range() -> None:
    profile = read_ncu_rep(NVTX)
    assert [(k.base_name, k.invocations, k.harness) for k in profile.kernels] == [
        ("fill_kernel", 2, True),
        ("add_kernel", 2, False),
    ]


def test_reports_without_nvtx_mark_nothing() -> None:
    for name in ("triton_matmul", "01_transpose_naive", "suite"):
        assert not any(k.harness for k in read_ncu_rep(EXAMPLE_REPORTS / f"{name}.ncu-rep").kernels)


def test_harness_kernels_are_not_diagnosed_or_ranked() -> None:
    record = perfagent.diagnose(NVTX)
    assert [(k.profile.base_name, k.profile.harness) for k in record.kernels] == [
        ("add_kernel", False),
        ("fill_kernel", True),
    ]
    add, fill = record.kernels
    assert add.findings and add.share_of_total == 1.0
    assert fill.findings == [] and fill.share_of_total is None and fill.recoverable_s is None
    assert fill.roofline is None
    assert [(s.rule, s.reason) for s in fill.skipped] == [("all rules", HARNESS_REASON)]
    assert all(f.recoverable_share is None or f.recoverable_share <= 1.0 for f in add.findings)


def test_classifier_ranks_workload_kernels_only() -> None:
    """Marking the slowest kernel of a real profile as harness takes it out of the ranking and the total."""
    profile = read_ncu_rep(EXAMPLE_REPORTS / "01_transpose_naive.ncu-rep")
    naive, tiled = profile.kernels
    assert naive.base_name == "transpose_naive"
    marked = profile.model_copy(update={"kernels": [naive.model_copy(update={"harness": True}), tiled]})
    first, last = classify(marked)
    assert (first.profile.base_name, last.profile.base_name) == ("transpose_tiled_padded", "transpose_naive")
    assert first.share_of_total == 1.0
    assert last.findings == [] and last.share_of_total is None
    # Without the mark the naive transpose is the top finding, as before.
    assert classify(profile)[0].profile.base_name == "transpose_naive"


def test_reports_label_harness_kernels() -> None:
    record = perfagent.diagnose(NVTX)
    md = render(record, OutputFormat.MARKDOWN)
    assert "## 2. fill_kernel (harness)" in md
    assert "Not diagnosed: a harness kernel, outside the workload's forward()." in md
    assert "2 (1 of the harness, not ranked)" in md
    text = render(record, OutputFormat.TEXT)
    assert "fill_kernel (harness)" in text
    plan = chart_plan(record)
    assert ("[2] fill_kernel", "harness kernel, outside the workload's forward()") in plan.not_plotted


def test_optimize_loop_never_targets_a_harness_kernel() -> None:
    kernels = read_ncu_rep(NVTX).kernels
    assert pick_kernel(kernels, None).base_name == "add_kernel"
    assert pick_kernel(kernels, "fill_kernel").base_name == "add_kernel"
