"""The TUI defects of issue 10 (first contact), each driven through the real app on real records.

Records: the examples' own recorded report (``examples/reports/suite.ncu-rep``, 20 kernels on an H200,
diagnosed at test time), the saved public ones in ``data/``, and optimize runs saved by the real loop.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import DataTable, OptionList, Static, TabbedContent
from tui_support import (
    LONG_CHECK_DETAIL,
    LONG_LOG_LINE,
    REPO,
    FakeLoop,
    PinnedBridge,
    run_async,
    screen_ready,
    settle,
)

import perfagent
from perfagent.records import RunRecord
from perfagent.render.units import fmt_seconds
from tui.app import LoadRequest, PerfAgentApp
from tui.optimize_bridge import recipe_languages, source_languages
from tui.screens import OptimizeRunScreen, WalkthroughScreen
from tui.viewmodels import SOL_NOTE, compact_share
from tui.widgets import FindingsList, KernelTable, SourcePane, WrappedLog
from tui.widgets.kernel_table import SORT_MARK

EXAMPLES = REPO / "examples"


def _app(source: object) -> PerfAgentApp:
    return PerfAgentApp(source, bridge=PinnedBridge())  # type: ignore[arg-type]


def _text(app: PerfAgentApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def _column(table: KernelTable, key: str) -> tuple[int, list[str]]:
    """(width, cells as shown) of the column ``key``."""
    keys = [k.value for k in table.columns]
    assert key in keys, f"no '{key}' column: {keys}"
    index = keys.index(key)
    column = table.ordered_columns[index]
    return column.width, [table.get_row_at(i)[index].plain for i in range(table.row_count)]


def test_compact_share_keeps_its_unit_and_fits() -> None:
    cases = {
        0.643: "64.3 %",
        0.0597: "5.97 %",
        0.005537: "0.55 %",
        0.00099: "<0.1 %",
        0.0: "0 %",
        1.0: "100 %",
    }
    assert {f: compact_share(f) for f in cases} == cases
    assert compact_share(None) == "n/a"
    assert all(len(compact_share(x / 10000)) <= 6 for x in range(10001))


@run_async
async def test_shares_under_one_percent_keep_their_percent_sign(suite: RunRecord) -> None:
    small = [k for k in suite.kernels if k.share_of_total is not None and k.share_of_total < 0.01]
    assert small, "the suite report has kernels under 1 % of the time"
    for size in ((80, 30), (120, 30)):
        app = _app(suite)
        async with app.run_test(size=size):
            table = app.screen.query_one(KernelTable)
            width, shares = _column(table, "share")
            assert len(shares) == len(suite.kernels)
            assert all(s.endswith("%") and len(s) <= width for s in shares), shares


@run_async
async def test_narrow_kernel_list_shows_the_column_it_is_sorted_by(suite: RunRecord) -> None:
    app = _app(suite)
    async with app.run_test(size=(80, 30)):
        table = app.screen.query_one(KernelTable)
        assert table.max_scroll_x == 0, "every column is on screen"
        _, cells = _column(table, "recoverable")
        labels = {str(c.key.value): str(c.label) for c in table.ordered_columns}
        assert labels["recoverable"].endswith(SORT_MARK)
        times = [k.recoverable_s for k in suite.kernels]
        assert cells == [f"≈{fmt_seconds(t)}" for t in times]
        assert times == sorted(times, reverse=True), "the list is ranked by recoverable time"


@run_async
async def test_home_and_end_go_to_the_first_and_last_row(suite: RunRecord) -> None:
    app = _app(suite)
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.screen.query_one(KernelTable)
        await pilot.press("end")
        assert table.cursor_row == len(suite.kernels) - 1
        assert suite.kernels[-1].name in _text(app, "#kernel-preview")
        await pilot.press("home")
        assert table.cursor_row == 0
        await pilot.press("enter", "2")
        findings = app.screen.query_one(FindingsList)
        await pilot.press("end")
        assert findings.highlighted == findings.option_count - 1
        await pilot.press("home")
        assert findings.highlighted == 0


PARTIAL_BLOCKS = "▏▎▍▌▋▊▉"


@run_async
async def test_source_pane_wraps_prose_so_no_stray_scrollbar_glyph_shows(sgemm: RunRecord) -> None:
    """The caption was one unwrapped line wider than the pane: a horizontal scrollbar for nothing, whose
    thumb edge (``▉`` and kin) was the only thing it showed."""
    app = _app(sgemm)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("enter", "3")
        await pilot.pause()
        pane = app.screen.query_one(SourcePane)
        assert pane.max_scroll_x == 0 and not pane.horizontal_scrollbar.display
        text = _text(app, "#source-text")
        assert "No source-level data" in text and "to see hot lines here." in text
        assert max(len(line) for line in text.splitlines()) <= pane.scrollable_content_region.width
        assert not any(glyph in app.export_screenshot() for glyph in PARTIAL_BLOCKS)


@run_async
async def test_source_pane_wraps_notes_and_opens_on_the_hottest_line(memcpy: RunRecord) -> None:
    app = _app(memcpy)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("enter", "3")
        await pilot.pause()
        pane = app.screen.query_one(SourcePane)
        assert pane.max_scroll_x == 0, "the notes wrap; the code fits 120 columns"
        text = _text(app, "#source-text").splitlines()
        note = next(i for i, line in enumerate(text) if "└ This line is responsible" in line)
        assert "See markers on" in " ".join(text[note : note + 4])
        hottest = next(i for i, line in enumerate(text) if "12,284 │" in line)
        assert pane.scroll_y <= hottest < pane.scroll_y + pane.scrollable_content_region.height
        assert pane.scroll_y > 0


def _offered(screen: WalkthroughScreen) -> tuple[list[str], str | None]:
    """(transform ids offered, the pre-selected one)."""
    transforms = screen.query_one("#wt-transforms", OptionList)
    ids = [str(transforms.get_option_at_index(i).id) for i in range(transforms.option_count)]
    return ids, screen._transform()


async def _walkthrough(app: PerfAgentApp, pilot: Pilot[None]) -> WalkthroughScreen:
    await pilot.press("enter", "o")
    screen: WalkthroughScreen = await screen_ready(pilot, WalkthroughScreen)
    return screen


@pytest.fixture
def static_cuda(tmp_path: Path) -> RunRecord:
    """A copy of examples/cuda/01_transpose_naive/slow.cu diagnosed by static analysis (no GPU needed)."""
    shutil.copytree(EXAMPLES / "cuda" / "01_transpose_naive", tmp_path / "ex")
    return perfagent.diagnose(tmp_path / "ex" / "slow.cu", save=False)


@run_async
async def test_walkthrough_offers_only_recipes_for_the_files_language(static_cuda: RunRecord) -> None:
    assert static_cuda.mode == "static"
    app = _app(static_cuda)
    async with app.run_test(size=(100, 30)) as pilot:
        offered, chosen = _offered(await _walkthrough(app, pilot))
        assert offered and chosen == offered[0]
        assert all("cuda" in recipe_languages(t) for t in offered), offered


@run_async
async def test_walkthrough_preselects_a_transform_a_recipe_can_do_on_cuda(static_cuda: RunRecord) -> None:
    """A finding that names a transform with no CUDA recipe first (use-tensor-cores is the llm's alone)."""
    kd = static_cuda.kernels[0]
    finding = kd.findings[0].model_copy(update={"transforms": ["use-tensor-cores", "restrict-pointers"]})
    record = static_cuda.model_copy(update={"kernels": [kd.model_copy(update={"findings": [finding]})]})
    app = _app(record)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _walkthrough(app, pilot)
        offered, chosen = _offered(screen)
        assert offered[:2] == ["use-tensor-cores", "restrict-pointers"]
        assert chosen == "restrict-pointers"
        transforms = screen.query_one("#wt-transforms", OptionList)
        assert "llm only" in str(transforms.get_option_at_index(0).prompt)
        assert "llm only" not in str(transforms.get_option_at_index(1).prompt)


def test_source_languages_of_the_examples() -> None:
    assert source_languages(EXAMPLES / "cuda" / "01_transpose_naive" / "slow.cu") == {"cuda"}
    assert source_languages(EXAMPLES / "triton" / "01_matmul_bad_config.py") == {"triton"}
    assert source_languages(EXAMPLES / "kernelbench" / "01_vector_add_cuda.py") == {"cuda"}
    assert source_languages(EXAMPLES / "kernelbench" / "01_vector_add.py") == {"python"}
    assert source_languages(EXAMPLES / "reports" / "suite.ncu-rep") == frozenset()
    # grid-swizzle has a Triton recipe and, since issue 23, a CUDA one (grid-swizzle-cuda)
    assert recipe_languages("grid-swizzle") == {"triton", "python", "cuda"}
    assert recipe_languages("smem-tiling") == {"cuda"}
    assert recipe_languages("register-tiling") == {"cuda"}
    assert recipe_languages("use-tensor-cores") == frozenset()


def _lines(widget: Widget) -> list[str]:
    """The text a widget shows, line by line, as laid out at its width."""
    return [strip.text.rstrip() for strip in widget.render_lines(widget.region.reset_offset)]


@run_async
async def test_reasons_check_details_and_log_lines_wrap(
    source_record: RunRecord, fake_loop: FakeLoop
) -> None:
    app = _app(source_record)
    async with app.run_test(size=(80, 30)) as pilot:
        screen = await _walkthrough(app, pilot)
        await pilot.press("r")
        await settle(app)
        await pilot.pause()
        reason = screen.query_one("#wt-reason", Static)
        c1 = fake_loop.calls and screen.review.current()
        assert c1 is not None and c1.id == "c1"
        shown = _lines(reason)
        assert len(shown) >= 2 and all(len(line) <= reason.size.width for line in shown)
        assert " ".join(" ".join(shown).split()).endswith(" ".join(c1.reason.split()))

        await pilot.press("down")  # c2: its check detail is longer than the pane
        screen.query_one("#wt-tabs", TabbedContent).active = "tab-checks"
        await pilot.pause()
        checks = screen.query_one("#wt-checks", DataTable)
        assert checks.max_scroll_x == 0, "the detail wraps instead of running off the pane"
        detail = checks.get_row_at(0)[2]
        assert detail.plain == LONG_CHECK_DETAIL and checks.rows[next(iter(checks.rows))].height > 1

        screen.query_one("#wt-tabs", TabbedContent).active = "tab-log"
        await pilot.pause()
        log = screen.query_one("#wt-log", WrappedLog)
        assert LONG_LOG_LINE in log.lines
        text = log.query_one(Static)
        shown = _lines(text)
        assert all(len(line) <= text.size.width for line in shown)
        assert "".join(shown).replace(" ", "").find(LONG_LOG_LINE.replace(" ", "")) >= 0


@pytest.fixture(scope="module")
def saved_triton_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Triton optimize run saved by the real loop (recipes, CPU: verified with the interpreter, not timed)."""
    pytest.importorskip("triton")
    work = tmp_path_factory.mktemp("triton")
    src = work / "matmul.py"
    shutil.copy(EXAMPLES / "triton" / "01_matmul_bad_config.py", src)
    run = work / "run"
    perfagent.optimize(
        src,
        backend="recipes",
        transform="grid-swizzle",
        iterations=1,
        max_candidates=2,
        device="cpu",
        out=run,
    )
    return run


@run_async
async def test_a_saved_triton_optimize_run_opens_on_its_baseline_and_candidates(
    saved_triton_run: Path,
) -> None:
    saved = perfagent.load(saved_triton_run)
    assert isinstance(saved, RunRecord) and saved.kind == "optimize" and saved.optimize is not None
    assert saved.candidates and not saved.kernels, "the loop profiled nothing here: no kernels"
    app = _app(LoadRequest(target=str(saved_triton_run)))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, OptimizeRunScreen)
        head = " ".join(" ".join(_lines(screen.query_one("#run-head", Static))).split())
        assert "0 kernels" not in head
        assert f"{len(saved.candidates)} candidates" in head
        assert "Baseline" in head and "n/a (not timed)" in head and "triton-script · triton" in head
        table = screen.query_one("#wt-candidates", DataTable)
        rows = [[cell.plain for cell in table.get_row_at(i)] for i in range(table.row_count)]
        assert [r[:4] for r in rows] == [[c.id, c.transform, c.backend, c.verdict] for c in saved.candidates]
        assert saved.candidates[0].reason in " ".join(
            str(screen.query_one("#wt-reason", Static).render()).split()
        )
        diff = str(screen.query_one("#diff-text", Static).render())
        assert "GROUP_M" in diff and "+" in diff
        await pilot.press("end")
        assert table.cursor_row == table.row_count - 1
        await pilot.press("home", "a")  # the loop accepted nothing (no GPU): nothing is written
        await pilot.pause()
        assert any(n.title == "Not accepted" for n in app._notifications)
        assert (
            Path(saved.optimize.target).read_text()
            == (EXAMPLES / "triton" / "01_matmul_bad_config.py").read_text()
        )


@run_async
async def test_roofline_percent_and_speed_of_light_percent_are_labelled_apart(suite: RunRecord) -> None:
    """sgemm_naive: the roofline puts its L1 traffic at 5.97 % of the L1 bandwidth peak while the profiler
    reports the L1/TEX unit 99 % busy (uncoalesced loads). Both are right; each must say what it is."""
    kd = suite.kernels[0]
    assert kd.name == "sgemm_naive" and kd.roofline is not None and kd.roofline.bounding_resource == "l1"
    busy = kd.profile.metrics.l1_throughput_pct
    assert busy is not None and busy > 90
    app = _app(suite)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("enter")
        title = _text(app, "#kernel-title").splitlines()
        assert title[1].startswith("Roofline L1-bound: 2 TB/s = 5.97 % of 33.5 TB/s peak")
        panel = " ".join(_lines(app.screen.query_one("#sol", Widget)))
        assert " ".join(SOL_NOTE.split()) in " ".join(panel.split())
        assert "L1/TEX" in panel and "99 %" in panel
