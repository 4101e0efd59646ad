"""`perfagent compare`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from perfagent.api import diagnose, load
from perfagent.commands.common import add_output_args
from perfagent.compare import Comparison, GateVerdict, compare_records, gate, record_changes
from perfagent.records import RunRecord
from perfagent.render import write_output
from perfagent.suite.compare import SuiteComparison, compare_suites, suite_changes
from perfagent.suite.results import is_suite_dir, load_suite_results
from profilers.core_errors import BadInput, ExitCode


def _record(path: Path) -> RunRecord:
    loaded = load(path)
    return loaded if isinstance(loaded, RunRecord) else diagnose(str(path), save=False)


def _pct(v: float | None) -> str:
    return f"{v:+.1f} %" if v is not None else "–"


def _num(v: float | None) -> str:
    return f"{v:.4g}" if v is not None else "–"


def _text_records(c: Comparison) -> list[str]:
    lines = [f"before: {c.before}", f"after:  {c.after}", ""]
    for k in c.kernels:
        lines.append(f"{k.name[:60]:<60} {_pct(k.change_pct):>9}  {k.verdict}")
        lines.extend(
            f"    {m.metric}: {_num(m.before)} -> {_num(m.after)} ({_pct(m.change_pct)})"
            for m in k.metrics[:4]
        )
    lines += [f"only before: {n}" for n in c.only_before] + [f"only after: {n}" for n in c.only_after]
    lines.append(c.significance)
    return lines


def _text_suites(c: SuiteComparison) -> list[str]:
    lines = [f"before: {c.before}", f"after:  {c.after}", ""]
    lines += [
        f"{e.name[:60]:<60} {_pct(e.change_pct):>9}  {e.verdict} (noise {e.noise_pct:.1f} %)"
        for e in c.entries
    ]
    lines += [f"only before: {n}" for n in c.only_before] + [f"only after: {n}" for n in c.only_after]
    g0 = f"{c.geomean_before:.3g}x" if c.geomean_before else "–"
    g1 = f"{c.geomean_after:.3g}x" if c.geomean_after else "–"
    lines.append(f"geomean speed-up {g0} -> {g1}")
    return lines


class CompareCommand:
    """Compare two runs, two reports or two suite results: per-kernel (per-entry) time, % of roofline
    and the metrics that moved; --gate exits 1 when anything regressed beyond its noise (for CI)."""

    name = "compare"

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("before", type=Path, help="saved run, report, or suite result folder")
        parser.add_argument("after", type=Path, help="the same kind as BEFORE")
        parser.add_argument(
            "--gate",
            action="store_true",
            help="exit 1 when a kernel/entry regressed beyond its noise threshold",
        )
        parser.add_argument(
            "--max-regression",
            type=float,
            default=0.0,
            metavar="PCT",
            help="with --gate: tolerate slow-downs up to PCT %% (default 0: noise only)",
        )
        add_output_args(parser, formats=("text", "json"))

    def run(self, args: argparse.Namespace) -> int:
        if args.max_regression < 0:
            raise BadInput("--max-regression must be ≥ 0", hint="e.g. --max-regression 5")
        for p in (args.before, args.after):
            if not p.exists():
                raise BadInput(
                    f"{p} does not exist", hint="give a saved run, a report or a suite result folder"
                )
        suites = [is_suite_dir(p) for p in (args.before, args.after)]
        comparison: Comparison | SuiteComparison
        if all(suites):
            a_rows, a_sum = load_suite_results(args.before)
            b_rows, b_sum = load_suite_results(args.after)
            comparison = compare_suites((str(args.before), a_rows, a_sum), (str(args.after), b_rows, b_sum))
            judged = suite_changes(comparison)
        elif any(suites):
            raise BadInput(
                "one side is a suite result and the other is not",
                hint="compare two suites, or two runs/reports",
            )
        else:
            comparison = compare_records(_record(args.before), _record(args.after))
            judged = record_changes(comparison)
        verdict: GateVerdict | None = (
            gate(judged, max_regression_pct=args.max_regression) if args.gate else None
        )
        if args.format == "json":
            payload = {
                "comparison": comparison.model_dump(mode="json"),
                "gate": verdict.model_dump(mode="json") if verdict else None,
            }
            text = json.dumps(payload, indent=2) + "\n"
        else:
            lines = (
                _text_suites(comparison)
                if isinstance(comparison, SuiteComparison)
                else _text_records(comparison)
            )
            if verdict is not None:
                lines.append("gate: " + ("REGRESSED" if not verdict.passed else verdict.status))
                lines.extend(f"  {r}" for r in verdict.regressions)
                lines.extend(f"  not comparable: {r}" for r in verdict.not_comparable)
            text = "\n".join(lines) + "\n"
        write_output(text, args.output)
        if verdict is not None and not verdict.passed:
            print(
                f"perfagent compare: gate failed: {verdict.regressions[0]}"
                + (f" (+{len(verdict.regressions) - 1} more)" if len(verdict.regressions) > 1 else ""),
                file=sys.stderr,
            )
            return ExitCode.FAILURE
        if verdict is not None and verdict.status == "not comparable":
            print(
                "perfagent compare: gate not comparable — no timing on both sides is reliable "
                f"({verdict.not_comparable[0]}); time on a GPU to gate on speed",
                file=sys.stderr,
            )
        return ExitCode.OK
