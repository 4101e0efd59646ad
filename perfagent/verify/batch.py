"""``verify_many``: several candidates of one reference verified in one worker (``sandbox.sequence``).

Each candidate gets the whole protocol of ``verify`` (its own seeds, poisoning, launches and checks, its
own compile), as its own step of one worker: one process start and one CUDA context for the batch
instead of one each (and one NVRTC build of the original for the batch and its timing:
``cuda_launch.compile_kernel`` keeps what the process built, by file text and macros). A candidate that crashes, hangs, raises or hits a CUDA error is charged with it
(the same checks ``verify`` would give it) and the candidates after it are verified in a new worker, so
one candidate's crash never decides another's verdict. A reference that fails in a shared worker is
tried again with each candidate alone (a candidate may have spoiled the process): only a failure there
is the reference's (``BadInput``). The caller decides whose code may share a
process (the optimize loop: launch-spec kernels, which run no host code of their own).

``then``: one more worker request run after the verifications, in the same process, only when every
candidate passed there (the optimize loop times the batch: ``perfagent.timing.bench_request``). Its raw
result comes back as ``BatchVerification.then``; None when it did not run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from perfagent.sandbox.sequence import SequenceOutcome, SequenceRequest, run_sequence
from perfagent.sandbox.wire import WorkerRequest, WorkerResult
from perfagent.sandbox.worker_outcome import WorkerOutcome
from perfagent.verify.api import (
    _check_device,
    _check_limits,
    _checks_and_notes,
    _device_label,
    _request,
    _result,
)
from perfagent.verify.jobs import VerifyRequest
from perfagent.verify.models import Tolerance, VerificationResult
from perfagent.workloads.model import RunnableWorkload
from profilers.core_errors import BadInput, InternalError
from profilers.settings import TIMEOUTS, Device

VERIFY_REGISTRY = "perfagent.verify.jobs"


@dataclass
class BatchVerification:
    """One verdict per candidate (in order), the ``then`` step's raw result, and how many workers ran."""

    results: list[VerificationResult]
    then: WorkerResult | None = None
    then_s: float = 0.0
    """Wall seconds the ``then`` step took inside the worker."""
    verify_s: list[float] = field(default_factory=list)
    """Per candidate, the wall seconds of its verification inside the worker (0: not measured)."""
    workers: int = 0
    notes: list[str] = field(default_factory=list)


def verify_many(
    pairs: list[tuple[RunnableWorkload, RunnableWorkload]],
    *,
    device: Device = "auto",
    seeds: int = 5,
    seed: int | None = None,
    timeout_s: float = TIMEOUTS.call_s,
    compile_timeout_s: float = TIMEOUTS.compile_s,
    then: tuple[WorkerRequest, str, float] | None = None,
    progress: Callable[[str], None] | None = None,
) -> BatchVerification:
    """Verify each (reference, candidate) pair; one worker unless a candidate ends it.

    Args:
        pairs: each candidate with its reference: one oracle, but a launch-spec candidate's copy of the
            spec carries its own launch (macros, geometry), which the protocol reads from the reference.
        then: (request, the module registering its job, its own time limit in s), run last in the
            first worker when every candidate passed there.
        Others as for ``verify`` (no tolerance override, sanitizer or check command: the loop's use).

    Raises:
        BadInput, InternalError: as ``verify`` (the reference fails; our own checking code broke).
    """
    _check_limits(seeds, timeout_s)
    tol = Tolerance()
    requests: list[VerifyRequest] = []
    for ref, cand in pairs:
        _check_device(ref, cand, device, sanitizer=False)
        requests.append(_request(ref, cand, device, seeds, seed, tol, timeout_s, compile_timeout_s))
    by_index: dict[int, VerificationResult] = {}
    out = BatchVerification(results=[], verify_s=[0.0] * len(pairs))
    todo, alone = list(range(len(pairs))), False
    while todo:
        chunk = todo[:1] if alone else todo
        try:
            done, then_result, seq = _one_worker(
                requests, chunk, then if out.workers == 0 else None, progress
            )
        except BadInput:
            # the reference failed in a worker it shared with candidates, any of which may have spoiled
            # the process: each is verified alone, where a reference failure is the reference's
            if len(chunk) == 1:
                raise
            alone = True
            continue
        if not done:  # the worker finished no step and charged none: a bug of ours, never loop forever
            raise InternalError(
                "a verification worker finished no candidate",
                hint="set PERFAGENT_KEEP_WORKDIR=1 and report it",
            )
        out.workers += 1
        out.notes.extend(seq.notes)
        if then_result is not None:
            out.then, out.then_s = then_result, seq.step_s[-1] if seq.step_s else 0.0
        by_index.update(done)
        for pos, seconds in zip(chunk, seq.step_s, strict=False):
            out.verify_s[pos] = seconds
        todo = [i for i in todo if i not in done]
    out.results = [by_index[i] for i in range(len(pairs))]
    return out


def _one_worker(
    requests: list[VerifyRequest],
    todo: list[int],
    then: tuple[WorkerRequest, str, float] | None,
    progress: Callable[[str], None] | None,
) -> tuple[dict[int, VerificationResult], WorkerResult | None, SequenceOutcome]:
    """Verify ``todo`` (indexes) in one worker: the verdicts of the steps it finished or was ended in."""
    started = time.monotonic()
    steps: list[WorkerRequest] = [requests[i] for i in todo]
    registries = [VERIFY_REGISTRY]
    backstop = sum(_backstop(requests[i]) for i in todo)
    if then is not None:
        steps.append(then[0])
        registries.append(then[1])
        backstop += then[2]
    first = requests[todo[0]]
    sequence = SequenceRequest(
        reference=first.reference,
        device=first.device,
        timeout_s=first.timeout_s,
        compile_timeout_s=first.compile_timeout_s,
        registries=registries,
        steps=[s.model_dump(mode="json") for s in steps],
        step_candidates=[c for s in steps for c in s.candidates()],
        last_needs_all_passed=then is not None,
    )
    seq = run_sequence(sequence, backstop_s=backstop, progress=progress)
    done: dict[int, VerificationResult] = {}
    for pos, i in enumerate(todo):
        item = seq.steps[pos]
        if item is not None:
            outcome = WorkerOutcome(result=item, sandbox=seq.sandbox)
        elif seq.ended is not None and seq.ended[0] == pos:
            outcome = WorkerOutcome(result=None, checks=seq.ended[1], sandbox=seq.sandbox)
        else:
            continue
        ref, cand = requests[i].reference, requests[i].candidate
        assert cand is not None
        done[i] = _verdict(outcome, ref, cand, requests[i], started)
    then_result = seq.steps[len(todo)] if then is not None and len(seq.steps) > len(todo) else None
    return done, then_result, seq


def _verdict(
    outcome: WorkerOutcome,
    ref: RunnableWorkload,
    cand: RunnableWorkload,
    request: VerifyRequest,
    started: float,
) -> VerificationResult:
    """``verify``'s result for one step of the worker."""
    worker = outcome.result
    checks, notes = _checks_and_notes(outcome, ref, cand, [], request.timeout_s, [])
    return _result(
        checks,
        [*notes, "verified in one worker with the other candidates of its batch"],
        ref,
        cand,
        device=_device_label(
            worker.device if worker else request.device, worker.device_name if worker else None
        ),
        tolerance=request.tolerance.describe(accuracy_rule=ref.reruns_in_float64),
        started=started,
        worker=worker,
    )


def _backstop(request: VerifyRequest) -> float:
    """``verify``'s limit for one candidate's worker (the sequence sums them)."""
    return 3 * request.compile_timeout_s + request.timeout_s * (8 * request.seeds + 10) + 60
