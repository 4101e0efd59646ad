"""View models, the character roofline and the optimize bridge: pure functions, no Textual app."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from tui_support import CANDIDATE, ORIGINAL, FakeLoop

from perfagent.records import CandidateOutcome, CheckRecord, RunRecord, VerificationSummary
from perfagent.render.chart import BandwidthBar, ChartPlan, PlottedKernel, chart_plan
from tui.candidate_view import check_mark, measured_speedup, metric_rows, outcome_of
from tui.chart import draw_bandwidth, draw_roofline, shows_bandwidth
from tui.optimize_bridge import (
    LOOP_UNAVAILABLE,
    OptimizeBridge,
    OptimizeRequest,
    OptimizeUnavailable,
    ProgressEvent,
    kernel_regex,
    source_reason,
)
from tui.source_viewmodel import source_view
from tui.viewmodels import (
    bar,
    finding_items,
    kernel_headline,
    kernel_rows,
    occupancy_rows,
    run_summary,
    short_name,
    sol_rows,
)


def test_bar_fills_in_eighths() -> None:
    assert bar(100.0, 4) == "████"
    assert bar(0.0, 4) == "    "
    assert bar(50.0, 4) == "██  "
    assert bar(None, 3) == "   "
    assert bar(150.0, 2) == "██"
    assert bar(12.5, 1) == "▏"


def test_kernel_rows_keep_the_library_ranking(sgemm: RunRecord) -> None:
    rows = kernel_rows(sgemm)
    assert [r.name for r in rows] == [short_name(k) for k in sgemm.kernels]
    assert [r.rank for r in rows] == [1, 2, 3, 4]
    first = rows[0]
    assert first.name == "one_blocktiling"
    assert first.sm_pct == sgemm.kernels[0].profile.metrics.sm_throughput_pct
    assert first.memory_pct == sgemm.kernels[0].profile.metrics.memory_throughput_pct
    assert first.category == sgemm.kernels[0].findings[0].category == "launch-config"
    assert first.duration.endswith("µs") and first.share.endswith("%")


def test_run_summary_names_tool_mode_and_device(sgemm: RunRecord) -> None:
    summary = run_summary(sgemm)
    assert summary.title.startswith("ncu 2023.1.1")
    assert "4 kernels" in summary.title and "NVIDIA A10G" in summary.title
    assert summary.mode_statement is None


def test_headline_and_roofline_summary_match_the_text_report(sgemm: RunRecord) -> None:
    first, second = kernel_headline(sgemm, 1)
    assert first.startswith("[2] two_blocktiling · ")
    assert second.startswith("FP32-bound")


def test_sol_rows_emphasise_the_busiest_unit(memcpy: RunRecord) -> None:
    rows = sol_rows(memcpy.kernels[0])
    labels = [r.label for r in rows]
    assert labels[:2] == ["Compute (SM)", "Memory"]
    assert "DRAM" in labels
    busiest = [r for r in rows if r.emphasis]
    assert [r.label for r in busiest] == ["Memory"]


def test_occupancy_rows_name_the_limiter(sgemm: RunRecord) -> None:
    rows = {r.label: r for r in occupancy_rows(sgemm.kernels[1])}
    assert rows["Limiter"].text == sgemm.kernels[1].profile.occupancy.limiter == "registers"
    assert rows["Limiter"].emphasis
    assert rows["Theoretical"].pct == sgemm.kernels[1].profile.occupancy.theoretical_pct


def test_finding_items_list_findings_then_tool_rules_then_skipped(memcpy: RunRecord) -> None:
    items = finding_items(memcpy, 0)
    kinds = [i.kind for i in items]
    n = len(memcpy.kernels[0].findings)
    assert kinds[:n] == ["finding"] * n
    assert kinds[n:] == ["tool", "skipped"]
    first = items[0]
    assert first.view is not None and first.view.title == memcpy.kernels[0].findings[0].title
    assert first.speedup.startswith("≈")
    assert items[n].label.startswith("Nsight Compute's own rules")


def test_source_view_marks_recorded_hot_lines(memcpy: RunRecord) -> None:
    view = source_view(memcpy, 0, bases=[])
    hot = [r for r in view.rows if r.hot]
    assert len(hot) == len(
        {(s.file, s.line) for s in memcpy.kernels[0].profile.source_lines}
        | {(s.file, s.line) for f in memcpy.kernels[0].findings for s in f.source_lines}
    )
    assert "not found here" in view.caption
    assert view.first_hot is not None
    hottest = view.rows[view.first_hot]
    assert hottest.share == 1.0


def test_source_view_shows_context_from_the_file(memcpy: RunRecord) -> None:
    kernel_lines = memcpy.kernels[0].profile.source_lines
    file = kernel_lines[0].file
    code = [f"line {n}" for n in range(1, 400)]
    view = source_view(
        memcpy, 0, context=1, read=lambda p: code if str(p) == file else None, bases=[Path("/")]
    )
    numbered = {r.line: r for r in view.rows if r.line is not None}
    hot_line = kernel_lines[0].line
    assert numbered[hot_line].hot and numbered[hot_line].text == f"line {hot_line}"
    assert not numbered[hot_line - 1].hot and numbered[hot_line - 1].text == f"line {hot_line - 1}"


def test_source_view_without_source_says_how_to_get_it(sgemm: RunRecord) -> None:
    view = source_view(sgemm, 0)
    assert view.rows == () and "-lineinfo" in view.caption


def test_roofline_chart_places_the_selected_kernel(sgemm: RunRecord) -> None:
    plan = chart_plan(sgemm)
    grid = draw_roofline(plan, 2, 60, 16)
    text = grid.text()
    assert grid.message is None
    assert text.count("●") == 1 and text.count("○") == len(plan.points) - 1
    assert "[2]" in text and "[4]" in text
    assert "DRAM" in text and "FP32" in text and "FLOP/B" in text
    assert all(len(row) == 60 for row in grid.rows) and len(grid.rows) == 16


def test_roofline_chart_draws_a_copy_kernel_as_a_bandwidth_bar(memcpy: RunRecord) -> None:
    """No FLOPs, so no arithmetic intensity: the achieved DRAM bandwidth against the DRAM roof."""
    plan = chart_plan(memcpy)
    assert plan.points == () and shows_bandwidth(plan, 1)
    grid = draw_roofline(plan, 1, 60, 8)
    assert grid.message is None
    lines = grid.text().splitlines()
    assert lines[0].startswith("DRAM bandwidth vs DRAM roof")
    assert lines[1] == "[1] MatrixTransferKernel  1.19 TB/s = 80 % of 1.49 TB/s peak"
    bar = lines[2]
    assert bar.endswith("┃") and "░" in bar
    # 80 % of the way to the roof (the roof tick is the last column).
    filled = bar.count("█") + (1 if bar[bar.count("█")] in "▏▎▍▌▋▊▉" else 0)
    assert filled / (len(bar) - 1) == pytest.approx(0.8, abs=1 / 59)
    roles = {role for _, role in grid.rows[2]}
    assert roles == {"point", "memory-roof"}
    assert all(len(row) == 60 for row in grid.rows) and len(grid.rows) == 8


def test_bandwidth_chart_keeps_the_selected_kernel_in_view() -> None:
    bars = tuple(BandwidthBar(f"[{i}] k{i}", 1e11 * i, 1e12) for i in range(1, 7))
    plan = ChartPlan(points=(), not_plotted=(), bars=bars)
    grid = draw_bandwidth(plan, 6, 40, 5)
    text = grid.text()
    assert "[6] k6" in text and "[1] k1" not in text
    assert grid.message == "4 more kernel(s) without FLOPs do not fit; enlarge the window."
    assert grid.text().splitlines()[1].startswith("[5] k5")
    assert {role for _, role in grid.rows[1]} - {""} == {"point-other"}
    assert {role for _, role in grid.rows[3]} - {""} == {"point-label"}


def test_roofline_kernel_with_flops_keeps_the_roofline_beside_bars(
    memcpy: RunRecord, sgemm: RunRecord
) -> None:
    plan = chart_plan(sgemm)
    mixed = ChartPlan(
        points=plan.points,
        not_plotted=(),
        memory_roofs=plan.memory_roofs,
        compute_roofs=plan.compute_roofs,
        bars=(BandwidthBar("[5] copy", 1e11, 6e11),),
    )
    assert not shows_bandwidth(mixed, 2)
    assert "FLOP/B" in draw_roofline(mixed, 2, 60, 16).text()
    assert shows_bandwidth(mixed, 5)
    assert "[5] copy  100 GB/s = 16.7 % of 600 GB/s peak" in draw_roofline(mixed, 5, 60, 16).text()


def test_roofline_chart_too_small() -> None:
    plan = ChartPlan(
        points=(PlottedKernel("[1] k", 10.0, 1e12, "fp32"),), not_plotted=(), memory_roofs=(("DRAM", 1e12),)
    )
    assert draw_roofline(plan, 1, 10, 4).message == "The window is too small for the roofline chart."


def test_the_review_reads_the_core_outcomes() -> None:
    loop = FakeLoop()
    record = loop("k.cu", settings=OptimizeRequest("k.cu", "k", "f", "coalesce-access", "recipes").settings())
    outcome = outcome_of(record)
    c1, c2 = outcome.candidates
    assert (c1.id, c1.transform, c1.backend, c1.accepted) == ("c1", "coalesce-access", "recipes", True)
    assert [(c.name, c.passed) for c in c1.checks] == [("correctness", True), ("faster beyond noise", True)]
    assert measured_speedup(c1) == pytest.approx(4.0e-4 / 2.1e-4)
    assert c1.file == "k.cu" and c1.source == CANDIDATE
    metrics = {m.name: m for m in metric_rows(c1)}
    assert metrics["time (median)"].change == "1.9×"
    assert metrics["dram_throughput_pct"].change == "-18 pt"
    assert metrics["global_load_bytes_per_sector"].change == "+300 %"
    assert not c2.accepted and c2.verdict == "incorrect" and measured_speedup(c2) is None
    assert outcome.notes == ("no GPU: timings come from the recorded run",)


def test_bridge_without_loop_says_so(sgemm: RunRecord) -> None:
    bridge = OptimizeBridge(loop=False)
    assert bridge.unavailable_reason() == LOOP_UNAVAILABLE
    request = OptimizeRequest("k.cu", kernel_regex("k"), "launch-config", "launch-config", "recipes")
    with pytest.raises(OptimizeUnavailable, match=LOOP_UNAVAILABLE):
        bridge.run(request, lambda _: None)


def test_bridge_passes_the_request_and_forwards_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    import perfagent

    loop = FakeLoop()
    monkeypatch.setattr(perfagent, "optimize", loop, raising=False)
    events: list[ProgressEvent] = []
    request = OptimizeRequest(
        "k.cu", kernel_regex("one_blocktiling"), "launch-config", "launch-config", "recipes"
    )
    outcome = OptimizeBridge().run(request, events.append)
    call = loop.calls[0]
    assert call["target"] == "k.cu"
    assert call["kernel"] == "^one_blocktiling$"
    assert (call["finding"], call["transforms"], call["backend"]) == (
        "launch-config",
        ["launch-config"],
        "recipes",
    )
    assert events[0] == ProgressEvent("proposing candidates with the recipes backend")
    assert events[-1] == ProgressEvent("verifying c2", 2, 2)
    assert len(outcome.candidates) == 2


def _candidate(file: Path, source: str) -> CandidateOutcome:
    source_path = Path(tempfile.mkdtemp(prefix="perfagent-candidate-")) / "candidate.cu"  # the run folder
    source_path.write_text(source, encoding="utf-8")
    return CandidateOutcome(
        id="c1",
        rewrite_id="r",
        backend="recipes",
        transform="t",
        iteration=1,
        verification=VerificationSummary(verdict="pass", reason=""),
        verdict="accepted",
        accepted=True,
        reason="",
        file=str(file),
        source_path=str(source_path),
    )


def test_every_accept_makes_its_own_backup_and_never_overwrites_one(tmp_path: Path) -> None:
    src = tmp_path / "k.cu"
    src.write_text(ORIGINAL, encoding="utf-8")
    first = OptimizeBridge().accept(_candidate(src, CANDIDATE))
    assert first.backup == tmp_path / "k.cu.orig" and first.backup_created and not first.notes
    assert src.read_text() == CANDIDATE and first.backup.read_text() == ORIGINAL
    # The second accept backs up what it overwrites (the first candidate) without touching k.cu.orig,
    # and says where: a stale .orig is never silently taken for this write's backup.
    second = OptimizeBridge().accept(_candidate(src, "third\n"))
    assert second.backup == tmp_path / "k.cu.orig.1" and second.backup.read_text() == CANDIDATE
    assert any("k.cu.orig already held an earlier original" in n and "k.cu.orig.1" in n for n in second.notes)
    assert src.read_text() == "third\n" and first.backup.read_text() == ORIGINAL
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.cu", "k.cu.orig", "k.cu.orig.1"]


def test_source_reason(sgemm: RunRecord, source_record: RunRecord) -> None:
    reason = source_reason(sgemm)
    assert reason is not None and "recorded report" in reason
    assert source_reason(source_record) is None


def test_check_marks_follow_severity() -> None:
    checks = [
        CheckRecord(name="correctness", passed=True),
        CheckRecord(name="speed-up", passed=False, detail="no GPU", severity="skipped"),
        CheckRecord(name="targeted-metric", passed=False, severity="warning"),
        CheckRecord(name="static:no-streams", passed=False),
    ]
    assert [check_mark(check) for check in checks] == ["✓", "–", "!", "✗"]
