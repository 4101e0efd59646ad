"""`perfagent optimize`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from perfagent.commands.common import (
    add_output_args,
    check_writable_folder,
    progress_to_stderr,
)
from perfagent.commands.optimize_phases import add_phase_args, phased, propose_exit, run_phase
from perfagent.commands.settings_args import add_settings_args, settings_from_args
from perfagent.optimize.events import LoopEvent
from perfagent.optimize.settings import LLM_GROUP, LOOP_GROUP, RESULTS_GROUP, VERIFY_GROUP
from perfagent.render import write_output
from profilers.core_errors import ExitCode


class OptimizeCommand:
    """Rewrite a kernel one targeted transform at a time; keep only verified, measured wins.

    TARGET: a .cu kernel file with a launch spec (or the spec), a KernelBench problem (.py), a
    ModelNew file with --problem, or a Triton script. Loop: diagnose → plan → propose → build →
    verify against the original → time → re-profile → accept only if correct, faster beyond noise and
    the targeted metric moved; every rejection says why and is fed back to the next proposal. Without
    a GPU, candidates are verified where the workload allows and marked not timed: no speed-up is
    claimed that was not measured. Your files are never written unless --apply is given (then the
    original is kept as FILE.orig, or FILE.orig.N when earlier backups exist). Exit codes: 0 ok (also when nothing won — it says so), 2 bad
    input, 3 profiler failed, 4 nothing accepted with --require-win, 5 LLM unavailable or failing
    with --backend llm.
    """

    name = "optimize"

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "target",
            nargs="?",
            help="kernel to optimize: .cu (with a launch spec), launch spec .toml, KernelBench .py, Triton .py "
            "(with --evaluate / --from: only where it is on this machine, when not where it was)",
        )
        add_settings_args(parser, (LOOP_GROUP, VERIFY_GROUP, LLM_GROUP))
        add_phase_args(parser)
        results = add_settings_args(parser, (RESULTS_GROUP,))[RESULTS_GROUP]
        results.add_argument(
            "--require-win", action="store_true", help="exit 4 when no candidate was accepted"
        )
        add_output_args(parser, formats=("text", "json"))

    def run(self, args: argparse.Namespace) -> int:
        # the loop's stack (tree-sitter, the recipes, pydantic) loads when the command runs, not for --help
        from perfagent.optimize.api import optimize
        from perfagent.optimize.render import render_text

        check_writable_folder(Path(args.out) if args.out else None, option="--out")
        settings = settings_from_args(args)

        def progress(event: LoopEvent) -> None:
            progress_to_stderr(event.message)

        if phased(args):
            record = run_phase(args, settings, progress=progress)
        else:
            record = optimize(args.target, settings=settings, progress=progress)
        result = record.optimize
        assert result is not None
        write_output(
            record.model_dump_json(indent=2) if args.format == "json" else render_text(result), args.output
        )
        if args.propose_only:
            return propose_exit(result)
        if result.llm_errors and result.backend in ("llm", "auto") and not result.candidates:
            print(f"perfagent: the LLM produced no candidate: {result.llm_errors[-1]}", file=sys.stderr)
            return ExitCode.LLM
        if result.best is None:
            print(
                f"perfagent: no candidate was produced ({result.stopped})"
                if not result.candidates and result.stopped
                else "perfagent: no candidate was accepted"
                + ("" if result.gpu else " (no GPU: nothing was timed)"),
                file=sys.stderr,
            )
            if args.require_win:
                return ExitCode.VERIFICATION
        return ExitCode.OK
