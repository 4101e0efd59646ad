"""What the optimize loop asks of the machine, as one value handed to it: resolve, probe, build, verify, time,
profile, diagnose.

The loop, the baseline and the two-machine phases call these through a ``Services`` they are given
(``RunContext.services``), never through module attributes, so a test substitutes a simulated GPU by
passing one (``perfagent.optimize(..., services=...)``) or, for a run started from the CLI, by
``using(services)`` around it. ``DEFAULT`` is the real thing: ``perfagent.optimize.measure`` and
``perfagent.optimize.reprofile``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass

import profilers
from perfagent import api
from perfagent.optimize import measure, reprofile, together
from perfagent.records import RunRecord
from perfagent.sandbox.runner import workers_ahead
from perfagent.target import TargetDescription
from perfagent.timing.compiled import compile_baseline
from perfagent.timing.models import CompileBaseline
from perfagent.verify.models import VerificationResult
from perfagent.workloads.describe import describe_target
from profilers.model import Profile

__all__ = ["DEFAULT", "WORKER_MODULES", "Services", "current", "using", "workers_ahead_for"]

WORKER_MODULES = (
    "perfagent.sandbox.sequence",
    "perfagent.verify.jobs",
    "perfagent.verify.cuda_protocol",
    "perfagent.timing.jobs",
    "perfagent.timing.bench_job",
)
"""What a worker started ahead imports besides torch (a launch-spec iteration's verify-and-time worker)."""


def _ncu_availability() -> str | None:
    return profilers.get_profiler("ncu").availability()


@dataclass(frozen=True)
class Services:
    """The calls that touch the GPU, the compilers or the profiler (signatures as the ``DEFAULT`` ones)."""

    describe: Callable[..., TargetDescription] = describe_target
    """The one resolution of the user's target (``describe_target``): a run calls it once, at its start."""
    profile: Callable[..., Profile] = api.profile
    """``perfagent.profile``: the original's static analysis where there is no GPU."""
    diagnose: Callable[..., RunRecord] = api.diagnose
    """``perfagent.diagnose``: the recorded report of the original (``--report``) where nothing is profiled."""
    probe_gpu: Callable[[str], tuple[bool, str]] = measure.probe_gpu
    """``--device`` -> (a GPU is usable, its label)."""
    ncu_availability: Callable[[], str | None] = _ncu_availability
    """Why ncu cannot run here (None: it can)."""
    build_check: Callable[..., measure.BuildOutcome] = measure.build_check
    verify: Callable[..., VerificationResult | None] = measure.verify_candidate
    """``verify_candidate``: the verifier's result, or None where the workload cannot run here."""
    time: Callable[..., measure.Timing] = measure.bench_timing
    time_batch: Callable[..., list[measure.Timing] | str] = measure.bench_timings
    reprofile: Callable[..., reprofile.Reprofile] = reprofile.reprofile
    time_compiled: Callable[..., CompileBaseline] = compile_baseline
    """``torch.compile(Model)`` against eager on this GPU (a KernelBench problem's reference point)."""
    verify_and_time: Callable[..., together.Together] = together.verify_and_time
    """An iteration's launch-spec candidates verified, then (all passed) timed, in one worker."""


DEFAULT = Services()
_CURRENT: ContextVar[Services] = ContextVar("perfagent_optimize_services", default=DEFAULT)


def current(given: Services | None = None) -> Services:
    """``given``, else the services ``using`` put in place, else ``DEFAULT``."""
    return given if given is not None else _CURRENT.get()


@contextmanager
def using(services: Services) -> Iterator[Services]:
    """Run what is inside (a CLI command, say) with ``services`` wherever none is passed explicitly."""
    token = _CURRENT.set(services)
    try:
        yield services
    finally:
        _CURRENT.reset(token)


def workers_ahead_for(services: Services, gpu: bool) -> AbstractContextManager[None]:
    """For a whole run: fresh workers kept started ahead (``sandbox.runner.workers_ahead``: where workers
    start fresh, as confined GPU workers do), unless the services are simulated (nothing would take them)."""
    if services != DEFAULT:
        return nullcontext()
    return workers_ahead("cuda" if gpu else "cpu", WORKER_MODULES)
