"""``perfagent optimize`` for two machines: ``--propose-only``, ``--evaluate RUN``, ``--from RUN``.

The flags, their checks (every misuse is one line and exit 2), and the dispatch to
``perfagent.optimize.phases`` (imported only when a two-machine flag is given: the CLI starts light).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from perfagent.optimize.events import ProgressCallback
from perfagent.optimize.settings import OptimizeSettings
from perfagent.records import OptimizeResult, RunRecord
from profilers.core_errors import BadInput, ExitCode

EVALUATE = "perfagent optimize --evaluate"


def add_phase_args(parser: argparse.ArgumentParser) -> None:
    t = parser.add_argument_group(
        "two machines (the model on one, the GPU on another: docs/optimize.md, 'Two machines')"
    )
    t.add_argument(
        "--propose-only",
        action="store_true",
        help="diagnose (--report recorded on the GPU machine) and write the rewriter's proposals into the run "
        "folder (--out); nothing is built, run or timed. `--propose-only RUN` = `--propose-only --from RUN`",
    )
    t.add_argument(
        "--evaluate",
        metavar="RUN",
        help="on the GPU machine: build, verify, time, re-profile and decide every proposal in RUN (written "
        "into RUN, or a copy at --out); the settings are RUN's",
    )
    t.add_argument(
        "--from",
        dest="from_run",
        metavar="RUN",
        help="with --propose-only: the next round, from RUN's best accepted candidate, with RUN's rejections "
        "in the prompt (written into RUN, or a copy at --out)",
    )


def phased(args: argparse.Namespace) -> bool:
    """Whether a two-machine flag was given; raises ``BadInput`` for a one-machine run without TARGET."""
    if args.propose_only or args.evaluate is not None or args.from_run is not None:
        return True
    if args.target is None:
        raise BadInput(
            "no TARGET given",
            hint="perfagent optimize TARGET; for two machines: --propose-only ... / --evaluate RUN (docs/optimize.md)",
        )
    return False


def run_phase(
    args: argparse.Namespace, settings: OptimizeSettings, *, progress: ProgressCallback
) -> RunRecord:
    """``--propose-only`` / ``--evaluate`` / ``--from`` checked and run; the ``RunRecord``."""
    # the loop's stack (tree-sitter, the recipes) loads when a phase runs, not for --help
    from perfagent.optimize.phases import evaluate, propose

    if args.evaluate is not None and args.propose_only:
        raise BadInput(
            "--propose-only and --evaluate are the two halves of a two-machine run: give one",
            hint="--propose-only where the model is, then --evaluate RUN on the GPU machine",
        )
    if args.from_run is not None and not args.propose_only:
        raise BadInput(
            "--from RUN starts a new round of proposals",
            hint="add --propose-only: perfagent optimize --propose-only --from RUN",
        )
    if args.evaluate is not None:
        if settings.report is not None:
            raise BadInput(
                "--report is for --propose-only: --evaluate profiles the original on this GPU itself",
                hint=f"{EVALUATE} {args.evaluate}",
            )
        if settings.transforms:
            raise BadInput(
                "--evaluate measures the transforms that were proposed: --transform is for --propose-only",
                hint=f"{EVALUATE} {args.evaluate}",
            )
        return evaluate(args.evaluate, target=args.target, settings=settings, progress=progress)
    if settings.apply:
        raise BadInput(
            "--apply needs measured candidates, and --propose-only measures nothing",
            hint="give --apply to --evaluate RUN on the GPU machine",
        )
    target, from_run = args.target, args.from_run
    if from_run is None and target is not None and Path(target).is_dir():
        target, from_run = None, target  # `--propose-only RUN`
    return propose(target, from_run=from_run, settings=settings, progress=progress)


def propose_exit(result: OptimizeResult) -> int:
    """The exit status of ``--propose-only``, its summary line on stderr: 0 (also with no proposal, said),
    5 when the llm backend failed on every request."""
    # the run writer pulls in the loop's stack: loaded only once a run has ended
    from perfagent.optimize.run_writer import shown_path

    proposed = [c for c in result.candidates if c.verdict == "proposed"]
    run = shown_path(Path(result.run_dir)) if result.run_dir else "RUN"
    if not proposed and result.llm_errors and result.backend in ("llm", "auto"):
        print(f"perfagent: the LLM produced no proposal: {result.llm_errors[-1]}", file=sys.stderr)
        return ExitCode.LLM
    if not proposed:
        print(f"perfagent: no proposal was written ({result.stopped})", file=sys.stderr)
        return ExitCode.OK
    print(
        f"perfagent: {len(proposed)} proposal(s) written to {run}; run `{EVALUATE} {run}` on the GPU machine "
        "(copy the folder there if it is another one)",
        file=sys.stderr,
    )
    return ExitCode.OK
