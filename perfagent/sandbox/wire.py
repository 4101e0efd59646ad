"""The wire format between perfagent and its worker process: a request file in, a result file out.

JSON, pydantic-validated on both sides. A ``WorkerResult`` carries the worker's ``Check``s (for
verification) or raw ``TimingSamples`` (for timing); the verification and timing packages build their
own results from it and re-export the models they show their callers.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from perfagent.workloads.model import AbsolutePath, AnyRunnable
from profilers.model import Frozen
from profilers.settings import TIMEOUTS, Device

Severity = Literal["error", "warning", "inconclusive"]
Timer = Literal["cuda-events", "perf_counter"]
ACCURACY_FACTOR = 4.0
"""The accuracy rule's factor: a candidate may stray from a float64 run of the original by the dtype
tolerance plus this many times the original's own worst error against that run. 4 leaves room for
another summation order (rounding errors of equally good orders differ by ~2-3x, as torch's dynamo
accuracy check with its 2-3x RMSE multipliers also finds) and still fails an error 100x the
original's, the size a numerically worse formula (single-pass variance) shows."""


ENVIRONMENT_CHECK = "environment"
"""The check a candidate fails when this machine lacks what its code needs (CUDA toolkit, GPU): the
verdict is 'inconclusive' and the optimize loop records the candidate as not verified here, never as
incorrect."""


class Check(Frozen):
    """One check and its outcome."""

    name: str
    """Stable id, e.g. 'correctness', 'inputs-unchanged', 'static:no-streams'."""
    passed: bool
    detail: str = ""
    """What was seen: errors with values and the first bad index on failure; a summary on success."""
    severity: Severity = "error"
    """error: a failure fails the verdict; warning: reported only; inconclusive: a failure means the
    reference cannot tell right from wrong (verdict 'inconclusive', never 'pass')."""


class Tolerance(Frozen):
    """Comparison tolerance: |got - expected| <= atol + rtol * |expected| elementwise.

    ``None`` means the per-dtype default of the reference output: fp32 1e-4, fp16/bf16 1e-2,
    fp64 1e-7, integers and bool exact.
    """

    atol: float | None = None
    """Absolute tolerance (same unit as the output)."""
    rtol: float | None = None
    """Relative tolerance (fraction of |expected|)."""

    def is_default(self) -> bool:
        """Whether the per-dtype default applies (then the accuracy rule may also pass an output)."""
        return self.atol is None and self.rtol is None

    def describe(self, accuracy_rule: bool = False) -> str:
        """The rule as one line; ``accuracy_rule``: the float64 accuracy rule applies too."""
        if not self.is_default():
            return f"atol={self.atol if self.atol is not None else 'dtype default'}, rtol={self.rtol if self.rtol is not None else 'dtype default'}"
        text = "per dtype (fp32 1e-4, fp16/bf16 1e-2, fp64 1e-7, integers exact)"
        if accuracy_rule:
            text += (
                "; a float output outside it still passes when no less accurate than the original "
                "against a float64 run of the original: |candidate - fp64| ≤ atol + rtol·|fp64| + "
                f"{ACCURACY_FACTOR:g} × max|original - fp64|"
            )
        return text


class ErrorSummary(Frozen):
    """Largest errors of the candidate against the reference over every compared output."""

    max_abs_error: float | None = None
    """max |got - expected| (output units)."""
    max_rel_error: float | None = None
    """max |got - expected| / |expected| over elements with |expected| >= 1e-6."""
    mean_abs_error: float | None = None
    """Mean |got - expected| of the worst input set (output units)."""
    max_abs_error_vs_fp64: float | None = None
    """Accuracy rule: max |candidate - float64 run of the original| in the comparison closest to
    failing it (None: the rule was never consulted, the dtype tolerance decided alone)."""
    original_max_abs_error_vs_fp64: float | None = None
    """Accuracy rule: max |original - float64 run of the original| in that same comparison."""
    accuracy_rule_passes: int = 0
    """Comparisons outside the dtype tolerance of the original that the accuracy rule passed."""


WORK_AFTER_END = "runtime:work-after-end-event"
"""The timing check a candidate fails when work it started outlives its timed interval (``bench_job``)."""


class BatchSeries(Frozen):
    """One further candidate of a batched timing (the bench request's ``batch``): its samples and what it failed."""

    samples: list[float]
    """Call times, s, from the same interleaved rounds as the baseline."""
    flops: float | None = None
    bytes: float | None = None
    checks: list[Check] = Field(default_factory=list)
    """Checks this candidate failed while being timed (work left running after its end event)."""


class TimingSamples(Frozen):
    """Raw samples from the timing worker (before statistics)."""

    baseline: list[float]
    """Baseline call times, s."""
    baseline_repeat: list[float] = Field(default_factory=list)
    """A second, interleaved baseline series (for the noise threshold), s."""
    candidate: list[float] | None = None
    """Candidate call times, s."""
    timer: Timer
    l2_flush_bytes: int = 0
    """Bytes zeroed between calls to flush L2 (0 = no flush)."""
    baseline_flops: float | None = None
    """FLOP per baseline call (spec or problem), when known."""
    baseline_bytes: float | None = None
    """Minimum DRAM bytes per call, byte."""
    candidate_flops: float | None = None
    candidate_bytes: float | None = None
    batch: list[BatchSeries] = Field(default_factory=list)
    """The request's further candidates (the bench request's ``batch``), in its order."""
    device: str
    """'cpu' or 'cuda:0'."""
    device_name: str | None = None
    environment: dict[str, str] = Field(default_factory=dict)
    """torch / CUDA / driver versions, clocks when readable."""


WIRE_VERSION: Literal[1] = 1
"""The request envelope's version: a worker refuses a file of another version (a stale warm server)."""


class WorkerRequest(Frozen):
    """What every job's request has; each job subclasses it with its own fields (``jobs.Job.request_type``)."""

    version: Literal[1] = WIRE_VERSION
    job: str
    """Which registered job runs (``perfagent.sandbox.jobs``)."""
    reference: AnyRunnable
    candidate: AnyRunnable | None = None
    device: Device = "auto"
    base_seed: int = 0
    """First seed; the others follow."""
    timeout_s: float = TIMEOUTS.call_s
    """Limit for one candidate call (first call: compile_timeout_s), s."""
    compile_timeout_s: float = TIMEOUTS.compile_s
    """Limit for importing/building/compiling and the first call, s."""

    def candidates(self) -> list[AnyRunnable]:
        """Every candidate whose code the worker loads (a job with more widens this)."""
        return [self.candidate] if self.candidate is not None else []


class WorkerWatch(Frozen):
    """What the worker watches its user code for (``sandbox.watch``): the paths it may write, and the
    user's real home, which no user code may read."""

    writable: list[AbsolutePath] = Field(default_factory=list)
    """Folders user code may write: the worker's own folder and the build caches it was handed."""
    readable_home: list[AbsolutePath] = Field(default_factory=list)
    """Folders under ``user_home`` user code may read (the project, Python's paths)."""
    user_home: AbsolutePath | None = None
    """The invoking user's home (``$HOME`` in the worker is a private folder instead)."""
    confined: bool = False
    """Whether the operating system enforces the confinement too (else this watch is the only guard)."""
    landlock: bool = True
    """Whether the worker narrows itself with Landlock (``watch.restrict``) before user code runs."""


class WorkerCall(Frozen):
    """The request file: the job's typed request, where to write, and what to watch (versioned)."""

    version: Literal[1] = WIRE_VERSION
    registry: str
    """The module whose import registers ``request.job`` (``jobs.Job.registered_by``)."""
    request: dict[str, Any]
    """The job's request as JSON (validated in the worker by the job's ``request_type``)."""
    result_path: AbsolutePath
    """Where the worker writes its ``WorkerResult`` (absolute: the worker runs in its own folder)."""
    progress_path: AbsolutePath
    watch: WorkerWatch = Field(default_factory=WorkerWatch)


class WorkerResult(Frozen):
    """What the worker found."""

    nonce: str
    """Echo of the secret the parent sent on stdin (a result without it is not trusted)."""
    checks: list[Check] = Field(default_factory=list)
    device: str = "cpu"
    device_name: str | None = None
    seeds: list[int] = Field(default_factory=list)
    distributions: list[str] = Field(default_factory=list)
    input_sets: int = 0
    errors: ErrorSummary = Field(default_factory=ErrorSummary)
    notes: list[str] = Field(default_factory=list)
    bad_input: str | None = None
    """The reference (or the request) is unusable: the parent raises BadInput with this."""
    internal_error: str | None = None
    """perfagent's own checking code failed (outside every guarded call of reference or candidate code):
    the parent raises ``InternalError`` with this; the candidate was not judged."""
    timing: TimingSamples | None = None
    step_s: list[float] = Field(default_factory=list)
    """A sequence worker's summary: the wall seconds of each step it ran, in order."""
