"""What the rewriter is told about earlier candidates: the measured history every request carries
(``history``), and the repair request for a candidate that failed to compile or verify.

``--repairs N`` (``OptimizeSettings.repairs``): a candidate whose verdict is ``build-failed`` or ``incorrect``
goes back to the rewriter that proposed it (when it can repair: ``Rewriter.repair``, the llm backend)
with the failure in the compiler's or the verifier's own words, at most N times in a row; each repaired
candidate is evaluated like any other and recorded with ``repairs`` (its round) and ``repair_of`` (the
candidate it fixes). Failures that are the machine's, not the code's (a CUDA ModelNew on a machine without
a GPU), are not sent back.
"""

from __future__ import annotations

from pathlib import Path

from perfagent.records import CandidateOutcome
from perfagent.rewrite.base import EarlierAttempt
from perfagent.rewrite.prompt import first_lines
from perfagent.workloads.optimizable import OptimizeWorkload

REPAIRABLE = frozenset({"build-failed", "incorrect"})
"""Verdicts a repair request can fix (the code, not the machine or the timing)."""
MAX_CHECKS = 3
"""Most failing checks quoted in one repair request."""
MAX_HISTORY = 12
"""Most earlier candidates (the latest) listed in a request."""
NOT_RUN = "proposed only: not built, verified or timed yet"
"""A --propose-only candidate's state (its record's reason adds where to --evaluate it)."""


def history(outcomes: list[CandidateOutcome], limit: int = MAX_HISTORY) -> list[EarlierAttempt]:
    """The latest ``limit`` measured candidates (duplicates left out) as the prompt's earlier attempts."""
    kept = [o for o in outcomes if o.verdict != "duplicate"][-limit:]
    return [
        EarlierAttempt(
            candidate_id=o.id,
            transform=o.transform,
            verdict=o.verdict,
            accepted=o.accepted,
            # a proposal's reason names the run folder (--evaluate RUN): the machine's business, not the
            # model's, and it would make the next prompt depend on where --out points
            reason=NOT_RUN if o.verdict == "proposed" else o.reason,
            description=o.description,
            time_s=o.time_s,
            time_s_before=o.time_s_before,
            speedup=o.speedup,
            metric=o.metric,
            metric_before=o.metric_before,
            metric_after=o.metric_after,
            metric_moved=o.metric_moved,
            diff=o.diff if o.verdict == "proposed" else "",
        )
        for o in kept
    ]


def feedback(outcome: CandidateOutcome) -> str | None:
    """What failed, for the repair request: the compiler's first errors (about 20 lines), or each failing
    check with its detail (which output, indices, max error); None when the verdict is not repairable."""
    if outcome.verdict not in REPAIRABLE:
        return None
    if outcome.verdict == "build-failed":
        detail = next((c.detail for c in outcome.checks if c.name == "build" and not c.passed), "")
        text = first_lines(_local(detail or outcome.reason, outcome))
        return "It does not compile. The compiler's first errors:\n" + text
    failing = [c for c in outcome.verification.checks if not c.passed and c.severity == "error"]
    if not failing:
        return f"It compiles but fails verification: {_local(outcome.verification.reason, outcome)}"
    lines = [f"It compiles but fails verification ({len(failing)} failing check(s)):"]
    lines += [f"- check `{c.name}`: {first_lines(_local(c.detail, outcome))}" for c in failing[:MAX_CHECKS]]
    if len(failing) > MAX_CHECKS:
        lines.append(f"- and {len(failing) - MAX_CHECKS} more failing check(s)")
    return "\n".join(lines)


def _local(text: str, outcome: CandidateOutcome) -> str:
    """``text`` with the run folder's paths cut to the file name (the model knows the file, not the folder)."""
    if outcome.source_path:
        folder = str(Path(outcome.source_path).parent)
        text = text.replace(folder + "/", "")
    return text


def machine_failure(outcome: CandidateOutcome, source: str, *, gpu: bool, wl: OptimizeWorkload) -> str | None:
    """Why a failure is the machine's rather than the code's (not worth a repair), else None."""
    if not gpu and wl.candidate_may_build_extension and "load_inline" in source:
        return "a CUDA ModelNew (load_inline) cannot be built or run without a GPU"
    return None
