"""`perfagent verify`."""

from __future__ import annotations

import argparse
import sys

from perfagent.commands.common import (
    add_output_args,
    positive_float,
    positive_int,
    progress_to_stderr,
)
from perfagent.verify import Tolerance, verify
from perfagent.verify.models import ENVIRONMENT_CHECK
from perfagent.verify.render import render_text
from profilers.core_errors import ExitCode
from profilers.settings import DEVICES, TIMEOUTS


def _non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return value


class VerifyCommand:
    """Check a candidate kernel against its reference (the original is the oracle).

    REFERENCE: a KernelBench problem (.py with Model and get_inputs), a launch spec
    (.launch.toml) or a .cu kernel file with a spec beside it, or a .cu program / script (verified
    only through --check-cmd). CANDIDATE: a .py with ModelNew (default: the reference file's own
    ModelNew) or a rewritten .cu file. The candidate runs in a subprocess with fresh seeds, several
    input distributions, poisoned memory, cloned inputs and anti-cheat checks.
    Exit codes: 0 pass; 4 fail or inconclusive (a degenerate or nondeterministic reference cannot
    tell right from wrong, so it is never a pass); 3 inconclusive because this machine cannot build or
    run the candidate (no CUDA torch, no CUDA toolkit, no GPU); 2 bad input.
    """

    name = "verify"

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "reference",
            help="the original: KernelBench problem .py, launch spec .toml, .cu kernel or program",
        )
        parser.add_argument(
            "candidate",
            nargs="?",
            help="the rewrite (.py with ModelNew, or .cu); default: the reference's ModelNew",
        )
        g = parser.add_argument_group("verification")
        _add_run_options(g)
        _add_tolerance_options(g)
        _add_cuda_options(g)
        add_output_args(parser, formats=("text", "json"))

    def run(self, args: argparse.Namespace) -> int:
        # the run record's models load when the command runs, not for --help
        from perfagent.render import write_output

        tolerance = None
        if args.tolerance is not None or args.atol is not None or args.rtol is not None:
            tolerance = Tolerance(
                atol=args.atol if args.atol is not None else args.tolerance,
                rtol=args.rtol if args.rtol is not None else args.tolerance,
            )
        result = verify(
            args.reference,
            args.candidate,
            device=args.device,
            seeds=args.seeds,
            timeout_s=args.timeout,
            tolerance=tolerance,
            sanitizer=args.sanitizer,
            check_cmd=args.check_cmd,
            spec=args.spec,
            kernel=args.kernel,
            seed=args.seed,
            compile_timeout_s=args.compile_timeout,
            progress=progress_to_stderr,
        )
        text = result.model_dump_json(indent=2) if args.format == "json" else render_text(result)
        write_output(text, args.output)
        if result.verdict == "pass":
            return ExitCode.OK
        if result.verdict == "inconclusive" and any(
            c.name == ENVIRONMENT_CHECK and not c.passed for c in result.checks
        ):
            # Not a verdict on the candidate: this machine cannot build or run it (exit 3, as a missing tool).
            print(
                f"perfagent: verification inconclusive: {result.reason} — run it where that is available "
                "(`perfagent doctor` says what is missing here)",
                file=sys.stderr,
            )
            return ExitCode.PROFILER
        print(f"perfagent: verification {result.verdict}: {result.reason}", file=sys.stderr)
        return ExitCode.VERIFICATION


def _add_run_options(g: argparse._ArgumentGroup) -> None:
    """Where and how long the candidate runs, and with which seeds."""
    g.add_argument(
        "--device",
        choices=DEVICES,
        default="auto",
        help="where to run (cpu runs Triton through its interpreter; default auto)",
    )
    g.add_argument(
        "--timeout",
        type=positive_float,
        default=TIMEOUTS.call_s,
        metavar="SECONDS",
        help=f"limit per candidate run (default {TIMEOUTS.call_s:g}; build and first call get --compile-timeout)",
    )
    g.add_argument(
        "--compile-timeout",
        type=positive_float,
        default=TIMEOUTS.compile_s,
        metavar="SECONDS",
        help=f"limit for import/build/JIT compilation (default {TIMEOUTS.compile_s:g})",
    )
    g.add_argument(
        "--seeds",
        type=positive_int,
        default=5,
        metavar="N",
        help="fresh seeds; each gives a get_inputs() draw and a re-drawn distribution (default 5)",
    )
    g.add_argument(
        "--seed",
        type=int,
        default=None,
        metavar="S",
        help="first seed (default random; printed for reproduction)",
    )


def _add_tolerance_options(g: argparse._ArgumentGroup) -> None:
    """How close the candidate's outputs must be to the reference's."""
    g.add_argument(
        "--tolerance",
        type=_non_negative_float,
        default=None,
        metavar="TOL",
        help="atol = rtol = TOL (default per dtype: fp32 1e-4, fp16/bf16 1e-2, integers exact)",
    )
    g.add_argument(
        "--atol",
        type=_non_negative_float,
        default=None,
        help="absolute tolerance (overrides --tolerance)",
    )
    g.add_argument(
        "--rtol",
        type=_non_negative_float,
        default=None,
        help="relative tolerance (overrides --tolerance)",
    )


def _add_cuda_options(g: argparse._ArgumentGroup) -> None:
    """Options for CUDA references: sanitizer, an external check, the launch spec and entry point."""
    g.add_argument(
        "--sanitizer", action="store_true", help="also run under compute-sanitizer --tool memcheck (CUDA)"
    )
    g.add_argument(
        "--check-cmd",
        metavar="CMD",
        help="a command whose exit status decides correctness ({reference}/{candidate} are replaced); "
        "the only way to verify a .cu program with main()",
    )
    g.add_argument(
        "--spec", metavar="PATH", help="launch spec for a .cu reference (default: found beside it)"
    )
    g.add_argument("--kernel", metavar="NAME", help="entry point of a .cu candidate (default: from the spec)")
