"""Pilot test of the walkthrough driving the REAL optimize loop (``perfagent.optimize``), recipes backend, CPU.

The other walkthrough pilot tests use ``FakeLoop``; this one opens the app on a copy of
``examples/cuda/02_transpose_bank_conflicts`` (slow.cu has no ``main()``: diagnosed by static analysis, no
GPU needed), runs ``smem-padding`` with the recipes backend and reviews what the real loop returned. The
loop's device is pinned to the CPU so that the outcome does not depend on the host: without a GPU a
launch-spec kernel builds (nvcc) but is neither verified nor timed, so the loop never accepts it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.message import Message
from textual.widgets import DataTable, OptionList, Static
from tui_support import REPO, PinnedBridge, run_async, screen_ready, settle

import perfagent
from tui.app import LoadRequest, PerfAgentApp
from tui.candidate_view import Outcome
from tui.messages import CandidateAccepted, CandidateRejected, OptimizeFailed, OptimizeFinished
from tui.optimize_bridge import OptimizeRequest, ProgressEvent
from tui.screens import KernelDetailScreen, KernelsScreen, WalkthroughScreen
from tui.widgets import KernelTable

EXAMPLE = REPO / "examples" / "cuda" / "02_transpose_bank_conflicts"
KERNEL = "transpose_smem_conflicts"
TIMEOUT_S = 120.0

pytestmark = [
    pytest.mark.skipif(
        shutil.which("nvcc") is None, reason="nvcc not on PATH: the loop builds candidates with it"
    ),
    pytest.mark.skipif(not (EXAMPLE / "slow.cu").is_file(), reason=f"{EXAMPLE} is absent"),
    pytest.mark.skipif(
        getattr(perfagent, "optimize", None) is None, reason="no perfagent.optimize in this build"
    ),
]


class CpuBridge(PinnedBridge):
    """The real bridge and the real loop, with the loop's device pinned to the CPU (as on a GPU-less host)."""

    def run(self, request: OptimizeRequest, progress: Callable[[ProgressEvent], None]) -> Outcome:
        return super().run(
            dataclasses.replace(request, options={**request.options, "device": "cpu"}), progress
        )


async def _until(pilot: object, done: Callable[[], bool], what: str) -> None:
    """Pause the pilot until ``done()`` holds, at most ``TIMEOUT_S``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT_S
    while not done():
        assert loop.time() < deadline, f"timed out after {TIMEOUT_S:.0f} s waiting for {what}"
        await pilot.pause(0.1)  # type: ignore[attr-defined]


def _once(posted: list[Message], kind: type[Message]) -> list[Message]:
    return list({id(m): m for m in posted if isinstance(m, kind)}.values())


@run_async
async def test_walkthrough_runs_the_real_loop_with_recipes_on_cpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "ex"
    shutil.copytree(EXAMPLE, work)
    src = work / "slow.cu"
    original = src.read_text(encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # the run folders (.perfagent/runs) go to tmp_path, not the repo

    posted: list[Message] = []
    app = PerfAgentApp(LoadRequest(target=str(src)), bridge=CpuBridge())
    async with app.run_test(size=(120, 36), message_hook=posted.append) as pilot:
        await screen_ready(pilot, KernelsScreen)  # the diagnosis of slow.cu, then its screen mounted
        assert app.record is not None and app.record.mode == "static"
        names = [k.name for k in app.record.kernels]
        assert KERNEL in names
        app.screen.query_one(KernelTable).move_cursor(row=names.index(KERNEL))
        await pilot.press("enter")
        detail = await screen_ready(pilot, KernelDetailScreen)
        assert detail.kernel.name == KERNEL

        await pilot.press("o")
        screen = await screen_ready(pilot, WalkthroughScreen)
        await _until(pilot, lambda: screen.capabilities is not None, "the machine probe")
        # smem-padding: the finding's own transform, or (static analysis) one of the catalog's recipes.
        await pilot.press("enter")  # the finding → the transform list
        transforms = screen.query_one("#wt-transforms", OptionList)
        assert transforms.has_focus
        offered = [transforms.get_option_at_index(i).id for i in range(transforms.option_count)]
        assert "smem-padding" in offered, offered
        for _ in range(offered.index("smem-padding")):
            await pilot.press("down")
        assert screen._transform() == "smem-padding"
        assert screen._backend() == "recipes"

        await pilot.press("r")
        await _until(
            pilot,
            lambda: bool(_once(posted, OptimizeFinished) or _once(posted, OptimizeFailed)),
            "the optimize loop",
        )
        await settle(app)
        await pilot.pause()
        assert not _once(posted, OptimizeFailed), [m.message for m in _once(posted, OptimizeFailed)]  # type: ignore[attr-defined]

        assert screen.outcome is not None
        padded = [
            c for c in screen.outcome.candidates if c.transform == "smem-padding" and c.backend == "recipes"
        ]
        assert padded, screen.outcome.candidates
        c = padded[0]
        # The real loop's wording (perfagent/optimize/loop.py, outcome.py): built, not verified, not timed.
        assert not c.accepted and c.verdict == "not-verified"
        assert "not verified (no GPU)" in c.reason and "speed-up not measured" in c.reason
        assert c.time_s_before is None and c.time_s is None
        assert any("no GPU" in n and "not timed" in n for n in screen.outcome.notes)
        assert "no GPU" in str(screen.query_one("#wt-status", Static).render())

        table = screen.query_one("#wt-candidates", DataTable)
        rows = [[cell.plain for cell in table.get_row_at(i)] for i in range(table.row_count)]
        padded_row = next(i for i, r in enumerate(rows) if r[0] == c.id)
        assert rows[padded_row][1:4] == ["smem-padding", "recipes", "not-verified"]
        table.move_cursor(row=padded_row)
        await pilot.pause()

        checks = screen.query_one("#wt-checks", DataTable)
        check_rows = {
            r[1]: r for r in ([x.plain for x in checks.get_row_at(i)] for i in range(checks.row_count))
        }
        assert check_rows["build"][0] == "✓"
        assert check_rows["correctness"][0] == "–" and "not verified (no GPU)" in check_rows["correctness"][2]

        diff = str(screen.query_one("#diff-text", Static).render())
        assert "+    __shared__ float tile[TILE_DIM][TILE_DIM + 1];" in diff
        assert "+ 1]" in c.diff

        await pilot.press("a")  # refused: the loop did not accept it
        await pilot.pause()
        assert not _once(posted, CandidateAccepted)
        assert any(n.title == "Not accepted" for n in app._notifications)
        assert src.read_text(encoding="utf-8") == original

        await pilot.press("x")
        await pilot.pause()
        assert [m.candidate.id for m in _once(posted, CandidateRejected)] == [c.id]  # type: ignore[attr-defined]
        assert table.get_row_at(padded_row)[-1].plain == "rejected"

    assert src.read_text(encoding="utf-8") == original
    assert not list(work.glob("*.orig"))
    assert sorted(p.name for p in work.iterdir()) == sorted(p.name for p in EXAMPLE.iterdir())
