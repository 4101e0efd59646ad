"""`perfagent suite`."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import get_args

from perfagent.commands.common import check_writable_folder, positive_float, positive_int
from perfagent.suite.api import run_suite
from perfagent.suite.executors import make_executor
from perfagent.suite.models import JOBS, EntryResult, Job, SuiteSettings
from perfagent.suite.render import render_text
from perfagent.suite.results import ResultsLog
from profilers.core_errors import BadInput, ExitCode
from profilers.settings import DEVICES, TIMEOUTS


def parse_jobs(text: str) -> list[Job]:
    """``diagnose,optimize`` → the job list (unknown names refused)."""
    jobs = [j.strip() for j in text.split(",") if j.strip()]
    unknown = [j for j in jobs if j not in get_args(Job)]
    if unknown or not jobs:
        raise argparse.ArgumentTypeError(
            f"unknown job(s) {', '.join(unknown) or '(none)'}; choose from {', '.join(JOBS)}"
        )
    return [j for j in JOBS if j in jobs]  # type: ignore[misc]


class _Progress:
    """One line per finished entry on stderr, with the ETA from the mean time per entry so far."""

    def __init__(self) -> None:
        self.started = time.monotonic()

    def __call__(self, row: EntryResult, done: int, total: int) -> None:
        elapsed = time.monotonic() - self.started
        eta = elapsed / max(done, 1) * (total - done)
        status = row.failure or (row.verdict or "done")
        speed = row.speedup if row.speedup is not None else row.optimize_speedup
        extra = f" {speed:.3g}x" if speed else ""
        bar = "#" * int(20 * done / total) + "." * (20 - int(20 * done / total))
        print(
            f"[{bar}] {done}/{total} {row.name}: {status}{extra} ({row.elapsed_s:.1f} s, {row.worker}) ETA {eta:.0f} s",
            file=sys.stderr,
            flush=True,
        )


class SuiteCommand:
    """Run diagnose / verify / bench / optimize over a whole suite, on every local GPU or a Ray cluster.

    SUITE: a suite.toml ([[entry]] name, target, candidate?, options?) or a folder searched for
    KernelBench problem/candidate pairs, launch-spec kernels and Triton scripts. Results go to
    --out DIR as results.jsonl (one row per entry as it finishes; --resume skips finished entries)
    and summary.json (correct rate, fast_p, geometric-mean speed-up, roofline, transforms that won,
    failures by cause). `perfagent report DIR` renders it again.
    """

    name = "suite"

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("suite", type=Path, help="suite.toml or a folder of targets")
        parser.add_argument(
            "--jobs",
            type=parse_jobs,
            default=["verify", "bench"],
            help="comma-separated: diagnose,verify,bench,optimize (default verify,bench)",
        )
        parser.add_argument(
            "--out", type=Path, required=True, help="result folder (results.jsonl, summary.json, run folders)"
        )
        parser.add_argument("--resume", action="store_true", help="skip entries already in DIR/results.jsonl")
        parser.add_argument("--force", action="store_true", help="start over in an --out that holds results")
        _add_worker_args(parser.add_argument_group("workers"))
        _add_job_args(parser.add_argument_group("jobs"))

    def run(self, args: argparse.Namespace) -> int:
        if args.cooldown < 0:
            raise BadInput("--cooldown must be ≥ 0", hint="pass seconds, e.g. --cooldown 2")
        check_writable_folder(args.out, option="--out")
        settings = SuiteSettings(
            jobs=args.jobs,
            device=args.device,
            backend=args.backend,
            iterations=args.iterations,
            runs=args.runs,
            seeds=args.seeds,
            entry_timeout_s=args.entry_timeout,
            cooldown_s=args.cooldown,
        )
        executor = make_executor(
            args.executor,
            device=args.device,
            workers=args.workers,
            ray_address=args.ray_address,
            allow_mixed=args.allow_mixed,
        )
        print(
            f"suite {args.suite}: {executor.name} executor, {executor.workers} worker(s), jobs {','.join(args.jobs)}",
            file=sys.stderr,
            flush=True,
        )
        summary = run_suite(
            args.suite,
            settings,
            args.out,
            executor,
            resume=args.resume,
            force=args.force,
            on_row=_Progress(),
            on_note=lambda note: print(f"perfagent: {note}", file=sys.stderr, flush=True),
        )
        if args.format == "json":
            print(summary.model_dump_json(indent=2))
        else:
            sys.stdout.write(render_text(ResultsLog(args.out.resolve()).read(), summary))
        return ExitCode.OK


def _add_worker_args(g: argparse._ArgumentGroup) -> None:
    """Where the entries run: local processes or Ray, which device, how many workers."""
    g.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="local processes (default) or a Ray cluster",
    )
    g.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDR",
        help="Ray cluster address (default: start a local instance)",
    )
    g.add_argument("--allow-mixed", action="store_true", help="allow a Ray pool with different GPU models")
    g.add_argument(
        "--device",
        choices=DEVICES,
        default="auto",
        help="default auto: every visible GPU, else CPU",
    )
    g.add_argument(
        "--workers",
        type=positive_int,
        default=None,
        metavar="N",
        help="CPU workers (with --device cpu), or at most N GPUs",
    )


def _add_job_args(j: argparse._ArgumentGroup) -> None:
    """How each job runs: the optimize backend and rounds, bench runs, verify seeds, limits, output."""
    j.add_argument(
        "--backend",
        choices=("recipes", "llm", "auto"),
        default="recipes",
        help="optimize backend (default recipes)",
    )
    j.add_argument(
        "--iterations",
        type=positive_int,
        default=3,
        metavar="N",
        help="optimize rounds per entry (default 3)",
    )
    j.add_argument(
        "--runs", type=positive_int, default=50, metavar="N", help="bench rounds per entry (default 50)"
    )
    j.add_argument(
        "--seeds", type=positive_int, default=3, metavar="N", help="verify seeds per entry (default 3)"
    )
    j.add_argument(
        "--entry-timeout",
        type=positive_float,
        default=TIMEOUTS.suite_entry_s,
        metavar="S",
        help=f"limit per entry, s (default {TIMEOUTS.suite_entry_s:g})",
    )
    j.add_argument(
        "--cooldown",
        type=float,
        default=0.0,
        metavar="S",
        help="pause after each timed entry, s (default 0)",
    )
    j.add_argument(
        "--format", choices=("text", "json"), default="text", help="summary on stdout (default text)"
    )
