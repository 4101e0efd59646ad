"""Options and helpers shared by several subcommands."""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from profilers.core_errors import BadInput
from profilers.settings import TIMEOUTS

FORMATS = ("text", "json", "md", "html")


def progress_to_stderr(message: str) -> None:
    """Progress lines go to stderr so that stdout stays data."""
    print(f"perfagent: {message}", file=sys.stderr, flush=True)


def add_target_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target",
        nargs="?",
        help="report (.ncu-rep, ncu raw CSV, rocprof CSV/folder), source (.cu, .hip, .py), run folder; "
        "or omit and give a command after `--`",
    )


def add_profile_args(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("profiling")
    _add_selection_args(g)
    _add_collection_args(g)


def _add_selection_args(g: argparse._ArgumentGroup) -> None:
    """Which profiler, and which kernels and launches it profiles."""
    g.add_argument(
        "--profiler",
        choices=("auto", "ncu", "rocprof", "static"),
        default="auto",
        help="which profiler (default: auto — recorded reports by their tool, ncu when usable, else static)",
    )
    g.add_argument(
        "--kernel", type=kernel_regex, metavar="REGEX", help="only kernels whose name matches REGEX"
    )
    g.add_argument(
        "--launch-skip",
        type=non_negative_int,
        default=0,
        metavar="N",
        help="skip the first N matching launches",
    )
    g.add_argument(
        "--launch-count",
        type=positive_int,
        default=None,
        metavar="N",
        help="profile at most N matching launches",
    )
    g.add_argument(
        "--nvtx-include",
        action="append",
        default=[],
        metavar="EXPR",
        help="ncu NVTX range filter (repeatable)",
    )


def _add_collection_args(g: argparse._ArgumentGroup) -> None:
    """What is collected of the selected launches, how, and for how long."""
    g.add_argument(
        "--clock-control",
        choices=("none", "base", "reset"),
        default="none",
        help="ncu --clock-control (default none: the GPU's own clocks, as in normal runs)",
    )
    g.add_argument(
        "--full", action="store_true", help="collect ncu's full set (slower) instead of the targeted metrics"
    )
    g.add_argument(
        "--source-counters",
        action="store_true",
        help="collect per-source-line counters (build with -lineinfo)",
    )
    g.add_argument(
        "--all-kernels",
        action="store_true",
        help="counters for every kernel (default: only the kernels making 90 %% of GPU time; the rest are timed)",
    )
    g.add_argument(
        "--single-run",
        action="store_true",
        help="one targeted ncu run over every matched launch instead of staged profiling (time first, then tiers)",
    )
    g.add_argument(
        "--arch", default="sm_90", help="target architecture for builds and static analysis (default sm_90)"
    )
    g.add_argument(
        "--timeout",
        type=positive_float,
        default=TIMEOUTS.profile_s,
        metavar="SECONDS",
        help=f"limit per external run (default {TIMEOUTS.profile_s:g})",
    )


def profile_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """The ``perfagent.profile`` keyword arguments for parsed profiling options."""
    return {
        "profiler": args.profiler,
        "kernel": args.kernel,
        "launch_skip": args.launch_skip,
        "launch_count": args.launch_count,
        "nvtx_include": tuple(args.nvtx_include),
        "clock_control": args.clock_control,
        "full_set": args.full,
        "source_counters": args.source_counters,
        "staged": not args.single_run,
        "all_kernels": args.all_kernels,
        "arch": args.arch,
        "timeout_s": args.timeout,
    }


def add_output_args(parser: argparse.ArgumentParser, formats: tuple[str, ...] = FORMATS) -> None:
    g = parser.add_argument_group("output")
    g.add_argument("--format", choices=formats, default="text", help="output format (default text)")
    g.add_argument(
        "-o", "--output", default="-", metavar="PATH", help="write here instead of stdout (`-` = stdout)"
    )
    g.add_argument("--force", action="store_true", help="overwrite PATH if it exists")


def check_output_path(args: argparse.Namespace) -> None:
    """Validate ``-o PATH`` before any work: not a folder, writable, and not overwritten without --force.

    ``cli.main`` calls this for every command before its ``run`` (the one place: a command cannot forget
    it and find out after minutes of work that its output cannot be written).
    """
    out = getattr(args, "output", "-")
    if out not in ("-", None, ""):
        check_writable_file(Path(out), force=bool(getattr(args, "force", False)), option="-o")


def check_writable_file(path: Path, *, force: bool, option: str) -> None:
    """Raise ``BadInput`` unless ``path`` can be written as a file (nothing is left behind by the check).

    A folder is refused even with --force; an existing file needs --force; a missing file is tried in its
    folder (created and removed again) so that a read-only or foreign folder is caught before any work.
    """
    if path.is_dir():
        raise BadInput(
            f"{option} {path} is a folder", hint=f"give {option} a file path, e.g. {path / 'out.txt'}"
        )
    if path.exists() and not force:
        raise BadInput(
            f"{path} already exists", hint=f"pass --force to overwrite it, or choose another {option} path"
        )
    ancestor = path.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise BadInput(
            f"cannot write {option} {path}: {ancestor} is not a folder", hint=f"choose another {option} path"
        )
    try:
        if path.exists():
            with path.open("a", encoding="utf-8"):  # opening for append writes nothing
                pass
        elif ancestor == path.parent:
            with tempfile.NamedTemporaryFile(dir=ancestor, prefix=".perfagent-write-check-"):
                pass
        else:  # the missing folders are created on write: try creating one (os.access lies for root)
            with tempfile.TemporaryDirectory(dir=ancestor, prefix=".perfagent-write-check-"):
                pass
    except OSError as exc:
        raise BadInput(
            f"cannot write {option} {path}: {exc.strerror or exc}", hint=f"choose a writable {option} path"
        ) from None


def kernel_regex(text: str) -> str:
    """argparse type: a valid Python regular expression (refused at parse time, exit 2, before any work)."""
    try:
        re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a valid regular expression ({exc})") from None
    return text


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return value


def non_negative_int(text: str) -> int:
    """argparse type: an integer >= 0."""
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def positive_float(text: str) -> float:
    """argparse type: a number > 0."""
    value = _float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def non_negative_float(text: str) -> float:
    """argparse type: a number >= 0."""
    value = _float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return value


def _float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def check_writable_folder(path: Path | None, *, option: str) -> None:
    """Raise ``BadInput`` unless ``path`` is (or can be created as) a writable folder; None passes."""
    if path is None:
        return
    if path.exists() and not path.is_dir():
        raise BadInput(f"{option} {path} is a file, not a folder", hint=f"give {option} a folder")
    ancestor = path
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise BadInput(
            f"cannot create {option} {path}: {ancestor} is not a folder", hint=f"choose another {option}"
        )
    try:
        with tempfile.TemporaryDirectory(dir=ancestor, prefix=".perfagent-write-check-"):
            pass
    except OSError as exc:
        raise BadInput(
            f"cannot write into {option} {path}: {exc.strerror or exc}", hint=f"choose a writable {option}"
        ) from None
