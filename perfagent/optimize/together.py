"""One worker for an iteration's launch-spec candidates: each verified, then all timed, in one process.

An iteration on a GPU started a verification worker per candidate (4 at a time) and then a timing
worker for the batch; on the H200 unseen2 runs each start (a fresh interpreter under bubblewrap, torch,
the CUDA context) was most of the 5-7 s the verification and the 5-7 s the timing of an iteration took.
Here the candidates are verified one after another in one worker (``perfagent.verify.batch``), each with
the whole protocol, and when every one passed there, the same worker times them all against the
baseline in interleaved rounds (the timing job and its noise rules unchanged), so an iteration pays one
start. A candidate that fails verification leaves the timing to a fresh worker with only the candidates
that passed (``AheadBatch._time_batch``, as before); one that crashes, hangs or hits a CUDA error
is charged with it and the others are verified in a new worker.

Only for workloads whose candidates carry device code alone (``OptimizeWorkload.shares_timing_worker``):
nothing of a candidate runs on the host, so none can patch what checks or times another.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from perfagent.optimize.measure import Timing, timing_from_bench
from perfagent.timing.bench import batch_request, batch_results
from perfagent.verify.batch import verify_many
from perfagent.verify.models import VerificationResult
from perfagent.workloads.optimizable import OptimizeWorkload
from profilers.core_errors import InternalError, PerfAgentError

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


ITERATION_WORKER_ENV = "PERFAGENT_ITERATION_WORKER"
"""``separate``: a worker per verification and one for the timing, as before (to measure the difference)."""


def wanted(wl: OptimizeWorkload, *, gpu: bool) -> bool:
    """Whether a loop's batches of ``wl`` are verified and timed in one worker (launch-spec kernels on a GPU)."""
    return (
        gpu
        and wl.shares_timing_worker
        and wl.timed_by == "cuda-events"
        and os.environ.get(ITERATION_WORKER_ENV, "one") != "separate"
    )
