"""``screen_ready`` waits for a switched-to screen's compose and mount, not only for it being on the stack.

The race behind the flaky ``NoMatches`` of the pilot tests (issue 26): ``switch_screen`` makes
``app.screen`` the new screen before its message loop has composed it. Here the new screen's mount is held
on an event the test controls, so the window the race needs is open for as long as the test wants, on any
machine load.
"""

from __future__ import annotations

import asyncio

import pytest
from textual.app import App, ComposeResult
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static
from tui_support import run_async, screen_ready


class SlowScreen(Screen[None]):
    """A screen whose composed widgets are mounted only once ``release`` is set (as a loaded CPU delays it)."""

    def __init__(self, release: asyncio.Event) -> None:
        super().__init__()
        self.release = release

    async def mount_composed_widgets(self, widgets: list[Widget]) -> None:
        await self.release.wait()
        await super().mount_composed_widgets(widgets)

    def compose(self) -> ComposeResult:
        yield Static("ready", id="body")


class FirstScreen(Screen[None]):
    def compose(self) -> ComposeResult:
        yield Static("first")


class TwoScreens(App[None]):
    def on_mount(self) -> None:
        self.push_screen(FirstScreen())


@run_async
async def test_a_switched_screen_is_on_the_stack_before_its_widgets_exist() -> None:
    release = asyncio.Event()
    app = TwoScreens()
    async with app.run_test() as pilot:
        app.switch_screen(SlowScreen(release))
        assert isinstance(app.screen, SlowScreen)  # what the old tests waited for ...
        with pytest.raises(NoMatches):
            app.screen.query_one("#body")  # ... and then queried too early
        release.set()
        ready = await screen_ready(pilot, SlowScreen, timeout_s=30)
        assert str(ready.query_one("#body", Static).render()) == "ready"


@run_async
async def test_screen_ready_times_out_instead_of_hanging() -> None:
    release = asyncio.Event()
    app = TwoScreens()
    async with app.run_test() as pilot:
        app.switch_screen(SlowScreen(release))
        with pytest.raises(TimeoutError):
            await screen_ready(pilot, SlowScreen, timeout_s=0.5)
        release.set()
