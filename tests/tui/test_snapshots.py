"""Snapshot tests: the app rendered to SVG at 80×24 and 120×40 on saved records, compared with accepted images.

Rendering depends on the exact Textual and pytest-textual-snapshot versions, so the snapshots are pinned to
them and skipped on any other version (update with ``pytest tests/tui --snapshot-update`` after checking the
report). Nothing shown depends on the clock or the host: records are saved JSON, the machine probe is pinned.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from importlib import metadata

import pytest
from textual.pilot import Pilot
from tui_support import MEMCPY_JSON, SGEMM_JSON, PinnedBridge, load

from tui.app import PerfAgentApp

PINNED = {"textual": "8.2.8", "pytest-textual-snapshot": "1.1.0"}
SIZES = [(80, 24), (120, 40)]


def _skip_reason() -> str | None:
    for dist, wanted in PINNED.items():
        try:
            found = metadata.version(dist)
        except metadata.PackageNotFoundError:
            return f"snapshot tests need {dist}=={wanted} (not installed)"
        if found != wanted:
            return f"snapshots are pinned to {dist}=={wanted}; found {found}"
    return None


pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")

SnapCompare = Callable[..., bool]


def _keys(*keys: str) -> Callable[[Pilot[None]], Awaitable[None]]:
    """Press ``keys``, let workers (the machine probe) finish, and settle, before the screenshot."""

    async def run_before(pilot: Pilot[None]) -> None:
        await pilot.press(*keys)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()

    return run_before


CASES = {
    "kernels": (SGEMM_JSON, ()),
    "detail-roofline": (SGEMM_JSON, ("down", "enter")),
    "detail-findings": (MEMCPY_JSON, ("enter", "2")),
    "detail-source": (MEMCPY_JSON, ("enter", "3")),
    "help": (SGEMM_JSON, ("question_mark",)),
    "walkthrough-no-loop": (SGEMM_JSON, ("enter", "o")),
}


@pytest.mark.usefixtures("no_loop")
@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("case", list(CASES))
def test_snapshot(snap_compare: SnapCompare, case: str, size: tuple[int, int]) -> None:
    path, keys = CASES[case]
    app = PerfAgentApp(load(path), bridge=PinnedBridge())
    assert snap_compare(app, terminal_size=size, run_before=_keys(*keys))
