"""Run one suite entry's jobs in this process and return its result row.

Called inside a worker process (``perfagent.suite.worker``) pinned to one GPU, so a CUDA error, a
segfault or a hang costs that process only. Each job's failure is data (a cause and one line), never
an exception: the row always comes back.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from perfagent.api import diagnose
from perfagent.optimize.api import optimize
from perfagent.suite.hygiene import GpuProbe, host, pinned_gpu, versions
from perfagent.suite.manifest import SuiteEntry
from perfagent.suite.models import EntryResult, FailureCause, Job, JobOutcome, SuiteSettings
from perfagent.timing.bench import bench
from perfagent.timing.compiled import is_kernelbench_problem, with_compile_baseline
from perfagent.verify.api import verify
from perfagent.verify.models import ENVIRONMENT_CHECK
from perfagent.workloads.cuda_toolkit import load_inline_gap
from perfagent.workloads.optimizable import kind_class
from profilers.core_errors import (
    BadInput,
    LLMError,
    NotOnThisMachine,
    PerfAgentError,
    VerificationFailed,
    one_line,
)
from profilers.errors import ProfilerError

Figures = dict[str, object]
"""Fields of ``EntryResult`` a job filled in."""


def _cause(exc: BaseException) -> FailureCause:
    if isinstance(exc, BadInput):
        return "bad-input"
    if isinstance(exc, ProfilerError):
        return "profiler"
    if isinstance(exc, VerificationFailed):
        return "incorrect"
    if isinstance(exc, LLMError):
        return "llm"
    if isinstance(exc, PerfAgentError):
        return "perfagent-error"
    return "crash"


def _diagnose(entry_target: Path, settings: SuiteSettings, kernel: str | None) -> tuple[str, Figures]:
    record = diagnose(str(entry_target), profiler=settings.profiler, kernel=kernel, save=False)
    if not record.kernels:
        return "no kernels", {}
    k = record.kernels[0]
    top = f"{k.findings[0].category}: {k.findings[0].title}" if k.findings else None
    return f"{len(record.kernels)} kernel(s); top: {top}", {"top_finding": top}


def _verify(target: Path, candidate: Path, settings: SuiteSettings, seeds: int) -> tuple[str, Figures]:
    result = verify(target, candidate, device=settings.device, seeds=seeds)
    gap = next((c for c in result.checks if c.name == ENVIRONMENT_CHECK and not c.passed), None)
    if gap is not None:  # no verdict on the candidate: this machine cannot build or run it
        raise NotOnThisMachine(gap.detail)
    figures: Figures = {"verdict": result.verdict, "correct": result.verdict == "pass"}
    if result.verdict != "pass":
        raise _JobFailed(
            "incorrect" if result.verdict == "fail" else "inconclusive", f"verdict {result.verdict}", figures
        )
    return "pass", figures


def _bench(target: Path, candidate: Path | None, settings: SuiteSettings, runs: int) -> tuple[str, Figures]:
    result = bench(target, candidate, device=settings.device, runs=runs)
    if candidate is not None and is_kernelbench_problem(target):
        result = with_compile_baseline(result, target)
    timed = result.candidate.timing if result.candidate is not None else result.baseline.timing
    figures: Figures = {
        "baseline_s": result.baseline.timing.median_s,
        "flags": list(result.flags),
        "spread": timed.iqr_s / timed.median_s if timed.median_s > 0 else None,
    }
    if result.baseline.roofline and result.baseline.roofline.pct_of_roofline is not None:
        figures["pct_of_roofline_before"] = result.baseline.roofline.pct_of_roofline
    if result.candidate is not None and result.comparison is not None:
        figures |= {
            "candidate_s": result.candidate.timing.median_s,
            "speedup": result.comparison.speedup,
            "speedup_over_compile": result.speedup_over_compile,
            "significant": result.comparison.significant,
            "noise_threshold": result.comparison.noise_threshold,
        }
        if result.candidate.roofline and result.candidate.roofline.pct_of_roofline is not None:
            figures["pct_of_roofline_after"] = result.candidate.roofline.pct_of_roofline
        return f"{result.comparison.speedup:.3g}x ({result.comparison.verdict})", figures
    return f"{result.baseline.timing.median_s * 1e6:.4g} us", figures


def _optimize(
    entry_name: str,
    target: Path,
    candidate: Path | None,
    settings: SuiteSettings,
    out: Path,
    iterations: int,
    backend: str,
    transform: str | None,
) -> tuple[str, Figures]:
    run_dir = out / "runs" / re.sub(r"[^A-Za-z0-9._-]+", "_", entry_name)
    subject, problem = (
        (candidate, target) if candidate is not None and target.suffix == ".py" else (target, None)
    )
    record = optimize(
        subject,
        problem=problem,
        backend=backend,
        transform=transform,
        iterations=iterations,
        device=settings.device,
        out=run_dir,
        force=True,
    )
    result = record.optimize
    won = [c.transform for c in record.candidates if c.accepted]
    figures: Figures = {"optimize_run": str(run_dir), "transforms_won": won}
    if result is not None:
        figures["optimize_speedup"] = result.best_speedup
        if result.cost is not None:
            figures["optimize_stages"] = dict(result.cost.stages)
        if result.baseline.pct_of_roofline is not None:
            figures.setdefault("pct_of_roofline_before", result.baseline.pct_of_roofline)
        best = next((c for c in record.candidates if c.id == result.best), None)
        if best is not None and best.pct_of_roofline is not None:
            figures["pct_of_roofline_after"] = best.pct_of_roofline
        if best is not None and best.speedup_over_compile is not None:
            figures["speedup_over_compile"] = best.speedup_over_compile
        for c in record.candidates:
            figures["flags"] = sorted({*figures.get("flags", []), *getattr(c, "flags", [])})  # type: ignore[misc]
    speed = f"{result.best_speedup:.3g}x" if result and result.best_speedup else "no accepted candidate"
    return f"{speed}; won: {', '.join(won) or '-'}", figures


class _JobFailed(Exception):
    """A job that ran but whose outcome is a failure with figures worth keeping (e.g. 'fail' verdict)."""

    def __init__(self, cause: FailureCause, message: str, figures: Figures) -> None:
        super().__init__(message)
        self.cause, self.figures = cause, figures


def _plan(entry_jobs: list[Job], kind: str, has_candidate: bool) -> list[Job]:
    """The jobs that make sense for an entry: verify needs a candidate; a Triton script has no oracle
    pair to verify or time against (it is diagnosed and optimized on its own)."""
    if kind_class(kind).verified_by != "oracle":
        return [j for j in entry_jobs if j in ("diagnose", "optimize")]
    return [j for j in entry_jobs if j != "verify" or has_candidate]


def _why_skipped(job: Job, kind: str) -> str:
    if kind_class(kind).verified_by != "oracle":
        return "a Triton script has no reference/candidate pair: only diagnose and optimize apply"
    return "no candidate to verify: give one in suite.toml, or use optimize"


def machine_gap(job: Job, candidate: Path | None) -> str | None:
    """Why this machine cannot run ``job`` on a ``load_inline`` candidate (checked before spending a
    worker on it), or None."""
    if job not in ("verify", "bench") or candidate is None or candidate.suffix != ".py":
        return None
    try:
        uses_load_inline = "load_inline" in candidate.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None  # the job itself reports the unreadable file
    return load_inline_gap() if uses_load_inline else None


def run_entry(entry: dict[str, object], settings: SuiteSettings, out: Path) -> EntryResult:
    """Run ``settings.jobs`` on one entry (a ``SuiteEntry`` dump) and return its row."""
    e = SuiteEntry.model_validate(entry)
    started = time.monotonic()
    probe = GpuProbe(pinned_gpu())
    probe.start()
    actions = _actions(e, settings, out)
    outcomes: list[JobOutcome] = []
    planned = _plan(list(settings.jobs), e.kind, e.candidate is not None)
    figures: Figures = {"skipped": {j: _why_skipped(j, e.kind) for j in settings.jobs if j not in planned}}
    skipped: dict[str, str] = figures["skipped"]  # type: ignore[assignment]
    for job in planned:
        outcome = _run_job(job, actions[job], e.candidate, figures, skipped)
        if outcome is not None:
            outcomes.append(outcome)
    if "verify" not in settings.jobs and e.candidate is None and "optimize" in settings.jobs:
        figures.setdefault("correct", any(j.job == "optimize" and j.ok for j in outcomes))
    clock = probe.finish()
    flags = list(figures.pop("flags", []))  # type: ignore[call-overload]
    if clock is not None and clock.throttled:
        flags.append("sm-clock-throttled")
    first_failure = next((j.failure for j in outcomes if not j.ok), None)
    return EntryResult(
        name=e.name,
        kind=e.kind,
        target=str(e.target),
        candidate=str(e.candidate) if e.candidate else None,
        jobs=outcomes,
        flags=flags,
        failure=first_failure,
        host=host(),
        gpu=probe.name,
        gpu_index=probe.index,
        driver=probe.driver,
        clock=clock,
        versions=versions(),
        elapsed_s=time.monotonic() - started,
        finished=datetime.now(UTC).isoformat(timespec="seconds"),
        **figures,  # type: ignore[arg-type]
    )


def _actions(
    e: SuiteEntry, settings: SuiteSettings, out: Path
) -> dict[Job, Callable[[], tuple[str, Figures]]]:
    """What each job does on entry ``e``: its message and figures (the entry's options over the suite's)."""
    o = e.options
    return {
        "diagnose": lambda: _diagnose(
            e.candidate or e.target if kind_class(e.kind).kernels_in_candidate else e.target,
            settings,
            o.kernel,
        ),
        "verify": lambda: _verify(e.target, e.candidate or e.target, settings, o.seeds or settings.seeds),
        "bench": lambda: _bench(e.target, e.candidate, settings, o.runs or settings.runs),
        "optimize": lambda: _optimize(
            e.name,
            e.target,
            e.candidate,
            settings,
            out,
            o.iterations or settings.iterations,
            o.backend or settings.backend,
            o.transform,
        ),
    }


def _run_job(
    job: Job,
    action: Callable[[], tuple[str, Figures]],
    candidate: Path | None,
    figures: Figures,
    skipped: dict[str, str],
) -> JobOutcome | None:
    """Run one job, adding its figures to ``figures``: its outcome, or None when this machine cannot do
    it (why goes into ``skipped``: skipped, not failed). A failure is data; the other jobs still run."""
    t0 = time.monotonic()
    try:
        gap = machine_gap(job, candidate)
        if gap is not None:
            raise NotOnThisMachine(gap)
        message, got = action()
        figures |= got
        return JobOutcome(job=job, ok=True, elapsed_s=time.monotonic() - t0, message=message)
    except NotOnThisMachine as exc:
        skipped[job] = exc.message
        return None
    except _JobFailed as exc:
        figures |= exc.figures
        return JobOutcome(
            job=job, ok=False, elapsed_s=time.monotonic() - t0, failure=exc.cause, message=str(exc)
        )
    except Exception as exc:
        return JobOutcome(
            job=job, ok=False, elapsed_s=time.monotonic() - t0, failure=_cause(exc), message=one_line(exc)
        )
