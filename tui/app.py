"""PerfAgentApp: the Textual application. Loads a run through the library API in a worker, then shows screens.

The app is a client of ``perfagent``: a target is read or profiled by ``perfagent.diagnose`` (a saved run
is loaded with ``perfagent.load`` and shown as saved, like ``perfagent report``: a saved optimize run opens
on its baseline and candidates), in a thread worker whose
progress and result arrive as Messages; everything shown is a view of the ``RunRecord``. Nothing here
profiles, classifies or estimates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.screen import Screen
from textual.worker import get_current_worker

import perfagent
from perfagent.records import RunRecord
from perfagent.workloads.describe import Describe, describe_target
from perfagent.workloads.registry import resolve_profile_target
from perfagent.workloads.targets import ProfileTarget
from profilers.core_errors import PerfAgentError, exit_code_for
from tui.messages import LoadFailed, LoadProgress, RecordLoaded
from tui.optimize_bridge import OptimizeBridge
from tui.screens import (
    HelpScreen,
    KernelDetailScreen,
    KernelsScreen,
    LoadingScreen,
    OptimizeRunScreen,
    WalkthroughScreen,
)


class LoadCancelled(Exception):
    """The app closed while a target was still loading."""


@dataclass(frozen=True)
class LoadRequest:
    """What to hand ``perfagent.diagnose``: a target (or a command) and the CLI's profiling options."""

    target: str | ProfileTarget | None
    """A path as the user gave it, or the target ``perfagent tui`` already described (not classified again)."""
    command: Sequence[str] = ()
    options: Mapping[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        """The target as the user gave it."""
        if self.target is None:
            return " ".join(self.command)
        return self.target if isinstance(self.target, str) else self.target.describe()


def _load_or_diagnose(
    request: LoadRequest, progress: Callable[[str], None], describe: Describe = describe_target
) -> RunRecord:
    """A saved run is shown as saved (as ``perfagent report`` does); anything else goes through ``diagnose``.

    The target is classified once (``describe``), unless the request carries it already described."""
    target = resolve_profile_target(request.target, request.command, describe)
    if target.is_saved_run:
        progress(f"loading saved run {request.describe()}")
        loaded = perfagent.load(target)
        if isinstance(loaded, RunRecord):
            return loaded
    return perfagent.diagnose(target, progress=progress, **dict(request.options))


def first_screen(record: RunRecord) -> Screen[None]:
    """A saved optimize run opens on its candidates; anything else on its kernel list."""
    if record.kind == "optimize":
        return OptimizeRunScreen(record)
    return KernelsScreen(record)


def split_error(exc: BaseException) -> tuple[str, str]:
    """(cause, next step) of an error, as the CLI's one-line message says them."""
    if isinstance(exc, PerfAgentError):
        return exc.message, exc.hint
    return f"internal error: {type(exc).__name__}: {exc}", "rerun `perfagent tui --debug` and report it"


class PerfAgentApp(App[None]):
    """Kernel list → kernel detail → optimize walkthrough, on a record or on a target loaded in a worker."""

    CSS_PATH = "perfagent.tcss"
    TITLE = "perfagent"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help", key_display="?"),
    ]

    def __init__(self, source: RunRecord | LoadRequest, *, bridge: OptimizeBridge | None = None) -> None:
        super().__init__()
        self.source = source
        self.bridge = bridge or OptimizeBridge()
        self.record: RunRecord | None = source if isinstance(source, RunRecord) else None
        self.load_error: BaseException | None = None

    def on_mount(self) -> None:
        if isinstance(self.source, RunRecord):
            self.push_screen(first_screen(self.source))
            return
        self.push_screen(LoadingScreen(self.source.describe()))
        self.load(self.source)

    @work(thread=True, exclusive=True, exit_on_error=False, group="load")
    def load(self, request: LoadRequest) -> None:
        """Run ``perfagent.diagnose`` off the UI thread; report progress and the result as Messages."""
        worker = get_current_worker()

        def progress(text: str) -> None:
            if worker.is_cancelled:
                raise LoadCancelled()
            self.post_message(LoadProgress(text))

        try:
            record = _load_or_diagnose(request, progress)
        except LoadCancelled:
            return
        except Exception as exc:  # every failure is shown, then re-raised by run_tui for the exit code
            message, hint = split_error(exc)
            self.post_message(LoadFailed(exc, message, hint))
            return
        self.post_message(RecordLoaded(record))

    def on_load_progress(self, message: LoadProgress) -> None:
        if isinstance(self.screen, LoadingScreen):
            self.screen.add_line(message.text)

    def on_record_loaded(self, message: RecordLoaded) -> None:
        self.record = message.record
        self.switch_screen(first_screen(message.record))

    def on_load_failed(self, message: LoadFailed) -> None:
        self.load_error = message.error
        if isinstance(self.screen, LoadingScreen):
            self.screen.show_error(message.message, message.hint)

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        sections = [
            ("Kernel list", KernelsScreen.BINDINGS),
            ("Kernel detail", KernelDetailScreen.BINDINGS),
            ("Optimize walkthrough", WalkthroughScreen.BINDINGS),
            ("Saved optimize run", OptimizeRunScreen.BINDINGS),
            ("Anywhere", self.BINDINGS),
        ]
        self.push_screen(HelpScreen(sections, self.record))

    async def action_quit(self) -> None:
        self.exit(return_code=exit_code_for(self.load_error) if self.load_error is not None else 0)
