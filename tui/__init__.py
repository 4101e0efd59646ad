"""perfagent's terminal UI (Textual). Imports perfagent; nothing in perfagent imports it.

``run_tui`` is the only entry point; ``perfagent tui`` calls it through ``importlib`` so that the headless
core never loads Textual.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from perfagent.records import RunRecord
from perfagent.workloads.targets import ProfileTarget

__all__ = ["run_tui"]


def run_tui(
    target_or_record: str | Path | RunRecord | ProfileTarget | None,
    *,
    command: Sequence[str] = (),
    options: Mapping[str, Any] | None = None,
) -> int:
    """Open the TUI on a record, or on a target that ``perfagent.diagnose`` loads in the background.

    Args:
        target_or_record: a ``RunRecord``; or a report, source or run folder (as for ``perfagent diagnose``),
            as a path or already described (``perfagent tui`` checked it before the screen opened); or None
            with ``command`` set.
        command: argv to profile (what follows ``--`` on the CLI).
        options: ``perfagent.diagnose`` keyword options (the CLI's profiling options).

    Returns:
        0 when the user quit normally.

    Raises:
        PerfAgentError: loading the target failed (after the UI showed why and was closed).
    """
    # textual loads when the TUI starts, not with `import tui`
    from tui.app import LoadRequest, PerfAgentApp

    if isinstance(target_or_record, RunRecord):
        source: RunRecord | LoadRequest = target_or_record
    else:
        target = str(target_or_record) if isinstance(target_or_record, str | Path) else target_or_record
        source = LoadRequest(target=target, command=tuple(command), options=dict(options or {}))
    app = PerfAgentApp(source)
    app.run()
    if app.load_error is not None:
        raise app.load_error
    return app.return_code or 0
