"""One worker for an iteration's launch-spec candidates: each verified, then all timed, in one process.

An iteration on a GPU started a verification worker per candidate (4 at a time) and then a timing
worker for the batch; on the H200 unseen2 runs each start (a fresh interpreter under bubblewrap, torch,
the CUDA context) was most of the 5-7 s the verification and the 5-7 s the timing of an iteration took.
Here the candidates are verified one after another in one worker (``perfagent.verify.batch``), each with
the whole protocol, and when every one passed there, the same worker times them all against the
baseline in interleaved rounds (the timing job and its noise rules unchanged), so an iteration pays one
start. A candidate that fails verification leaves the timing to a fresh worker with only the candidates
that passed (``CandidateEvaluator._time_batch``, as before); one that crashes, hangs or hits a CUDA error
is charged with it and the others are verified in a new worker.

Only for workloads whose candidates carry device code alone (``OptimizeWorkload.shares_timing_worker``):
nothing of a candidate runs on the host, so none can patch what checks or times another.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from perfagent.optimize import measure
from perfagent.optimize.events import Built, Verified
from perfagent.optimize.loop_state import verification_summary
from perfagent.optimize.measure import Timing, timing_from_bench
from perfagent.records import VerificationSummary
from perfagent.timing.bench import batch_request, batch_results
from perfagent.verify.batch import verify_many
from perfagent.verify.models import VerificationResult
from perfagent.workloads.optimizable import OptimizeWorkload
from profilers.core_errors import InternalError, PerfAgentError

if TYPE_CHECKING:
    from perfagent.optimize.evaluate import CandidateEvaluator, Measured, _Ahead, _Staged

TIMING_REGISTRY = "perfagent.timing.jobs"


@dataclass
class Together:
    """Per candidate its verification and (all passed in the first worker) its timing."""

    verifications: list[VerificationResult]
    timings: list[Timing] | None
    """None: not timed here (a candidate failed, or the timing step did not run)."""
    verify_s: list[float]
    """Per candidate, its verification's wall seconds inside the worker."""
    time_s: float
    """The timing step's wall seconds inside the worker."""
    workers: int
    timing_note: str | None = None
    """Why the timing step gave no timings, when it ran and failed."""


def verify_and_time(
    wl: OptimizeWorkload,
    pairs: list[tuple[Path, Path | None]],
    *,
    seeds: int,
    seed: int | None,
    runs: int,
    warmup: int,
    timeout_s: float,
    compile_timeout_s: float,
) -> Together:
    """Verify every (candidate file, spec) pair against the original on the GPU and time them together."""
    refs = [wl.reference(spec) for _, spec in pairs]
    cands = [wl.candidate(file, spec) for file, spec in pairs]
    # timing reads each candidate's launch from its own spec copy, the baseline from the first's
    request, backstop = batch_request(
        refs[0],
        cands,
        device="cuda",
        runs=runs,
        warmup=warmup,
        timeout_s=timeout_s,
        compile_timeout_s=compile_timeout_s,
    )
    batch = verify_many(
        list(zip(refs, cands, strict=True)),
        device="cuda",
        seeds=seeds,
        seed=seed,
        timeout_s=timeout_s,
        compile_timeout_s=compile_timeout_s,
        then=(request, TIMING_REGISTRY, backstop),
    )
    timings, note = None, None
    if batch.then is not None:
        try:
            timings = [timing_from_bench(r) for r in batch_results(request, batch.then, [], "")]
        except InternalError:
            raise
        except PerfAgentError as exc:  # no samples: the batch is timed again in a fresh worker
            note = exc.message
    return Together(batch.results, timings, batch.verify_s, batch.then_s, batch.workers, note)


# ------------------------------------------------------------------ the evaluator's side

ITERATION_WORKER_ENV = "PERFAGENT_ITERATION_WORKER"
"""``separate``: a worker per verification and one for the timing, as before (to measure the difference)."""


def wanted(ev: CandidateEvaluator) -> bool:
    """Whether ``ev``'s batches are verified and timed in one worker (launch-spec kernels on a GPU)."""
    return (
        ev.gpu
        and ev.wl.shares_timing_worker
        and ev.wl.timed_by == "cuda-events"
        and os.environ.get(ITERATION_WORKER_ENV, "one") != "separate"
    )


def start(ev: CandidateEvaluator, todo: list[tuple[str, _Staged]]) -> None:
    """Verify (and time) ``todo`` in one worker on a thread of its own; each candidate's result is its
    future in ``ev._ahead``, so ``evaluate`` takes them in order as it takes a pool's."""
    from perfagent.optimize.evaluate import _Ahead

    aheads = []
    for key, staged in todo:
        ahead = _Ahead(staged, Future(), [])
        ev._ahead[key] = ahead
        aheads.append(ahead)
    ev._batch = list(ev._ahead.values())
    thread = threading.Thread(target=_run, args=(ev, aheads), name="perfagent-verify-together", daemon=True)
    thread.start()


def _run(ev: CandidateEvaluator, aheads: list[_Ahead]) -> None:
    live = [a for a in aheads if a.measured.set_running_or_notify_cancel()]
    if not live:
        return
    try:
        results = _measure(ev, live)
    except BaseException as exc:  # the loop's thread raises it when it takes the result
        for a in live:
            a.measured.set_exception(exc)
        return
    for a, measured in zip(live, results, strict=True):
        a.measured.set_result(measured)


def _measure(ev: CandidateEvaluator, aheads: list[_Ahead]) -> list[Measured]:
    """Build-check every candidate, then verify and time those that build in one worker."""
    from perfagent.optimize.evaluate import Measured

    s = ev.settings
    builds = []
    for a in aheads:
        st = a.staged
        build = measure.build_check(
            ev.wl, st.source_path, st.spec, gpu=True, arch=s.arch, timeout_s=s.compile_timeout_s
        )
        said = "builds" if build.ok else "build failed" if build.ok is False else "build not checked"
        a.told.append((Built, f"{st.cid}: {said} ({build.detail})", _about(st, ok=build.ok)))
        builds.append(build)
    built = [i for i, b in enumerate(builds) if b.ok is not False]
    out = [
        Measured(b, VerificationSummary(verdict="not-verified", reason="not run: the build failed"))
        for b in builds
    ]
    if not built:
        return out
    got = verify_and_time(
        ev.wl,
        [(aheads[i].staged.source_path, aheads[i].staged.spec) for i in built],
        seeds=s.seeds,
        seed=s.verify_seed,
        runs=s.runs,
        warmup=s.warmup,
        timeout_s=s.timeout_s,
        compile_timeout_s=s.compile_timeout_s,
    )
    for j, i in enumerate(built):
        st, result = aheads[i].staged, got.verifications[j]
        verification = verification_summary(result, builds[i])
        measure.write_json(st.folder / "verification.json", result)
        st.stages["verify"] = got.verify_s[j]
        message = f"{st.cid}: {verification.verdict} — {verification.reason}"
        aheads[i].told.append((Verified, message, _about(st, verdict=verification.verdict)))
        out[i] = Measured(builds[i], verification)
    if got.timings is not None:
        share = round(got.time_s / len(built), 3)
        for j, i in enumerate(built):
            ev._timed_ahead[aheads[i].staged.cid] = (ev._relative_to_start(got.timings[j]), share)
        ev.timed_together_s = got.time_s
    return out


def _about(st: _Staged, **extra: object) -> dict[str, object]:
    return {"candidate": st.cid, "transform": st.fields["transform"], **extra}
