"""The optimize run's record on disk, written as the run goes: an interrupted run keeps what it measured.

``RunWriter`` writes ``record.json`` (and ``summary.md``) once the baseline is known, again after every
candidate's verdict (the loop's ``Accepted`` / ``Rejected`` events) and once more at the end. When the run
stops early (Ctrl-C, an LLM endpoint that fails, an internal error) ``save_partial`` writes the record with
every finished candidate and ``stopped`` saying why, so that ``perfagent report RUN`` shows it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from perfagent.optimize.context import LoopTally
from perfagent.optimize.cost import ProfileLog, WorkerCount, run_cost
from perfagent.optimize.events import Accepted, LoopEvent, Rejected
from perfagent.optimize.loop_state import LoopResult, LoopState
from perfagent.optimize.plan_log import PlanLog
from perfagent.optimize.render import render_markdown
from perfagent.records import CandidateOutcome, OptimizeBaseline, OptimizeResult, RunRecord, TableRow
from perfagent.rewrite.base import Rewriter, TokenUsage
from perfagent.rewrite.llm import LLMRewriter
from perfagent.session import save_record
from perfagent.workloads.optimizable import OptimizeWorkload
from profilers.core_errors import NOTE_PREFIX, PerfAgentError, one_line
from profilers.model import KernelDiagnosis, Profile

Progress = Callable[[LoopEvent], None]


def run_llm_usage(candidates: Sequence[CandidateOutcome]) -> dict[str, float | int | None] | None:
    """The run's LLM token use and cost: the sum over candidates (None when no LLM candidate)."""
    used = [TokenUsage.model_validate(c.tokens) for c in candidates if c.tokens]
    if not used:
        return None
    total = sum(used[1:], used[0])
    return {**total.model_dump(), "total_tokens": total.total_tokens}


def stop_reason(exc: BaseException) -> str:
    """Why a run ended early, in words, for ``OptimizeResult.stopped``."""
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted (Ctrl-C): the record holds the candidates finished before it"
    if isinstance(exc, PerfAgentError):
        return f"stopped by an error: {one_line(exc).split(': ', 1)[-1]}"
    return f"stopped by an internal error: {type(exc).__name__}: {exc}"


@dataclass(frozen=True)
class RunHeader:
    """What the record says of a run before anything is measured, fixed at set-up: the writer is handed
    this one value, not the workload and the settings it was drawn from."""

    run_dir: Path
    target: str
    """The target as the user named it."""
    file: Path
    """The workload's file (the record's ``target``)."""
    workload: Literal["cuda-kernel", "kernelbench", "triton-script"]
    language: str
    backend: str
    backend_reason: str
    device: str
    gpu: bool
    iterations: int
    version: str

    @classmethod
    def of(
        cls,
        run_dir: Path,
        wl: OptimizeWorkload,
        *,
        target: str,
        backend: str,
        backend_reason: str,
        device: str,
        gpu: bool,
        iterations: int,
        version: str,
    ) -> RunHeader:
        """The header of a run on ``wl`` (its file, kind and language as they are at set-up)."""
        return cls(
            run_dir,
            target,
            wl.file,
            wl.kind,
            wl.language,
            backend,
            backend_reason,
            device,
            gpu,
            iterations,
            version,
        )


class RunWriter:
    """Builds the ``RunRecord`` of one optimize run and keeps ``<run>/record.json`` current."""

    def __init__(self, header: RunHeader, notes: list[str]) -> None:
        self.header = header
        self.run_dir = header.run_dir
        self.device = header.device
        self.notes = notes
        """The run's notes: set-up's, then what the run adds (the record's ``optimize.notes``)."""
        self.state: LoopState | None = None
        """The loop's state (its outcomes, its best), once the loop is given this writer (``attach``)."""
        self.tally: LoopTally = LoopTally()
        """What the loop has spent (its iterations, stages and their costs; empty before ``attach``)."""
        self._plan = PlanLog()
        self._rewriter: Rewriter | None = None
        self._started = time.monotonic()
        self._workers = WorkerCount()
        self._profiles = ProfileLog()
        self._summary = OptimizeBaseline(file=str(header.file))
        self._profile: Profile | None = None
        self._kernels: list[KernelDiagnosis] = []

    def attach(self, state: LoopState, tally: LoopTally, plan: PlanLog, rewriter: Rewriter) -> None:
        """The loop this writer is handed to: its state, tally, plan log and rewriter are what it records."""
        self.state, self.tally, self._plan, self._rewriter = state, tally, plan, rewriter

    def baseline(
        self, summary: OptimizeBaseline, profile: Profile | None, kernels: list[KernelDiagnosis]
    ) -> None:
        """The original is measured: keep it and write the first record."""
        self._summary, self._profile, self._kernels = summary, profile, kernels
        self.save(self.result(self._so_far("running: baseline measured, no candidate finished yet"), []))

    @property
    def summary(self) -> OptimizeBaseline:
        """The original as the record keeps it (given by ``baseline``; the file alone before it)."""
        return self._summary

    def watch(self, progress: Progress | None) -> Progress:
        """``progress`` wrapped so that every candidate verdict also rewrites the record."""

        def forward(event: LoopEvent) -> None:
            if isinstance(event, Accepted | Rejected) and self.state is not None:
                done = len(self.state.outcomes)
                self.save(self.result(self._so_far(f"running: {done} candidate(s) finished"), []))
            if progress is not None:
                progress(event)

        return forward

    def result(self, outcome: LoopResult, table: list[TableRow]) -> OptimizeResult:
        """The ``OptimizeResult`` for ``outcome``."""
        wall_s = round(time.monotonic() - self._started, 3)
        return OptimizeResult(
            target=self.header.target,
            workload=self.header.workload,
            language=self.header.language,
            backend=self.header.backend,
            backend_reason=self.header.backend_reason,
            device=self.header.device,
            gpu=self.header.gpu,
            iterations=self.header.iterations,
            iterations_used=outcome.iterations_used,
            baseline=self._summary,
            plan=outcome.plan,
            candidates=outcome.candidates,
            best=outcome.best,
            best_speedup=outcome.best_speedup,
            table=table,
            stopped=outcome.stopped,
            llm_errors=outcome.llm_errors,
            llm_usage=run_llm_usage(outcome.candidates),
            **self._sampling(),
            run_dir=str(self.run_dir),
            notes=list(self.notes),
            wall_s=wall_s,
            cost=run_cost(
                self.tally.clock,
                list(self.tally.iteration_costs),
                self._summary.stage_s,
                wall_s,
                self._workers.since(),
                self._profiles.since(),
            ),
        )

    def _sampling(self) -> dict[str, int]:
        """``samples`` and ``duplicates_dropped`` of an llm run (nothing for recipes)."""
        rewriter = self._rewriter
        if not isinstance(rewriter, LLMRewriter):
            return {}
        config = rewriter.config
        return {
            "samples": max(config.samples, config.candidates),
            "duplicates_dropped": rewriter.duplicates_dropped,
        }

    def save(self, result: OptimizeResult) -> RunRecord:
        """Write ``record.json`` and ``summary.md`` for ``result``; the record."""
        prof = self._profile
        record = RunRecord(
            kind="optimize",
            id=self.run_dir.name,
            perfagent_version=self.header.version,
            target=str(self.header.file),
            tool=prof.tool if prof else "none",
            tool_version=prof.tool_version if prof else None,
            mode=prof.mode if prof else "static",
            command=prof.command if prof else None,
            notes=[*(prof.notes if prof else []), *self.notes],
            kernels=self._kernels,
            optimize=result,
            baseline=result.baseline,
            candidates=result.candidates,
            best=result.best,
        )
        save_record(record, self.run_dir)
        (self.run_dir / "summary.md").write_text(render_markdown(result), encoding="utf-8")
        return record

    def save_partial(self, exc: BaseException) -> None:
        """The run ended early: write what it measured, ``stopped`` saying why. Never raises."""
        try:
            self.save(self.result(self._so_far(stop_reason(exc)), []))
        except Exception:  # noqa: BLE001 - the original error is the one to report
            return
        done = len(self.state.outcomes) if self.state is not None else 0
        exc.add_note(
            f"{NOTE_PREFIX}{done} finished candidate(s) saved: perfagent report {shown_path(self.run_dir)}"
        )

    def _so_far(self, stopped: str) -> LoopResult:
        """The loop's state as a ``LoopResult`` (empty before the loop started)."""
        st = self.state
        if st is None:
            return LoopResult(
                candidates=[],
                plan=[],
                best=None,
                best_speedup=None,
                iterations_used=0,
                stopped=stopped,
                llm_errors=[],
            )
        best = next((c for c in st.outcomes if c.id == st.best_id), None)
        return LoopResult(
            candidates=list(st.outcomes),
            plan=self._plan.so_far(),
            best=st.best_id,
            best_speedup=best.speedup if best else None,
            iterations_used=self.tally.step,
            stopped=stopped,
            llm_errors=list(st.llm_errors),
        )


def shown_path(path: Path) -> str:
    """``path`` relative to the current folder when it is under it (messages), else absolute."""
    try:
        return os.path.relpath(path) if path.absolute().is_relative_to(Path.cwd()) else str(path)
    except (OSError, ValueError):
        return str(path)
