"""The walkthrough's way to the optimize loop: ``perfagent.optimize`` through its public API.

``run`` builds the run's ``OptimizeSettings`` from what the user chose (the kernel, the finding, the
transform, the backend) over the CLI's options, and calls ``perfagent.optimize(target, settings=...,
progress=...)`` from a thread worker (never on the UI thread). Every ``LoopEvent`` becomes a
``ProgressEvent`` (its message, iteration and budget drive the log and the progress bar); the callback
raises ``OptimizeCancelled`` when the user has left the screen, and the loop lets it propagate (the record
keeps what was measured). The result is the run's ``RunRecord``: the review shows its
``CandidateOutcome``s as they are (``tui.candidate_view``).

Accept: ``accept()`` calls the one apply path of the CLI and the library,
``perfagent.optimize.apply.apply_candidate``: a fresh backup (``<file>.orig``, or ``<file>.orig.N`` when
earlier backups exist; none is overwritten or silently reused), the candidate's source written over its
file (temp file + rename), and, for a win measured with ``-D`` macros or launch geometry, the launch spec
holding them written beside the file. Reject writes nothing.

A bridge built without the loop (``OptimizeBridge(loop=False)``: a viewer of saved runs) says "the
optimize loop is not available in this build" and offers what works without it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import perfagent
from perfagent.doctor import run_probes
from perfagent.optimize.apply import apply_candidate
from perfagent.optimize.events import LoopEvent, ProgressCallback
from perfagent.optimize.settings import OptimizeSettings
from perfagent.records import CandidateOutcome, RunRecord
from perfagent.rewrite.recipes import recipes_for
from perfagent.workloads.describe import describe_target
from perfagent.workloads.kernelbench import inspect_python
from profilers.core_errors import BadInput
from tui.candidate_view import Outcome, outcome_of

__all__ = [
    "LOOP_UNAVAILABLE",
    "Accepted",
    "Capabilities",
    "OptimizeBridge",
    "OptimizeCancelled",
    "OptimizeFunction",
    "OptimizeRequest",
    "OptimizeUnavailable",
    "ProgressEvent",
    "recipe_languages",
    "source_languages",
]

LOOP_UNAVAILABLE = "the optimize loop is not available in this build"
BACKENDS = ("recipes", "llm")


class OptimizeUnavailable(Exception):
    """The bridge was built without the optimize loop."""


class OptimizeCancelled(Exception):
    """Raised from the progress callback when the user left the walkthrough; the loop lets it propagate."""


class OptimizeFunction(Protocol):
    """The public signature of ``perfagent.optimize`` the bridge calls."""

    def __call__(
        self,
        target: str | Path,
        *,
        settings: OptimizeSettings | None = ...,
        progress: ProgressCallback | None = ...,
    ) -> RunRecord: ...


@dataclass(frozen=True)
class ProgressEvent:
    """One progress report of the loop, as the walkthrough logs it."""

    text: str
    step: int | None = None
    total: int | None = None

    @classmethod
    def of(cls, event: LoopEvent) -> ProgressEvent:
        return cls(event.message, event.step, event.total)


@dataclass(frozen=True)
class Capabilities:
    """What this machine and this record allow; each field is None when available, else the reason."""

    loop: str | None
    source: str | None
    gpu: str | None
    llm: str | None

    @property
    def can_run(self) -> bool:
        """True when the loop exists and the record points at a source it can rewrite."""
        return self.loop is None and self.source is None

    def backends(self) -> dict[str, str | None]:
        """Backend -> None when usable, else why not."""
        return {"recipes": None, "llm": self.llm}


@dataclass(frozen=True)
class OptimizeRequest:
    """What the user chose in the walkthrough."""

    target: str
    kernel_regex: str
    finding: str
    transform: str
    backend: str
    options: Mapping[str, Any] = field(default_factory=dict)
    """Further ``OptimizeSettings`` fields (the CLI's options)."""

    def settings(self) -> OptimizeSettings:
        """The run's settings: the user's choice over ``options``."""
        return OptimizeSettings.build(
            None,
            **{
                **dict(self.options),
                "kernel": self.kernel_regex,
                "finding": self.finding,
                "transforms": (self.transform,),
                "backend": self.backend,
            },
        )


@dataclass(frozen=True)
class Accepted:
    """Where an accepted candidate was written."""

    path: Path
    backup: Path
    """This write's backup (``<file>.orig`` or ``<file>.orig.N``)."""
    backup_created: bool
    """Always True: every accept makes its own backup (kept for the message's wording)."""
    spec: Path | None = None
    """The launch spec written beside the file (the win needs its macros / launch geometry)."""
    notes: tuple[str, ...] = ()
    """What the apply path said (an earlier backup present, the spec written and why)."""


def kernel_regex(base_name: str) -> str:
    """The ``kernel=`` regex that selects exactly this kernel by its base name."""
    return "^" + re.escape(base_name) + "$"


class OptimizeBridge:
    """The walkthrough's only way to the optimize loop. Subclass to pin capabilities in tests."""

    def __init__(self, *, loop: bool = True) -> None:
        """``loop=False``: a build without the optimize loop (a viewer of saved runs)."""
        self.optimize: OptimizeFunction | None = perfagent.optimize if loop else None

    def unavailable_reason(self) -> str | None:
        """None when the loop exists, else the sentence the walkthrough shows."""
        return None if self.optimize is not None else LOOP_UNAVAILABLE

    def probe(self, record: RunRecord) -> Capabilities:
        """What can run here (slow: runs the ``perfagent doctor`` probes; call from a worker)."""
        probes = {p.name: p for p in run_probes().probes}
        gpu = probes.get("GPU")
        llm = probes.get("LLM endpoint")
        gpu_reason = None
        if gpu is None or not gpu.ok:
            detail = gpu.detail.split(":")[0] if gpu else "not probed"
            gpu_reason = f"none here ({detail}) — CPU correctness checks only, no timings"
        llm_reason = None
        if llm is None or not llm.ok:
            detail = llm.detail if llm else "not probed"
            llm_reason = (
                "no endpoint (PERFAGENT_LLM_BASE_URL unset) — recipes backend only"
                if "not set" in detail
                else detail
            )
        return Capabilities(
            loop=self.unavailable_reason(), source=source_reason(record), gpu=gpu_reason, llm=llm_reason
        )

    def run(self, request: OptimizeRequest, progress: Callable[[ProgressEvent], None]) -> Outcome:
        """Run the loop for one finding and transform; blocks (call from a worker).

        Raises:
            OptimizeUnavailable: no loop in this build.
            OptimizeCancelled: the progress callback cancelled the run.
            PerfAgentError: whatever the loop raises (profiler errors included).
        """
        if self.optimize is None:
            raise OptimizeUnavailable(LOOP_UNAVAILABLE)
        record = self.optimize(
            request.target,
            settings=request.settings(),
            progress=lambda event: progress(ProgressEvent.of(event)),
        )
        return outcome_of(record)

    def accept(self, candidate: CandidateOutcome) -> Accepted:
        """Write the candidate over its file through the one apply path (``perfagent.optimize.apply``).

        Raises:
            BadInput: the candidate's source is gone from the run folder, or a file cannot be written.
        """
        applied = apply_candidate(candidate)
        return Accepted(
            path=Path(applied.path),
            backup=Path(applied.backup),
            backup_created=True,
            spec=Path(applied.spec) if applied.spec else None,
            notes=tuple(applied.notes),
        )


def source_reason(record: RunRecord) -> str | None:
    """None when the record's target is a source the loop can rewrite, else why it cannot."""
    try:
        described = describe_target(record.target)
        described.can_profile.require()  # a missing file, a type perfagent does not know
    except BadInput as exc:
        return f"not here: {exc.message}"
    if described.kind.is_recorded:
        return f"{Path(record.target).name} is a recorded report — optimizing needs the kernel source (perfagent tui kernel.cu)"
    return None


def source_languages(target: str | Path) -> frozenset[str]:
    """The languages the recipes would edit in ``target`` (empty: not a source the loop rewrites).

    ``.cu``/``.cuh``: CUDA. A Python file: Triton when it holds ``@triton.jit`` kernels, CUDA when it
    holds ``load_inline`` CUDA (the recipes edit that CUDA in place), else plain Python. Read, never run.
    """
    path = Path(target)
    suffix = path.suffix.lower()
    if suffix in (".cu", ".cuh"):
        return frozenset({"cuda"})
    if suffix != ".py":
        return frozenset()
    try:
        info = inspect_python(path)
    except BadInput:
        return frozenset()
    found = {"triton"} if info.jit_kernels else set()
    if info.cuda_sources:
        found.add("cuda")
    return frozenset(found or {"python"})


def recipe_languages(transform: str) -> frozenset[str]:
    """The languages some deterministic recipe of ``transform`` edits (empty: the llm backend only)."""
    return frozenset(lang for recipe in recipes_for(transform) for lang in recipe.languages)


def progress_text(event: ProgressEvent) -> str:
    """A log line for ``event`` (``[2/5] verifying c2 …``)."""
    if event.step is not None and event.total:
        return f"[{event.step}/{event.total}] {event.text}"
    return event.text
