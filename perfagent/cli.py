"""The ``perfagent`` command line: argparse + one ``Command`` class per subcommand.

``main(argv) -> int`` never raises: errors become one line on stderr (cause and next step)
and the documented exit code; ``--debug`` adds the traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence

from perfagent._version import __version__
from perfagent.commands import COMMANDS, load_commands
from perfagent.commands.common import check_output_path
from perfagent.commands.signals import interrupts_as_keyboard_interrupt
from profilers.core_errors import ExitCode, exit_code_for, one_line, saved_note

RUNS_CANDIDATE_CODE = frozenset({"verify", "bench", "optimize", "suite"})
"""Subcommands that run candidate code in a worker (and so take ``--unconfined``)."""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; ``only``: with just that subcommand (see ``main``)."""
    parser = argparse.ArgumentParser(
        prog="perfagent",
        description="Profile GPU kernels, explain why they are slow, and rewrite them one verified step at a time.",
    )
    parser.add_argument("--version", action="version", version=f"perfagent {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, command in load_commands(only).items():
        doc = (type(command).__doc__ or "").strip()
        summary = doc.splitlines()[0] if doc else name
        # argparse %-formats help strings; a literal % in a docstring must not crash --help.
        p = sub.add_parser(name, help=summary.replace("%", "%%"), description=doc.replace("%", "%%"))
        p.add_argument(
            "--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks on errors"
        )
        command.prepare_parser(p)
        if name in RUNS_CANDIDATE_CODE:
            p.add_argument(
                "--unconfined",
                action="store_true",
                default=argparse.SUPPRESS,
                help="run candidate code WITHOUT the OS sandbox (bubblewrap + Landlock), e.g. where the "
                "kernel cannot confine it; same as PERFAGENT_UNCONFINED=1. Candidate code is untrusted: see docs/security.md",
            )
        p.set_defaults(_command=command)
    return parser


def _named_command(args: Sequence[str]) -> str | None:
    """The subcommand ``args`` name when it is a known one (the first argument not an option)."""
    first = next((a for a in args if not a.startswith("-")), None)
    return first if first in COMMANDS else None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``perfagent`` console script."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    # Start-up cost: `perfagent diagnose ...` builds (imports) the diagnose command alone; the full
    # parser is built when no known subcommand is named (`perfagent --help`, typos).
    parser = build_parser(_named_command(args_list))
    # Everything after a bare `--` is the user's command, never perfagent's options.
    trailing: list[str] = []
    if "--" in args_list:
        cut = args_list.index("--")
        args_list, trailing = args_list[:cut], args_list[cut + 1 :]
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:  # argparse: usage errors exit 2, --help/--version exit 0
        return int(exc.code or 0)
    args.trailing_command = trailing
    if getattr(args, "unconfined", False):  # read by every worker start, also in suite subprocesses
        # imported here: parsing `diagnose`'s arguments must not load the sandbox (and pydantic)
        from perfagent.sandbox.confinement import UNCONFINED_ENV

        os.environ[UNCONFINED_ENV] = "1"
    if getattr(args, "_command", None) is None:
        parser.print_help(sys.stderr)
        return ExitCode.USAGE
    try:
        check_output_path(args)  # every command's -o, before any work
        with interrupts_as_keyboard_interrupt():
            return int(args._command.run(args))
    except KeyboardInterrupt as exc:
        print("perfagent: interrupted" + saved_note(exc), file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        return ExitCode.OK
    except Exception as exc:
        if getattr(args, "debug", False):
            traceback.print_exc()
        print(one_line(exc), file=sys.stderr)
        return exit_code_for(exc)
