"""A batch at once: build and verify an iteration's candidates together, time them before any is judged.

Verification needs no quiet GPU, and a build (a ``load_inline`` extension is close to a minute) is CPU
work, so a batch's builds and verifications overlap (``MeasureLimits.verify_jobs`` at once); the evaluate step
then takes each result in the candidates' order, and timing and re-profiling stay one at a time.
Launch-spec kernels on a GPU go further (``together``): one worker verifies the iteration's candidates,
one after another, then times them all there when every one passed, so an iteration pays one worker
start; a lone new candidate too.
Candidates measured before, and repeats within the batch, are left to the evaluate step (which calls them
duplicates).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from perfagent.optimize import measure, together
from perfagent.optimize.context import RunContext
from perfagent.optimize.evaluate_time import Timed_, Timer
from perfagent.optimize.events import Built, Info, LoopEvent, Verified
from perfagent.optimize.loop_state import Origin, candidate_key, merged, verification_summary
from perfagent.optimize.outcome import would_accept
from perfagent.optimize.plan import PlannedTransform
from perfagent.optimize.staged import Measured, Staged, Tell
from perfagent.records import VerificationSummary
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
        self.timed_together_s = 0.0
        """Seconds the last batch's timing took inside its verification worker (``together``): counted as
        the time stage, not the verify stage the loop waited in."""

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
        jobs = ctx.measuring.jobs_for(len(candidates))
        if not (ctx.gpu or ctx.wl.runs_on_cpu):
            return
        if jobs < 2 and not self.times_batches():  # nothing to gain from holding the batch back
            return
        fresh: dict[str, Candidate] = {}
        for cand in candidates:
            key = candidate_key(cand.source, *merged(cand, origin), language=ctx.wl.language)
            if key not in ctx.state.seen and key not in self.started:
                fresh.setdefault(key, cand)
        # one new candidate gains nothing from jobs: evaluate takes it as usual, unless its verification
        # and timing can share one worker (``together``)
        one_worker = together.wanted(ctx.wl, gpu=ctx.gpu)
        if len(fresh) < (1 if one_worker else 2):
            return
        todo = [(key, self._stage(cand, step, origin)) for key, cand in fresh.items()]
        if one_worker:  # one worker verifies them all, then times them there (``together``)
            cids = ", ".join(s.cid for _, s in todo)
            ctx.tell(
                Info,
                f"verifying {cids} in one worker, then timing them there when all pass",
                transform=step.transform.id,
            )
            self._start_together(todo)
            return
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

    def _start_together(self, todo: list[tuple[str, Staged]]) -> None:
        """Verify (and time) ``todo`` in one worker on a thread of its own; each candidate's result is its
        future in ``started``, so the evaluate step takes them in order as it takes a pool's."""
        batch = [Started(staged, Future(), []) for _, staged in todo]
        self.started.update((key, started) for (key, _), started in zip(todo, batch, strict=True))
        self._batch = list(self.started.values())
        thread = threading.Thread(
            target=self._run_together, args=(batch,), name="perfagent-verify-together", daemon=True
        )
        thread.start()

    def _run_together(self, batch: list[Started]) -> None:
        live = [a for a in batch if a.measured.set_running_or_notify_cancel()]
        if not live:
            return
        try:
            results = self._measure_together(live)
        except BaseException as exc:  # the loop's thread raises it when it takes the result
            for a in live:
                a.measured.set_exception(exc)
            return
        for a, measured in zip(live, results, strict=True):
            a.measured.set_result(measured)

    def _measure_together(self, batch: list[Started]) -> list[Measured]:
        """Build-check every candidate, then verify and time those that build in one worker."""
        ctx, s = self.ctx, self.ctx.measuring
        out = []
        for a in batch:
            st, clock = a.staged, time.monotonic()
            build = ctx.services.build_check(
                ctx.wl, st.source_path, st.spec, gpu=True, arch=s.arch, timeout_s=s.compile_timeout_s
            )
            st.stages["build"] = round(time.monotonic() - clock, 3)
            said = "builds" if build.ok else "build failed" if build.ok is False else "build not checked"
            a.told.append((Built, f"{st.cid}: {said} ({build.detail})", _about(st, ok=build.ok)))
            out.append(
                Measured(
                    build, VerificationSummary(verdict="not-verified", reason="not run: the build failed")
                )
            )
        built = [i for i, m in enumerate(out) if m.build.ok is not False]
        if not built:
            return out
        got = ctx.services.verify_and_time(
            ctx.wl,
            [(batch[i].staged.source_path, batch[i].staged.spec) for i in built],
            seeds=s.seeds,
            seed=s.verify_seed,
            runs=s.runs,
            warmup=s.warmup,
            timeout_s=s.timeout_s,
            compile_timeout_s=s.compile_timeout_s,
        )
        for j, i in enumerate(built):
            st, result = batch[i].staged, got.verifications[j]
            verification = verification_summary(result, out[i].build)
            measure.write_json(st.folder / "verification.json", result)
            st.stages["verify"] = got.verify_s[j]
            message = f"{st.cid}: {verification.verdict} — {verification.reason}"
            batch[i].told.append((Verified, message, _about(st, verdict=verification.verdict)))
            out[i] = Measured(out[i].build, verification)
        if got.timings is not None:
            share = round(got.time_s / len(built), 3)
            for j, i in enumerate(built):
                self._timed[batch[i].staged.cid] = (self.timer.relative_to_start(got.timings[j]), share)
            self.timed_together_s = got.time_s
        return out

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
        self.timed_together_s = 0.0

    def collect(self, started: Started) -> Measured:
        """The result of a build and verification started ahead, its events told now.

        Every other build and verification of the batch is waited for too: timing needs a quiet GPU.
        """
        ctx = self.ctx
        with ctx.tally.clock.stage("verify"):
            wait([started.measured, *(a.measured for a in self.started.values())])
        measured = started.measured.result()
        for cls, message, extra in started.told:
            ctx.tell(cls, message, **extra)
        if self._batch:
            batch, self._batch = self._batch, []
            with ctx.tally.clock.stage("time"):
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
        are timed one by one, each in a worker of its own, as the evaluate step would. A batch timed in
        its verification worker (``together``) is judged on those timings.
        """
        if self.timed_together_s:  # the batch's timing ran in its verification worker (``together``)
            self.ctx.tally.clock.move(self.timed_together_s, "verify", "time")
            self.timed_together_s = 0.0
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
        timed = {st.cid: self._timed[st.cid] for st in ready if st.cid in self._timed}
        if len(timed) != len(ready):  # not timed in its verification worker (``together``)
            in_one = self._time_together(ready) if self.ctx.wl.shares_timing_worker else {}
            timed = in_one or self._time_each(ready)
        best, winner, could_win = self.ctx.state.best_speedup, None, []
        for cid, (timing, _) in timed.items():
            if would_accept(timing, best):  # decided in this order: each winner becomes the best in turn
                could_win.append(cid)
                best, winner = timing.speedup, cid
        self._timed.update(timed)
        self._superseded = {cid: str(winner) for cid in could_win if cid != winner}

    def _time_together(self, ready: list[Staged]) -> dict[str, Timed_]:
        """Candidate id -> (timing, its share of the worker's wall time) from one worker; {} if it failed."""
        ctx, s, cids = self.ctx, self.ctx.measuring, ", ".join(st.cid for st in ready)
        ctx.tell(
            Info, f"timing {cids} against the baseline in one worker (up to {s.runs} interleaved rounds) …"
        )
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


def _about(st: Staged, **extra: object) -> dict[str, object]:
    return {"candidate": st.cid, "transform": st.fields["transform"], **extra}
