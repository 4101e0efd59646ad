"""`perfagent tui`."""

from __future__ import annotations

import argparse
import importlib

from perfagent.commands.common import add_profile_args, add_target_args, profile_kwargs
from perfagent.workloads.describe import Describe, describe_target
from perfagent.workloads.registry import resolve_profile_target
from profilers.core_errors import ExitCode, ToolFailure


class TuiCommand:
    """Open the terminal UI on a target, report or saved run.

    The kernel list opens first (ranked by recoverable time); Enter shows a kernel's roofline, speed of
    light, findings with evidence and hot source lines; `o` walks through optimizing a finding. Reports
    and saved runs need no GPU. Keys: ? help, Esc back, q quit.
    """

    name = "tui"

    def __init__(self, describe: Describe = describe_target) -> None:
        self.describe = describe
        """Classifies the target once, here; the TUI is handed the result (tests count the calls)."""

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        add_target_args(parser)
        add_profile_args(parser)

    def run(self, args: argparse.Namespace) -> int:
        # Bad input fails here, as one line with exit code 2, before the screen is taken over.
        target = resolve_profile_target(args.target, args.trailing_command, self.describe)
        try:
            tui = importlib.import_module("tui")
        except ModuleNotFoundError as exc:
            raise ToolFailure(
                f"the terminal UI cannot start: module {exc.name} is missing",
                hint="reinstall perfagent (pip install -e .)",
            ) from None
        code = tui.run_tui(target, command=args.trailing_command, options=profile_kwargs(args))
        return int(code) if code else ExitCode.OK
