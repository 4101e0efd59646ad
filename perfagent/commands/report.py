"""`perfagent report`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from perfagent.commands.common import add_output_args
from perfagent.render import OutputFormat, render, write_output
from perfagent.session import load_record
from perfagent.suite.render import render_suite
from perfagent.suite.results import is_suite_dir, load_suite_results
from perfagent.target import TargetKind
from perfagent.workloads.describe import Describe, describe_target
from profilers.core_errors import BadInput, ExitCode


class ReportCommand:
    """Render a saved run (run folder or record.json) again, in any format, without a GPU."""

    name = "report"

    def __init__(self, describe: Describe = describe_target) -> None:
        self.describe = describe
        """Classifies the path once (a report is refused with the command that reads it); tests count it."""

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "run",
            type=Path,
            help="run folder (with record.json), a record.json file, or a suite result folder",
        )
        add_output_args(parser)

    def run(self, args: argparse.Namespace) -> int:
        if is_suite_dir(args.run):
            rows, summary = load_suite_results(args.run)
            write_output(render_suite(rows, summary, args.format), args.output)
            return ExitCode.OK
        _refuse_reports(args.run, self.describe)
        record = load_record(args.run)
        fmt = OutputFormat(args.format)
        if record.optimize is not None and fmt in (OutputFormat.TEXT, OutputFormat.MARKDOWN):
            # an optimize run (finished or interrupted): its candidates, verdicts and before/after table
            from perfagent.optimize.render import render_markdown, render_text

            text = render_text if fmt is OutputFormat.TEXT else render_markdown
            write_output(text(record.optimize), args.output)
            return ExitCode.OK
        write_output(
            render(
                record, fmt, color=args.output == "-" and fmt is OutputFormat.TEXT and sys.stdout.isatty()
            ),
            args.output,
        )
        return ExitCode.OK


def _refuse_reports(path: Path, describe: Describe) -> None:
    """A profiler report is not a saved run: say which command reads it (instead of failing to parse it)."""
    if not path.exists():
        return  # load_record says so
    try:
        kind = describe(path, ()).kind
    except BadInput:
        return
    if kind.is_recorded and kind is not TargetKind.RUN_RECORD:
        raise BadInput(
            f"{path} is a profiler report, not a saved run",
            hint=f"use `perfagent diagnose {path}` to read it (`report` re-renders run folders and record.json)",
        )
