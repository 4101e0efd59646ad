"""`perfagent doctor`."""

from __future__ import annotations

import argparse

from perfagent.commands.common import add_output_args
from perfagent.doctor import run_probes
from perfagent.render import write_output
from profilers.core_errors import ExitCode


class DoctorCommand:
    """Check the GPU, driver, ncu/rocprof versions, counter permission, nvcc and the LLM endpoint."""

    name = "doctor"

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        add_output_args(parser, formats=("text", "json"))

    def run(self, args: argparse.Namespace) -> int:
        report = run_probes()
        if args.format == "json":
            write_output(report.model_dump_json(indent=2) + "\n", args.output)
            return ExitCode.OK
        width = max(len(p.name) for p in report.probes)
        lines = [f"{'ok ' if p.ok else '-- '} {p.name.ljust(width)}  {p.detail}" for p in report.probes]
        lines.append(f"\nwill use: {report.will_use}")
        write_output("\n".join(lines) + "\n", args.output)
        return ExitCode.OK
