"""Text rendering of a ``VerificationResult`` (JSON is ``model_dump_json``)."""

from __future__ import annotations

from perfagent.verify.models import Check, VerificationResult

_MARK = {"pass": "PASS", "fail": "FAIL", "inconclusive": "INCONCLUSIVE"}


def _mark(check: Check) -> str:
    if check.passed:
        return "ok  "
    return {"error": "FAIL", "warning": "warn", "inconclusive": "??  "}[check.severity]


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def render_text(result: VerificationResult) -> str:
    """A terminal report: verdict and reason first, then context, every check, and notes."""
    lines = [f"verdict: {_MARK[result.verdict]} — {result.reason}", ""]
    lines.append(f"reference  {result.reference}")
    lines.append(f"candidate  {result.candidate}")
    context = [f"device {result.device}"]
    if result.seeds:
        context.append(f"{len(result.seeds)} seeds ({result.seeds[0]}..{result.seeds[-1]})")
    if result.input_sets:
        context.append(f"{result.input_sets} input sets")
    if result.distributions:
        context.append("distributions " + ", ".join(result.distributions))
    lines.append(" · ".join(context))
    if result.tolerance:
        lines.append(f"tolerance  {result.tolerance}")
    e = result.errors
    if e.max_abs_error is not None:
        lines.append(
            f"errors     max abs {_num(e.max_abs_error)} · max rel {_num(e.max_rel_error)} · mean abs {_num(e.mean_abs_error)}"
        )
    if e.max_abs_error_vs_fp64 is not None:
        lines.append(
            f"vs fp64    candidate max abs {_num(e.max_abs_error_vs_fp64)} · original max abs "
            f"{_num(e.original_max_abs_error_vs_fp64)} · passed by the accuracy rule {e.accuracy_rule_passes}"
        )
    lines.append("")
    width = max((len(c.name) for c in result.checks), default=10)
    for check in result.checks:
        detail = (
            f"  {check.detail}" if check.detail and (not check.passed or check.severity != "error") else ""
        )
        if (
            check.passed
            and check.detail
            and check.name in ("correctness", "kernel-launched", "sanitizer-memcheck", "check-command")
        ):
            detail = f"  {check.detail}"
        lines.append(f"  {_mark(check)} {check.name:<{width}}{detail}")
    if result.notes:
        lines.append("")
        lines.append("notes:")
        lines.extend(f"  - {n}" for n in result.notes)
    lines.append("")
    lines.append(f"({result.elapsed_s:.1f} s)")
    return "\n".join(lines)
