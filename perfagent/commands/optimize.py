"""`perfagent optimize`."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from perfagent.commands.common import (
    add_output_args,
    check_output_path,
    check_writable_folder,
    non_negative_int,
    positive_float,
    positive_int,
    progress_to_stderr,
)
from perfagent.errors import ExitCode
from perfagent.optimize.phase_cli import add_phase_args, phase_runner, phased, propose_exit


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
        g = parser.add_argument_group("loop")
        g.add_argument(
            "--backend",
            choices=("recipes", "llm", "auto"),
            default="auto",
            help="rewriter: recipes (deterministic, offline), llm (OpenAI-compatible endpoint), "
            "auto (llm when configured, else recipes; default)",
        )
        g.add_argument(
            "--transform",
            action="append",
            default=[],
            metavar="ID",
            help="apply this catalog transform instead of the diagnosis' plan (repeatable)",
        )
        g.add_argument("--finding", metavar="CATEGORY", help="plan only for findings of this category")
        g.add_argument(
            "--kernel",
            metavar="REGEX",
            help="which kernel of the diagnosis to target (default: the rewritten one)",
        )
        g.add_argument(
            "--iterations", type=positive_int, default=3, metavar="N", help="rewrite rounds (default 3)"
        )
        g.add_argument(
            "--candidates",
            type=positive_int,
            default=4,
            metavar="N",
            help="candidates evaluated per round (default 4)",
        )
        g.add_argument(
            "--device",
            choices=("auto", "cpu", "cuda"),
            default="auto",
            help="where candidates run (default auto: the GPU when there is one)",
        )
        g.add_argument(
            "--problem",
            metavar="PATH",
            help="KernelBench problem (the oracle) when TARGET is a ModelNew file",
        )
        g.add_argument(
            "--spec", metavar="PATH", help="launch spec of a .cu TARGET (default: found beside it)"
        )
        g.add_argument(
            "--report",
            metavar="PATH",
            help="recorded report (.ncu-rep, ...) to diagnose from when nothing can be profiled here",
        )
        g.add_argument(
            "--arch", default="sm_90", help="architecture for nvcc builds and static analysis (default sm_90)"
        )
        v = parser.add_argument_group("verification and timing")
        v.add_argument(
            "--seeds", type=positive_int, default=5, metavar="N", help="verification seeds (default 5)"
        )
        v.add_argument(
            "--timeout",
            type=positive_float,
            default=60.0,
            metavar="SECONDS",
            help="limit per call while verifying and timing (default 60)",
        )
        v.add_argument(
            "--compile-timeout",
            type=positive_float,
            default=600.0,
            metavar="SECONDS",
            help="limit for builds and first calls (default 600)",
        )
        v.add_argument(
            "--profile-timeout",
            type=positive_float,
            default=600.0,
            metavar="SECONDS",
            help="limit of one ncu run (default 600)",
        )
        v.add_argument(
            "--runs",
            type=positive_int,
            default=50,
            metavar="N",
            help="interleaved timing rounds per candidate (default 50)",
        )
        v.add_argument(
            "--warmup",
            type=non_negative_int,
            default=10,
            metavar="N",
            help="untimed calls first (default 10)",
        )
        m = parser.add_argument_group("LLM (the API key only from PERFAGENT_LLM_API_KEY / OPENAI_API_KEY)")
        m.add_argument(
            "--llm-base-url",
            metavar="URL",
            help="OpenAI-compatible endpoint (overrides PERFAGENT_LLM_BASE_URL)",
        )
        m.add_argument("--llm-model", metavar="NAME", help="model name (overrides PERFAGENT_LLM_MODEL)")
        m.add_argument(
            "--llm-timeout",
            type=positive_float,
            default=None,
            metavar="SECONDS",
            help="per-request timeout (overrides PERFAGENT_LLM_TIMEOUT)",
        )
        m.add_argument(
            "--samples",
            type=positive_int,
            default=1,
            metavar="N",
            help="LLM candidates per request (n when the server supports it, else N requests at rising "
            "temperatures); repeats, comments and whitespace aside, are dropped before any GPU time (default 1)",
        )
        m.add_argument(
            "--repairs",
            type=non_negative_int,
            default=1,
            metavar="N",
            help="repair requests per LLM candidate that fails to compile (the compiler's first errors go back) "
            "or to verify (the failing check's detail goes back); 0: none (default 1)",
        )
        m.add_argument(
            "--language",
            choices=("cuda", "triton"),
            default="cuda",
            help="plain-PyTorch KernelBench problem: the language of the first kernel the LLM writes "
            "(write-kernel step; cuda = torch.utils.cpp_extension.load_inline; default cuda)",
        )
        m.add_argument(
            "--llm-record",
            metavar="DIR",
            help="store every LLM request and reply in the cassette DIR (the key is never stored)",
        )
        m.add_argument(
            "--llm-replay",
            metavar="DIR",
            help="answer every LLM request from the cassette DIR, no network (unrecorded request = exit 5)",
        )
        m.add_argument(
            "--llm-price",
            type=positive_float,
            nargs=2,
            default=None,
            metavar=("PROMPT", "COMPLETION"),
            help="price per 1M prompt / completion tokens: the record then gives each request's and the run's cost",
        )
        add_phase_args(parser)
        r = parser.add_argument_group("results")
        r.add_argument("--out", metavar="DIR", help="run folder (default: a new one under .perfagent/runs)")
        r.add_argument(
            "--apply",
            action="store_true",
            help="write the best candidate into TARGET after copying it to TARGET.orig (TARGET.orig.N when earlier "
            "backups exist; none is ever overwritten); a win that needs -D macros or launch geometry also "
            "writes them into STEM.launch.toml beside it (backed up the same way)",
        )
        r.add_argument("--require-win", action="store_true", help="exit 4 when no candidate was accepted")
        add_output_args(parser, formats=("text", "json"))

    def run(self, args: argparse.Namespace) -> int:
        from perfagent.llm_client import LLMConfig, cassette_config
        from perfagent.optimize.api import optimize
        from perfagent.optimize.events import LoopEvent
        from perfagent.optimize.render import render_text
        from perfagent.render import write_output

        check_output_path(args)
        check_writable_folder(Path(args.out) if args.out else None, option="--out")
        config = cassette_config(
            LLMConfig.from_env(base_url=args.llm_base_url, model=args.llm_model, timeout_s=args.llm_timeout),
            record=args.llm_record,
            replay=args.llm_replay,
        )
        if args.llm_price:
            config = dataclasses.replace(config, price_per_million=(args.llm_price[0], args.llm_price[1]))

        def progress(event: LoopEvent) -> None:
            progress_to_stderr(event.message)

        run = optimize if not phased(args) else phase_runner(args)
        record = run(
            args.target,
            backend=args.backend,
            transform=args.transform or None,
            finding=args.finding,
            kernel=args.kernel,
            iterations=args.iterations,
            max_candidates=args.candidates,
            device=args.device,
            out=args.out,
            apply=args.apply,
            force=args.force,
            progress=progress,
            llm_config=config,
            problem=args.problem,
            spec=args.spec,
            report=args.report,
            arch=args.arch,
            seeds=args.seeds,
            timeout_s=args.timeout,
            compile_timeout_s=args.compile_timeout,
            profile_timeout_s=args.profile_timeout,
            runs=args.runs,
            warmup=args.warmup,
            samples=args.samples,
            repairs=args.repairs,
            language=args.language,
        )
        result = record.optimize
        assert result is not None
        write_output(
            record.model_dump_json(indent=2) if args.format == "json" else render_text(result), args.output
        )
        if args.propose_only:
            return propose_exit(result)
        if result.llm_errors and result.backend == "llm" and not result.candidates:
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
