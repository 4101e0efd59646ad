"""Several jobs in one worker, one after another: one process start, one CUDA context for a batch.

A worker start is most of a short verification or timing on a GPU host (a fresh interpreter under
bubblewrap, the import of torch, the CUDA context: most of the 5.5 s a one-candidate verification took on
the H200 unseen2 runs), and an optimize iteration started one per candidate plus one for the timing.
``SequenceRequest`` carries the steps' own requests (each a registered job's, validated in the worker by
that job's request type); the worker runs them in order, each under the same harness (watchdog, guarded
calls, progress lines) and writes each step's ``WorkerResult`` to its own file
(``worker_outcome.item_result_path``), so that what finished survives a later step's crash or hang.

What may share the process is the caller's decision (as for ``bench_batch``): the optimize loop
sequences launch-spec kernels only, which run no host code of their own. The worker stops early
(``stop_on``) after a step whose candidate raised or hit a CUDA error (an illegal address leaves the
context unusable): the parent learns which steps ran from the files and runs the rest in a new worker.
The last step may ask that every earlier step passed (``last_needs_all_passed``: time the candidates
only once each of them verified here).

Parent side: ``run_sequence`` returns each step's result, and for the step the worker died or hung in
(the first without a result, when the worker did not end cleanly) the checks that say how.
"""

from __future__ import annotations

import dataclasses
import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, cast

from pydantic import Field

from perfagent.sandbox.harness import CandidateFailure, Harness, write_result
from perfagent.sandbox.jobs import Job, entry_point, job_for, register
from perfagent.sandbox.runner import run_worker
from perfagent.sandbox.wire import Check, WorkerRequest, WorkerResult
from perfagent.sandbox.worker_outcome import item_result_path
from perfagent.workloads.model import AnyRunnable

STOP_CHECKS = ("cuda-errors", "candidate-runs")
"""Failed checks after which no further step runs in the same process: the candidate raised, crashed
or hit a CUDA error (a sticky one makes every later call on the context fail)."""


class SequenceRequest(WorkerRequest):
    """Run ``steps`` (each a registered job's request, as JSON) in one worker, in order."""

    job: Literal["sequence"] = "sequence"
    registries: list[str] = Field(default_factory=list)
    """The modules that register the steps' jobs (imported in the worker before the steps run)."""
    steps: list[dict[str, Any]] = Field(default_factory=list)
    step_candidates: list[AnyRunnable] = Field(default_factory=list)
    """Every candidate of every step (what the worker may read, and whose frames name a failure)."""
    stop_on: list[str] = Field(default_factory=lambda: list(STOP_CHECKS))
    last_needs_all_passed: bool = False
    """The last step runs only when every earlier step ran and passed every check (timing only what
    verified in this process)."""

    def candidates(self) -> list[AnyRunnable]:
        return [*super().candidates(), *self.step_candidates]


SEQUENCE = register(
    Job(
        name="sequence",
        mode="verify",
        request_type=SequenceRequest,
        registered_by=__name__,
        entry=f"{__name__}:run_steps",
    )
)


def failed_checks(result: WorkerResult) -> list[Check]:
    """The checks of ``result`` that fail its step (warnings aside)."""
    return [c for c in result.checks if not c.passed and c.severity != "warning"]


def run_steps(h: Harness[SequenceRequest]) -> WorkerResult:
    """Worker side: each step under ``h``'s watchdog and progress file, its result in its own file."""
    req = h.request
    for module in req.registries:
        if module.split(".")[0] != __name__.split(".")[0]:
            raise ValueError(f"a sequence step's registry is outside the package: {module}")
        importlib.import_module(module)  # fills the job registry for the steps
    clean, step_s = True, []
    for i, raw in enumerate(req.steps):
        if req.last_needs_all_passed and i == len(req.steps) - 1 and not clean:
            break
        job = job_for(str(raw.get("job")))
        request = job.request_type.model_validate(raw)
        started = time.monotonic()
        result = _run_step(h, job, request, str(item_result_path(h.result_path, i)))
        step_s.append(round(time.monotonic() - started, 3))
        failed = failed_checks(result)
        clean = clean and not failed
        if any(c.name in req.stop_on for c in failed):
            break
    return WorkerResult(
        nonce=h.nonce,
        device=h.device,
        device_name=h.device_name,
        notes=[*h.notes, f"{len(step_s)} of {len(req.steps)} steps ran in one worker"],
        step_s=step_s,
    )


def _run_step(h: Harness[SequenceRequest], job: Job, request: WorkerRequest, path: str) -> WorkerResult:
    """One step with a harness of its own request (the same watchdog, progress file and device)."""
    step: Harness[Any] = dataclasses.replace(
        cast(Harness[Any], h),
        request=request,
        result_path=path,
        notes=[],
        candidate_files=tuple(c.path for c in request.candidates()),
    )
    h.progress(f"step {job.name}: {', '.join(step.candidate_files) or 'the reference alone'}")
    try:
        result = entry_point(job)(step)
    except CandidateFailure as exc:
        result = WorkerResult(
            nonce=h.nonce, device=h.device, device_name=h.device_name, checks=[exc.check], notes=step.notes
        )
    assert isinstance(result, WorkerResult), f"job {job.name} returned {type(result).__name__}"
    write_result(path, result)
    return result


@dataclass
class SequenceOutcome:
    """Per step, its result (None: not run); ``ended`` names the step the worker ended in without
    finishing it (a crash or a hang), with the checks that say how."""

    steps: list[WorkerResult | None]
    ended: tuple[int, list[Check]] | None
    sandbox: str
    notes: list[str]
    step_s: list[float]
    """Wall seconds of each step that ran (empty when the worker did not end cleanly)."""


def run_sequence(
    request: SequenceRequest, *, backstop_s: float, progress: Callable[[str], None] | None = None
) -> SequenceOutcome:
    """Parent side: run the sequence worker and say which steps finished (``runner.run_worker``'s errors:
    a reference that fails is bad input, our own checking code failing an internal error)."""
    outcome = run_worker(request, backstop_s=backstop_s, progress=progress, items=len(request.steps))
    steps = list(outcome.items)
    summary = outcome.result
    # a clean ending is a summary without failed checks; a hang (the watchdog's result, or the
    # backstop) or a death (no result) is charged to the first step that wrote nothing
    crashed = summary is None or any(not c.passed for c in summary.checks)
    missing = next((i for i, r in enumerate(steps) if r is None), None)
    ended = None
    if crashed and missing is not None:
        how = [c for c in [*(summary.checks if summary else []), *outcome.checks] if not c.passed]
        ended = (missing, how)
    return SequenceOutcome(
        steps=steps,
        ended=ended,
        sandbox=outcome.sandbox,
        notes=list(summary.notes) if summary else [],
        step_s=list(summary.step_s) if summary else [],
    )
