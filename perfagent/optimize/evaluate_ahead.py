"""A batch at once: build and verify an iteration's candidates together, time them before any is judged.

Verification needs no quiet GPU, and a build (a ``load_inline`` extension is close to a minute) is CPU
work, so a batch's builds and verifications overlap (``settings.verify_jobs`` at once); the evaluate step
then takes each result in the candidates' order, and timing and re-profiling stay one at a time.
Candidates measured before, and repeats within the batch, are left to the evaluate step (which calls them
duplicates).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from perfagent.optimize import measure
from perfagent.optimize.context import RunContext
from perfagent.optimize.evaluate_time import Timed_, Timer
from perfagent.optimize.events import Info, LoopEvent
from perfagent.optimize.loop_state import Origin, candidate_key, merged
from perfagent.optimize.outcome import would_accept
from perfagent.optimize.plan import PlannedTransform
from perfagent.optimize.staged import Measured, Staged, Tell
from perfagent.rewrite.base import Candidate

__all__ = ["AheadBatch", "Started"]

Told = list[tuple[type[LoopEvent], str, dict[str, object]]]


@dataclass
class Started:
    """A candidate being built and verified ahead of its turn."""

    staged: Staged
    measured: Future[Measured]
    told: Told
    """Its build and verify events, held back so that they are told in the candidates' order."""


class AheadBatch:
    """The builds and verifications started ahead for one loop, and the batch's timings."""

    def __init__(
        self,
        ctx: RunContext,
        timer: Timer,
        stage: Callable[[Candidate, PlannedTransform, Origin], Staged],
        build_and_verify: Callable[[Staged, Tell], Measured],
    ) -> None:
        self.ctx, self.timer = ctx, timer
        self._stage, self._build_and_verify = stage, build_and_verify
        self.started: dict[str, Started] = {}
        """Candidate key -> its build and verification."""
        self._batch: list[Started] = []
        """The batch started last, in the candidates' order, until it is timed."""
        self._timed: dict[str, Timed_] = {}
        """Candidate id -> its timing from the batch's timing (``_time_batch``)."""
        self._superseded: dict[str, str] = {}
        """Candidate id -> the later candidate of its batch that will replace it as the best: it is
        accepted in turn but not re-profiled (only the batch's last winner's profile is planned from)."""

    def take(self, key: str) -> Started | None:
        return self.started.pop(key, None)

    def timed(self, cid: str) -> Timed_ | None:
        """The timing ``cid`` got with its batch (taken: asked once)."""
        return self._timed.pop(cid, None)

    def replaced_by(self, cid: str) -> str | None:
        """The candidate of ``cid``'s batch that will replace it as the best (asked once)."""
        return self._superseded.pop(cid, None)

    def start(self, candidates: list[Candidate], step: PlannedTransform, origin: Origin) -> None:
        """Start building and verifying ``candidates`` together, when it gains something."""
        ctx = self.ctx
        jobs = ctx.settings.verify_jobs_for(len(candidates))
        if not (ctx.gpu or ctx.wl.runs_on_cpu):
            return
        if jobs < 2 and not self.times_batches():  # nothing to gain from holding the batch back
            return
        fresh: dict[str, Candidate] = {}
        for cand in candidates:
            key = candidate_key(cand.source, *merged(cand, origin), language=ctx.wl.language)
            if key not in ctx.state.seen and key not in self.started:
                fresh.setdefault(key, cand)
        if len(fresh) < 2:  # one new candidate gains nothing: evaluate takes it as usual
            return
        todo = [(key, self._stage(cand, step, origin)) for key, cand in fresh.items()]
        timed = (
            "then timing them in one worker"
            if self.times_batches() and ctx.wl.shares_timing_worker
            else "timing one at a time"
        )
        ctx.tell(
            Info,
            f"building and verifying {', '.join(s.cid for _, s in todo)} at once ({jobs} jobs); {timed}",
            transform=step.transform.id,
        )
        self._submit(todo, jobs)

    def _submit(self, todo: list[tuple[str, Staged]], jobs: int) -> None:
        pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="perfagent-verify")
        for key, staged in todo:
            told: Told = []

            def hold(cls: type[LoopEvent], message: str, _told: list[Any] = told, **extra: object) -> None:
                _told.append((cls, message, extra))

            self.started[key] = Started(staged, pool.submit(self._build_and_verify, staged, hold), told)
        self._batch = list(self.started.values())
        pool.shutdown(wait=False)

    def settle(self) -> None:
        """Forget builds and verifications no evaluate took (a batch cut short by an error): those not
        started are cancelled, running ones waited for (their subprocesses have time limits)."""
        for started in self.started.values():
            if not started.measured.cancel():
                started.measured.exception()
        self.started.clear()
        self._batch.clear()
        self._timed.clear()
        self._superseded.clear()

    def collect(self, started: Started) -> Measured:
        """The result of a build and verification started ahead, its events told now.

        Every other build and verification of the batch is waited for too: timing needs a quiet GPU.
        """
        ctx = self.ctx
        with ctx.clock.stage("verify"):
            wait([started.measured, *(a.measured for a in self.started.values())])
        measured = started.measured.result()
        for cls, message, extra in started.told:
            ctx.tell(cls, message, **extra)
        if self._batch:
            batch, self._batch = self._batch, []
            with ctx.clock.stage("time"):
                self._time_batch(batch)
        return measured

    def times_batches(self) -> bool:
        """A batch's verified candidates are all timed before any is judged (``_time_batch``): on a GPU,
        for workloads timed with CUDA events (a Triton script's timing is its ncu re-profile)."""
        return self.ctx.gpu and self.ctx.wl.timed_by == "cuda-events"

    def _time_batch(self, batch: list[Started]) -> None:
        """Time the batch's built and verified candidates against the baseline before any is judged, and
        name those a later candidate of the batch will replace as the best (``_superseded``): only the
        batch's final winner is re-profiled (an ncu run, 7-14 s).

        Candidates that carry device code only (``OptimizeWorkload.shares_timing_worker``) are timed in
        one worker: one worker start for the batch. A batch that fails there (a candidate crashed or hung
        in it) is timed again one candidate at a time, which says which one it was. Python candidates
        are timed one by one, each in a worker of its own, as the evaluate step would.
        """
        if not self.times_batches():
            return
        ready = [
            a.staged
            for a in batch
            if (m := a.measured.result()).build.ok is not False and m.verification.verdict == "pass"
        ]
        if len(ready) < 2:
            return
        # a batch that failed in one worker is timed one candidate at a time here, still before any is
        # judged: its interim winners are not re-profiled either
        together = self._time_together(ready) if self.ctx.wl.shares_timing_worker else {}
        timed = together or self._time_each(ready)
        best, winner, could_win = self.ctx.state.best_speedup, None, []
        for cid, (timing, _) in timed.items():
            if would_accept(timing, best):  # decided in this order: each winner becomes the best in turn
                could_win.append(cid)
                best, winner = timing.speedup, cid
        self._timed.update(timed)
        self._superseded = {cid: str(winner) for cid in could_win if cid != winner}

    def _time_together(self, ready: list[Staged]) -> dict[str, Timed_]:
        """Candidate id -> (timing, its share of the worker's wall time) from one worker; {} if it failed."""
        ctx, s, cids = self.ctx, self.ctx.settings, ", ".join(st.cid for st in ready)
        ctx.tell(Info, f"timing {cids} against the baseline in one worker ({s.runs} interleaved rounds) …")
        clock = time.monotonic()
        got = ctx.services.time_batch(
            ctx.wl,
            [(st.source_path, st.spec) for st in ready],
            runs=s.runs,
            warmup=s.warmup,
            timeout_s=s.timeout_s,
            compile_timeout_s=s.compile_timeout_s,
        )
        if isinstance(got, str):
            ctx.tell(Info, f"timing {cids} together failed ({got}); timing each alone")
            return {}
        share = round((time.monotonic() - clock) / len(ready), 3)
        return {st.cid: (self.timer.relative_to_start(t), share) for st, t in zip(ready, got, strict=True)}

    def _time_each(self, ready: list[Staged]) -> dict[str, tuple[measure.Timing, float]]:
        """Candidate id -> (timing, wall seconds), each candidate timed in a worker of its own."""
        timed = {}
        for st in ready:
            clock = time.monotonic()
            timing, _ = self.timer.time_candidate(st.cid, st.source_path, st.spec, st.folder)
            timed[st.cid] = (timing, round(time.monotonic() - clock, 3))
        return timed
