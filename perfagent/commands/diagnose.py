"""`perfagent diagnose`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from perfagent.commands.common import (
    add_output_args,
    add_profile_args,
    add_target_args,
    check_writable_folder,
    profile_kwargs,
    progress_to_stderr,
)
from profilers.core_errors import ExitCode


class DiagnoseCommand:
    """Profile a kernel (or read a report) and explain why it is slow, with evidence and a roofline.

    Kernels and findings come out ranked by recoverable time. Data goes to stdout (or -o),
    progress to stderr.
    """

    name = "diagnose"

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        add_target_args(parser)
        add_profile_args(parser)
        add_output_args(parser)
        g = parser.add_argument_group("run folder")
        g.add_argument("--run-dir", type=Path, help="keep the run (record.json, reports) here")
        g.add_argument("--no-save", action="store_true", help="do not keep a run folder")

    def run(self, args: argparse.Namespace) -> int:
        # imported here so that `perfagent diagnose --help` and argument errors stay fast
        from perfagent.api import diagnose
        from perfagent.render import OutputFormat, render, write_output

        check_writable_folder(args.run_dir, option="--run-dir")
        record = diagnose(
            args.target,
            command=args.trailing_command,
            run_dir=args.run_dir,
            save=False if args.no_save else None,
            progress=progress_to_stderr,
            **profile_kwargs(args),
        )
        fmt = OutputFormat(args.format)
        write_output(
            render(
                record, fmt, color=args.output == "-" and fmt is OutputFormat.TEXT and sys.stdout.isatty()
            ),
            args.output,
        )
        return ExitCode.OK
