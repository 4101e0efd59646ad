"""The end of a run: the before/after table (original vs best) and ``apply`` of the best."""

from __future__ import annotations

from knowledge.transforms import metric_value
from perfagent.optimize.apply import apply_candidate
from perfagent.optimize.loop_state import LoopResult
from perfagent.optimize.run_writer import RunWriter
from perfagent.records import CandidateOutcome, OptimizeBaseline, OptimizeResult, TableRow
from profilers.model import KernelDiagnosis

__all__ = ["before_after", "conclude"]


def conclude(
    writer: RunWriter, outcome: LoopResult, diagnosis: KernelDiagnosis | None, *, apply: bool
) -> OptimizeResult:
    """The run's result: the before/after table against the best (the original as ``writer`` keeps it,
    ``diagnosis`` its targeted kernel), and the best written over the file with ``apply``
    (``perfagent.optimize.apply``)."""
    summary = writer.summary
    outcome.candidates = [with_compile(c, summary) for c in outcome.candidates]
    best = next((c for c in outcome.candidates if c.id == outcome.best), None)
    result = writer.result(outcome, before_after(summary, best, diagnosis))
    if apply and best is not None:
        return result.model_copy(update={"applied": apply_candidate(best)})
    if apply:
        return result.model_copy(
            update={"notes": [*result.notes, "--apply: nothing was accepted, so no file was written"]}
        )
    return result


def with_compile(cand: CandidateOutcome, base: OptimizeBaseline) -> CandidateOutcome:
    """``cand`` with its speed-up over torch.compile (KernelBench, both measured on the GPU)."""
    if cand.speedup is None or not base.compile_speedup:
        return cand
    return cand.model_copy(update={"speedup_over_compile": cand.speedup / base.compile_speedup})


def before_after(
    base: OptimizeBaseline, best: CandidateOutcome | None, diagnosis: KernelDiagnosis | None
) -> list[TableRow]:
    """Original vs best: time, speed-up, % of roofline, % of DRAM peak, the best's targeted metric."""
    none = "no candidate accepted"
    rows = [
        TableRow(
            quantity="time (median)",
            before=base.time_s,
            after=best.time_s if best else None,
            unit="s",
            note=(base.timer or "not timed") if best else none,
        ),
        TableRow(
            quantity="speed-up",
            before=1.0 if base.time_s is not None else None,
            after=best.speedup if best else None,
            unit="x",
            note="" if best else none,
        ),
        *(
            [
                TableRow(
                    quantity="speed-up over torch.compile",
                    before=1.0 / base.compile_speedup,
                    after=best.speedup_over_compile if best else None,
                    unit="x",
                    note=f"torch.compile(Model) runs {base.compile_speedup:.3g}x eager (default mode)",
                )
            ]
            if base.compile_speedup
            else []
        ),
        TableRow(
            quantity="% of roofline",
            before=base.pct_of_roofline,
            after=best.pct_of_roofline if best else None,
            unit="%",
            note="speed-of-light time / measured time",
        ),
    ]
    if base.pct_of_dram_peak is not None or (best and best.pct_of_dram_peak is not None):
        rows.append(
            TableRow(
                quantity="% of DRAM peak",
                before=base.pct_of_dram_peak,
                after=best.pct_of_dram_peak if best else None,
                unit="%",
            )
        )
    if best is not None and best.metric:
        rows.append(_metric_row(best, diagnosis))
    return rows


def _metric_row(best: CandidateOutcome, diagnosis: KernelDiagnosis | None) -> TableRow:
    """The best's targeted metric, before (the original's profile) and after (its re-profile)."""
    assert best.metric is not None
    before = metric_value(diagnosis.profile, best.metric) if diagnosis is not None else None
    if before is None:
        before = best.metrics_before.get(best.metric)
    return TableRow(
        quantity=best.metric,
        before=before,
        after=best.metric_after,
        unit="%" if best.metric.endswith("_pct") else "",
        note=f"targeted by {best.transform} (expected {best.metric_direction})"
        + ("" if best.metric_after is not None else "; not re-profiled")
        + ("; did not move: won by another route" if best.route == "another" else ""),
    )
