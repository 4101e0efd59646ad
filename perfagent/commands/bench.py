"""`perfagent bench`."""

from __future__ import annotations

import argparse
import sys

from perfagent.commands.common import (
    add_output_args,
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
    progress_to_stderr,
)
from profilers.core_errors import ExitCode
from profilers.settings import DEVICES, TIMEOUTS, TIMING


class BenchCommand:
    """Time a kernel (and a candidate, interleaved): median, IQR, bandwidth, FLOP rate, percent of roofline.

    TARGET: a KernelBench problem (its Model) or a launch-spec kernel; CANDIDATE: a ModelNew file
    or a rewritten .cu. On CUDA: CUDA events around each call queued behind an L2 flush, warm-up
    calls, baseline/candidate/baseline-repeat interleaved; a speed-up is called significant only
    beyond the noise measured between the two baseline series. Faster than the speed of light, or
    more than 10x faster, is flagged for review. Timing only: run `perfagent verify` for correctness.
    """

    name = "bench"

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "target", help="the baseline: KernelBench problem .py, launch spec .toml, or .cu kernel"
        )
        parser.add_argument("candidate", nargs="?", help="optional rewrite (.py with ModelNew, or .cu)")
        g = parser.add_argument_group("timing")
        g.add_argument(
            "--device",
            choices=DEVICES,
            default="auto",
            help="default auto (CUDA when available)",
        )
        _add_round_args(g)
        g.add_argument(
            "--no-l2-flush", action="store_true", help="do not flush L2 between calls (warm-cache timing)"
        )
        g.add_argument(
            "--timeout",
            type=positive_float,
            default=TIMEOUTS.call_s,
            metavar="SECONDS",
            help=f"limit per call (default {TIMEOUTS.call_s:g})",
        )
        g.add_argument(
            "--compile-timeout",
            type=positive_float,
            default=TIMEOUTS.compile_s,
            metavar="SECONDS",
            help=f"limit for build and first call (default {TIMEOUTS.compile_s:g})",
        )
        g.add_argument(
            "--no-compile-baseline",
            action="store_true",
            help="KernelBench: do not also time torch.compile(Model) (default: timed, and the speed-up over it shown)",
        )
        g.add_argument("--spec", metavar="PATH", help="launch spec for a .cu target")
        g.add_argument("--kernel", metavar="NAME", help="entry point of a .cu candidate")
        add_output_args(parser, formats=("text", "json"))

    def run(self, args: argparse.Namespace) -> int:
        # the command's stack (pydantic models, workers) loads when it runs, not when its arguments are parsed
        from perfagent.render import write_output
        from perfagent.timing import bench
        from perfagent.timing.compiled import is_kernelbench_problem, with_compile_baseline
        from perfagent.timing.render import render_text
        from profilers.settings import TimingBudget

        result = bench(
            args.target,
            args.candidate,
            device=args.device,
            runs=args.runs,
            warmup=args.warmup,
            budget=TimingBudget(budget_s=args.timing_budget, min_runs=args.min_runs),
            flush_l2=not args.no_l2_flush,
            timeout_s=args.timeout,
            compile_timeout_s=args.compile_timeout,
            spec=args.spec,
            kernel=args.kernel,
            progress=progress_to_stderr,
        )
        if not args.no_compile_baseline and is_kernelbench_problem(args.target):
            result = with_compile_baseline(result, args.target, progress=progress_to_stderr)
        write_output(
            result.model_dump_json(indent=2) if args.format == "json" else render_text(result), args.output
        )
        if result.implausible:  # faster than the hardware allows: the candidate's timing fails
            print(f"perfagent: timing fail: implausible ({', '.join(result.implausible)})", file=sys.stderr)
            return ExitCode.VERIFICATION
        return ExitCode.OK


def _add_round_args(g: argparse._ArgumentGroup) -> None:
    """How many rounds are timed: at most --runs, fewer when --timing-budget is filled, at least --min-runs."""
    g.add_argument(
        "--runs",
        type=positive_int,
        default=100,
        metavar="N",
        help="interleaved timed rounds, at most (default 100; --timing-budget may take fewer)",
    )
    g.add_argument(
        "--timing-budget",
        type=non_negative_float,
        default=TIMING.budget_s,
        metavar="SECONDS",
        help=f"wall time the timed rounds may fill, judged on the first --min-runs rounds; a slow "
        f"kernel gets fewer rounds (default {TIMING.budget_s:g}; 0: every round of --runs)",
    )
    g.add_argument(
        "--min-runs",
        type=positive_int,
        default=TIMING.min_runs,
        metavar="N",
        help=f"rounds taken whatever the budget, unless --runs is fewer (default {TIMING.min_runs})",
    )
    g.add_argument(
        "--warmup",
        type=non_negative_int,
        default=10,
        metavar="N",
        help="untimed calls first (default 10)",
    )
