"""CLI subcommands: one module, one ``Command`` class each.

A command's class docstring's first line is its help text. ``prepare_parser`` adds its options;
``run`` does the work and returns an exit code, raising ``PerfAgentError`` (profiler errors included) for
failures (never ``sys.exit``).
"""

from __future__ import annotations

import argparse
import importlib
from typing import Protocol


class Command(Protocol):
    """One subcommand."""

    name: str

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        """Add this command's arguments."""
        ...

    def run(self, args: argparse.Namespace) -> int:
        """Execute; return the exit code."""
        ...


# subcommand -> "module:Class"; modules are imported only when listed commands are built.
COMMANDS: dict[str, str] = {
    "diagnose": "perfagent.commands.diagnose:DiagnoseCommand",
    "profile": "perfagent.commands.profile:ProfileCommand",
    "report": "perfagent.commands.report:ReportCommand",
    "doctor": "perfagent.commands.doctor:DoctorCommand",
    "verify": "perfagent.commands.verify:VerifyCommand",
    "bench": "perfagent.commands.bench:BenchCommand",
    "optimize": "perfagent.commands.optimize:OptimizeCommand",
    "tui": "perfagent.commands.tui:TuiCommand",
    "mcp": "perfagent.commands.mcp:McpCommand",
    "suite": "perfagent.commands.suite:SuiteCommand",
    "compare": "perfagent.commands.compare:CompareCommand",
}


def load_commands(only: str | None = None) -> dict[str, Command]:
    """Instantiate every command whose module exists (a missing one is skipped); ``only``: just that one
    (a command line naming its subcommand imports no other command's module)."""
    found: dict[str, Command] = {}
    for name, target in COMMANDS.items():
        if only is not None and name != only:
            continue
        module_name, cls_name = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue
            raise
        found[name] = getattr(module, cls_name)()
    return found
