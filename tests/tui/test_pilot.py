"""Pilot tests: drive the real app with keys and check screens, widgets and the Messages posted."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

import pytest
from textual.message import Message
from textual.widgets import ContentSwitcher, DataTable, OptionList, Static, TabbedContent
from tui_support import (
    CANDIDATE,
    MEMCPY_REPORT,
    ORIGINAL,
    SGEMM_JSON,
    FakeLoop,
    PinnedBridge,
    run_async,
    screen_ready,
    settle,
)

import perfagent
from perfagent.records import RunRecord
from tui.app import LoadRequest, PerfAgentApp
from tui.messages import (
    CandidateAccepted,
    CandidateRejected,
    KernelOpened,
    LoadFailed,
    OptimizeFinished,
    OptimizeProgress,
    RecordLoaded,
)
from tui.optimize_bridge import LOOP_UNAVAILABLE
from tui.screens import HelpScreen, KernelDetailScreen, KernelsScreen, LoadingScreen, WalkthroughScreen
from tui.widgets import FindingsList, KernelTable, RooflineChart, SourcePane, WrappedLog

M = TypeVar("M", bound=Message)


def _app(record: RunRecord | LoadRequest) -> tuple[PerfAgentApp, list[Message]]:
    posted: list[Message] = []
    return PerfAgentApp(record, bridge=PinnedBridge()), posted


def _posted(posted: list[Message], kind: type[M]) -> list[M]:
    """Messages of ``kind``, each once (the hook sees a bubbling message at every node it reaches)."""
    seen: dict[int, M] = {}
    for m in posted:
        if isinstance(m, kind):
            seen.setdefault(id(m), m)
    return list(seen.values())


def _text(app: PerfAgentApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


@run_async
async def test_kernel_list_is_ranked_and_enter_opens_detail(sgemm: RunRecord) -> None:
    app, posted = _app(sgemm)
    async with app.run_test(size=(80, 24), message_hook=posted.append) as pilot:
        assert isinstance(app.screen, KernelsScreen)
        table = app.screen.query_one(KernelTable)
        assert table.row_count == 4
        assert [table.get_row_at(i)[1].plain for i in range(4)] == [
            "one_blocktil…",
            "two_blocktil…",
            "vectorized_b…",
            "warptiling",
        ]
        await pilot.press("down", "enter")
        assert isinstance(app.screen, KernelDetailScreen)
        assert app.screen.index == 1
        assert [m.index for m in _posted(posted, KernelOpened)] == [1]
        assert _text(app, "#kernel-title").startswith("[2] two_blocktiling")
        await pilot.press("escape")
        assert isinstance(app.screen, KernelsScreen)
        assert app.screen.query_one(KernelTable).cursor_row == 1


@run_async
async def test_detail_tabs_show_findings_and_source(memcpy: RunRecord) -> None:
    app, _ = _app(memcpy)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("enter")
        screen = app.screen
        assert isinstance(screen, KernelDetailScreen)
        tabs = screen.query_one(TabbedContent)
        assert tabs.active == "overview"
        # A copy kernel has no FLOPs: the chart shows its DRAM bandwidth against the DRAM roof.
        assert "achieved DRAM bandwidth" in _text(app, "#chart-caption")
        chart = str(screen.query_one(RooflineChart).render())
        assert "[1] MatrixTransferKernel  1.19 TB/s = 80 % of 1.49 TB/s peak" in chart and "┃" in chart
        await pilot.press("2")
        assert tabs.active == "findings"
        findings = screen.query_one(FindingsList)
        assert findings.option_count == len(memcpy.kernels[0].findings) + 2
        head = _text(app, "#finding-head")
        assert memcpy.kernels[0].findings[0].title in head
        await pilot.press("down")
        assert memcpy.kernels[0].findings[1].title in _text(app, "#finding-head")
        await pilot.press("3")
        assert tabs.active == "source"
        source = str(screen.query_one(SourcePane).query_one("#source-text", Static).render())
        assert "hot lines" in source and "▶" in source


@run_async
async def test_help_opens_and_escape_closes(sgemm: RunRecord) -> None:
    app, _ = _app(sgemm)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = _text(app, "#help-text")
        assert "Kernel detail" in text and "Optimize" in text and "About this run" in text
        await pilot.press("escape")
        assert isinstance(app.screen, KernelsScreen)


@run_async
async def test_q_quits(sgemm: RunRecord) -> None:
    app, _ = _app(sgemm)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("enter", "q")
        await pilot.pause()
    assert app.return_code == 0


async def _open_walkthrough(app: PerfAgentApp, pilot: object) -> WalkthroughScreen:
    await pilot.press("enter", "o")  # type: ignore[attr-defined]
    screen: WalkthroughScreen = await screen_ready(pilot, WalkthroughScreen)
    return screen


@pytest.mark.usefixtures("no_loop")
@run_async
async def test_walkthrough_says_the_loop_is_not_available(sgemm: RunRecord) -> None:
    assert getattr(perfagent, "optimize", None) is None
    app, _ = _app(sgemm)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open_walkthrough(app, pilot)
        assert LOOP_UNAVAILABLE in _text(app, "#wt-capabilities")
        assert LOOP_UNAVAILABLE in _text(app, "#wt-run-hint")
        transforms = screen.query_one("#wt-transforms", OptionList)
        assert transforms.option_count == len(sgemm.kernels[0].findings[0].transforms)
        await pilot.press("r")
        await pilot.pause()
        assert screen.query_one(ContentSwitcher).current == "choose"
        assert any(LOOP_UNAVAILABLE in str(n.message) for n in app._notifications)
        await pilot.press("escape")
        assert isinstance(app.screen, KernelDetailScreen)


@run_async
async def test_walkthrough_runs_recipes_and_accepts(source_record: RunRecord, fake_loop: FakeLoop) -> None:
    src = Path(source_record.target)
    app, posted = _app(source_record)
    async with app.run_test(size=(100, 30), message_hook=posted.append) as pilot:
        screen = await _open_walkthrough(app, pilot)
        assert "✓ loop: available" in _text(app, "#wt-capabilities")
        await pilot.press("r")
        await settle(app)
        await pilot.pause()
        call = fake_loop.calls[0]
        assert call["backend"] == "recipes"
        assert call["target"] == str(src)
        assert call["kernel"] == "^one_blocktiling$"
        assert call["transforms"] == [source_record.kernels[0].findings[0].transforms[0]]
        assert [m.text for m in _posted(posted, OptimizeProgress)][-1] == "[2/2] verifying c2"
        assert any(isinstance(m, OptimizeFinished) for m in posted)
        log = screen.query_one("#wt-log", WrappedLog)
        assert any("verifying c1" in line for line in log.lines)
        candidates = screen.query_one("#wt-candidates", DataTable)
        assert candidates.row_count == 2 and candidates.cursor_row == 0
        assert screen.query_one("#wt-tabs", TabbedContent).active == "tab-diff"
        checks = screen.query_one("#wt-checks", DataTable)
        assert checks.row_count == 2
        metrics = screen.query_one("#wt-metrics", DataTable)
        assert metrics.get_row_at(0)[0].plain == "time (median)"
        await pilot.press("a")
        await pilot.pause()
        assert src.read_text() == CANDIDATE
        assert src.with_name("k.cu.orig").read_text() == ORIGINAL
        accepted = _posted(posted, CandidateAccepted)
        assert [(m.candidate.id, m.path, m.backup_created) for m in accepted] == [("c1", src, True)]


@run_async
async def test_walkthrough_rejects_and_refuses_failed_candidates(
    source_record: RunRecord, fake_loop: FakeLoop
) -> None:
    src = Path(source_record.target)
    app, posted = _app(source_record)
    async with app.run_test(size=(100, 30), message_hook=posted.append) as pilot:
        screen = await _open_walkthrough(app, pilot)
        await pilot.press("r")
        await settle(app)
        await pilot.pause()
        await pilot.press("down")
        checks = screen.query_one("#wt-checks", DataTable)
        assert checks.get_row_at(0)[0].plain == "✗"
        await pilot.press("a")
        await pilot.pause()
        assert src.read_text() == ORIGINAL and not src.with_name("k.cu.orig").exists()
        assert not any(isinstance(m, CandidateAccepted) for m in posted)
        await pilot.press("x")
        await pilot.pause()
        assert [m.candidate.id for m in _posted(posted, CandidateRejected)] == ["c2"]
        assert src.read_text() == ORIGINAL
        await pilot.press("escape")
        assert screen.query_one(ContentSwitcher).current == "choose"


@run_async
async def test_recorded_report_cannot_run_and_says_why(sgemm: RunRecord, fake_loop: FakeLoop) -> None:
    app, _ = _app(sgemm)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open_walkthrough(app, pilot)
        assert "recorded report" in _text(app, "#wt-run-hint")
        await pilot.press("r")
        await pilot.pause()
        assert screen.query_one(ContentSwitcher).current == "choose"
        assert fake_loop.calls == []


@run_async
async def test_loading_a_report_runs_diagnose_in_a_worker(live_records: dict[str, RunRecord]) -> None:
    app, posted = _app(LoadRequest(target=str(MEMCPY_REPORT)))
    async with app.run_test(size=(80, 24), message_hook=posted.append) as pilot:
        await screen_ready(pilot, KernelsScreen)
        loaded = [m.record for m in _posted(posted, RecordLoaded)]
        assert len(loaded) == 1
        assert [k.name for k in loaded[0].kernels] == [
            k.name for k in live_records[MEMCPY_REPORT.stem].kernels
        ]


@run_async
async def test_loading_a_saved_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "record.json").write_text(SGEMM_JSON.read_text())
    app, _ = _app(LoadRequest(target=str(run)))
    async with app.run_test(size=(80, 24)) as pilot:
        await screen_ready(pilot, KernelsScreen)
        assert app.screen.query_one(KernelTable).row_count == 4


@run_async
async def test_load_failure_is_shown_and_sets_the_exit_code(tmp_path: Path) -> None:
    bad = tmp_path / "record.json"
    bad.write_text('{"not": "a record"}')
    app, posted = _app(LoadRequest(target=str(bad)))
    async with app.run_test(size=(80, 24), message_hook=posted.append) as pilot:
        await settle(app)
        await pilot.pause()
        assert isinstance(app.screen, LoadingScreen)
        assert any(isinstance(m, LoadFailed) for m in posted)
        assert "is not a perfagent run record" in _text(app, "#loading-error")
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 2


@run_async
async def test_a_bare_static_record_renders_everywhere() -> None:
    from profilers.model import KernelDiagnosis, KernelProfile

    bare = RunRecord(
        target="kernels/k.cu",
        tool="static",
        mode="static",
        kernels=[
            KernelDiagnosis(
                name="void k()", duration_s=None, profile=KernelProfile(name="void k()", base_name="k")
            )
        ],
    )
    app, _ = _app(bare)
    async with app.run_test(size=(80, 24)) as pilot:
        assert "STATIC ANALYSIS" in _text(app, "#run-summary")
        await pilot.press("enter")
        assert "n/a" in _text(app, "#kernel-title")
        await pilot.press("2", "3", "1", "o")
        await screen_ready(pilot, WalkthroughScreen)
        assert "no findings to act on" in _text(app, "#wt-finding-text")
        await pilot.press("r")
        await pilot.pause()
        assert app.screen.query_one(ContentSwitcher).current == "choose"
