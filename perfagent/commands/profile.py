"""`perfagent profile`."""

from __future__ import annotations

import argparse
import io
import shutil
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from perfagent.api import profile
from perfagent.commands.common import (
    add_profile_args,
    add_target_args,
    check_writable_file,
    profile_kwargs,
    progress_to_stderr,
)
from perfagent.render import write_output
from profilers.core_errors import BadInput, ExitCode
from profilers.model import Profile


class ProfileCommand:
    """Measure a target and print its raw canonical metrics (no diagnosis).

    With --save-report PATH the profiler's own report (.ncu-rep) is kept at PATH, e.g. to record
    fixtures on a GPU machine.
    """

    name = "profile"

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        add_target_args(parser)
        add_profile_args(parser)
        g = parser.add_argument_group("output")
        g.add_argument("--format", choices=("text", "json"), default="text")
        g.add_argument("-o", "--output", default="-", metavar="PATH", help="write here instead of stdout")
        g.add_argument("--force", action="store_true", help="overwrite existing output files")
        g.add_argument(
            "--save-report", type=Path, metavar="PATH", help="keep the profiler's report file at PATH"
        )

    def run(self, args: argparse.Namespace) -> int:
        if args.save_report:
            check_writable_file(args.save_report, force=args.force, option="--save-report")
        work = Path(tempfile.mkdtemp(prefix="perfagent-profile-"))
        try:
            prof = profile(
                args.target,
                command=args.trailing_command,
                workdir=work,
                progress=progress_to_stderr,
                **{**profile_kwargs(args), "staged": not (args.single_run or args.save_report)},
            )
            if args.save_report:
                _keep_report(work, args.save_report)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        if args.format == "json":
            write_output(prof.model_dump_json(indent=2) + "\n", args.output)
        else:
            write_output(metrics_table(prof, color=args.output == "-" and sys.stdout.isatty()), args.output)
        return ExitCode.OK


def _keep_report(work: Path, dest: Path) -> None:
    reports = sorted(work.rglob("*.ncu-rep")) or sorted(work.rglob("*.csv"))
    if not reports:
        raise BadInput(
            "no report file was produced to save",
            hint="--save-report needs a profiler run (not static analysis)",
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(reports[0], dest)
    progress_to_stderr(f"report saved to {dest}")


def metrics_table(prof: Profile, *, color: bool = False) -> str:
    """A per-kernel table of every canonical metric that has a value."""
    console = Console(record=True, width=120, force_terminal=color, file=io.StringIO())
    console.print(f"[bold]{prof.tool}[/] {prof.tool_version or ''}  mode={prof.mode}  source={prof.source}")
    for note in prof.notes:
        console.print(f"[yellow]note:[/] {note}")
    for k in prof.kernels:
        table = Table(title=f"{k.name}  (×{k.invocations})", title_justify="left", show_header=True)
        table.add_column("metric")
        table.add_column("value", justify="right")
        rows: list[tuple[str, object]] = []
        for section, model in (
            ("launch", k.launch),
            ("occupancy", k.occupancy),
            ("metrics", k.metrics),
            ("device", k.device),
        ):
            for key, value in model.model_dump(exclude_none=True).items():
                if value in ({}, []):
                    continue
                rows.append((f"{section}.{key}", value))
        for key, value in rows:
            table.add_row(key, _fmt(value))
        console.print(table)
    return console.export_text(styles=color)


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_fmt(v)}" for k, v in value.items())
    return str(value)
