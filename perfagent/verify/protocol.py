"""The parent ↔ worker protocol: a request file in, a result file out (JSON, pydantic-validated)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from perfagent.timing.models import TimingSamples
from perfagent.verify.models import Check, ErrorSummary, Tolerance
from perfagent.workloads.model import AbsolutePath, AnyRunnable
from profilers.model import Frozen

Device = Literal["cpu", "cuda", "auto"]


class WorkerRequest(Frozen):
    """What the worker should do."""

    mode: Literal["verify", "bench"]
    reference: AnyRunnable
    candidate: AnyRunnable | None = None
    device: Device = "auto"
    seeds: int = 5
    """Verification: number of seeds; each gives a get_inputs() draw and a re-drawn distribution."""
    base_seed: int = 0
    """First seed; the others follow."""
    tolerance: Tolerance = Field(default_factory=Tolerance)
    timeout_s: float = 60.0
    """Limit for one candidate call (first call: compile_timeout_s), s."""
    compile_timeout_s: float = 600.0
    """Limit for importing/building/compiling and the first call, s."""
    runs: int = 100
    """Bench: timed calls per series."""
    warmup: int = 10
    """Bench: untimed calls per workload first."""
    flush_l2: bool = True
    result_path: AbsolutePath
    """Where the worker writes its ``WorkerResult`` (absolute: the worker runs in its own folder)."""
    progress_path: AbsolutePath


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
