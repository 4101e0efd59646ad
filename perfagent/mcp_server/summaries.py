"""Bounded replies: the numbers an agent acts on, with a pointer to the full record.

A full diagnose record of a 20-kernel report is ~150 KB of JSON (evidence, roofline points, every
metric), over the 25K-token reply cap of common agent hosts, so the agent would never see it. The
default reply is a summary: per kernel its time, share, recoverable time, top finding, estimate and
transforms; per optimize candidate its verdict and time. ``detail="full"`` adds the whole record.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import Field

from perfagent.records import CandidateOutcome, RunRecord
from profilers.model import Frozen, KernelDiagnosis, Profile

Detail = Literal["summary", "full"]

REASON_CHARS = 240
"""A candidate's one-line reason, cut to this length in a summary (LLM build logs can be long)."""


class KernelSummary(Frozen):
    """One kernel: where its time goes and what usually fixes it."""

    name: str
    duration_s: float | None
    share_of_total: float | None = None
    """Share of the summed kernel time, 0-1."""
    recoverable_s: float | None = None
    """ESTIMATE: time the top finding could save, s."""
    top_finding: str | None = None
    """'category: title' of the highest-ranked finding."""
    severity: str | None = None
    estimated_speedup: float | None = None
    """ESTIMATE of the kernel's speed-up if the top finding is fixed (x)."""
    transforms: list[str] = Field(default_factory=list)
    """Catalog ids that usually fix the top finding, best first (explain_transform explains each)."""
    findings: int = 0
    """How many findings the full record has for this kernel."""


class CandidateSummary(Frozen):
    """One optimize candidate: what it tried and how it ended."""

    id: str
    transform: str
    verdict: str
    accepted: bool
    time_s: float | None = None
    reason: str
    """Why it was kept or not (cut to a few hundred characters)."""


class OptimizeSummary(Frozen):
    """The optimize loop's outcome."""

    backend: str
    device: str
    iterations_used: int
    best: str | None = None
    """The accepted candidate's id (None: nothing beat the original beyond noise)."""
    best_speedup: float | None = None
    stopped: str | None = None
    candidates_total: int = 0
    candidates: list[CandidateSummary] = Field(default_factory=list)
    """The first ``top_k`` candidates in the order tried."""


class RecordSummary(Frozen):
    """A run record in a few kilobytes."""

    run: str | None
    """The run folder (absolute), None when nothing was saved (a recorded report read in place)."""
    id: str
    kind: str
    target: str
    created: str
    kernels_total: int
    kernels: list[KernelSummary] = Field(default_factory=list)
    """The first ``top_k`` kernels, in priority order (recoverable time)."""
    notes: list[str] = Field(default_factory=list)
    optimize: OptimizeSummary | None = None
    next_steps: list[str] = Field(default_factory=list)
    """Tool calls that usually come next."""
    full_record: str
    """How to get everything this summary leaves out."""


class RunReply(Frozen):
    """A run's summary; with ``detail="full"`` also the whole record (perfagent's saved JSON)."""

    summary: RecordSummary
    record: RunRecord | None = None


class KernelMetricsSummary(Frozen):
    """One kernel's headline metrics."""

    name: str
    invocations: int
    duration_s: float | None
    sm_throughput_pct: float | None = None
    memory_throughput_pct: float | None = None
    dram_throughput_pct: float | None = None
    achieved_occupancy_pct: float | None = None
    registers_per_thread: int | None = None


class ProfileSummary(Frozen):
    """A profile's kernels and headline metrics."""

    tool: str
    source: str
    kernels_total: int
    kernels: list[KernelMetricsSummary] = Field(default_factory=list)
    full_record: str


class ProfileReply(Frozen):
    """A profile's summary; with ``detail="full"`` also every canonical metric (``Profile``)."""

    summary: ProfileSummary
    profile: Profile | None = None


def _kernel(k: KernelDiagnosis) -> KernelSummary:
    top = k.findings[0] if k.findings else None
    return KernelSummary(
        name=k.name,
        duration_s=k.duration_s,
        share_of_total=k.share_of_total,
        recoverable_s=k.recoverable_s,
        top_finding=f"{top.category}: {top.title}" if top else None,
        severity=str(top.severity) if top else None,
        estimated_speedup=top.estimated_speedup if top else None,
        transforms=list(top.transforms) if top else [],
        findings=len(k.findings),
    )


def _candidate(c: CandidateOutcome) -> CandidateSummary:
    reason = c.reason if len(c.reason) <= REASON_CHARS else c.reason[: REASON_CHARS - 1] + "…"
    return CandidateSummary(
        id=c.id,
        transform=c.transform,
        verdict=str(c.verdict),
        accepted=c.accepted,
        time_s=c.time_s,
        reason=reason,
    )


def _optimize(record: RunRecord, top_k: int) -> OptimizeSummary | None:
    result = record.optimize
    if result is None:
        return None
    return OptimizeSummary(
        backend=result.backend,
        device=result.device,
        iterations_used=result.iterations_used,
        best=result.best,
        best_speedup=result.best_speedup,
        stopped=result.stopped,
        candidates_total=len(record.candidates),
        candidates=[_candidate(c) for c in record.candidates[:top_k]],
    )


def _next_steps(record: RunRecord, run_ref: str | None) -> list[str]:
    """The calls an agent usually makes next, as tool calls (not CLI flags)."""
    steps: list[str] = []
    first = record.kernels[0] if record.kernels else None
    if first and first.findings and first.findings[0].transforms:
        transform = first.findings[0].transforms[0]
        steps.append(f'explain_transform(transform_id="{transform}")')
        if record.kind == "diagnose":
            steps.append(f'optimize(target=<the kernel source>, transform="{transform}")')
    if run_ref and record.kind == "optimize" and record.best:
        steps.append(f'read_run(run="{run_ref}", detail="full")  # the best candidate\'s source and checks')
    return steps


def summarize_record(record: RunRecord, *, run: str | None, top_k: int) -> RecordSummary:
    """The bounded form of ``record`` (``run``: its folder when saved)."""
    ref = record.id or run
    full = (
        f'read_run(run="{ref}", detail="full")'
        if run
        else 'call again with detail="full" (and top_k, or kernel="REGEX" to narrow it)'
    )
    return RecordSummary(
        run=run,
        id=record.id,
        kind=record.kind,
        target=record.target,
        created=record.created,
        kernels_total=len(record.kernels),
        kernels=[_kernel(k) for k in record.kernels[:top_k]],
        notes=record.notes[:5],
        optimize=_optimize(record, top_k),
        next_steps=_next_steps(record, ref if run else None),
        full_record=full,
    )


def run_reply(record: RunRecord, *, run: str | None, detail: Detail, top_k: int) -> RunReply:
    """The reply of diagnose, optimize and read_run."""
    return RunReply(
        summary=summarize_record(record, run=run, top_k=top_k), record=record if detail == "full" else None
    )


def profile_reply(profile: Profile, *, detail: Detail, top_k: int) -> ProfileReply:
    """The reply of profile: headline metrics per kernel, every metric with ``detail="full"``."""
    kernels = [
        KernelMetricsSummary(
            name=k.name,
            invocations=k.invocations,
            duration_s=k.metrics.duration_s,
            sm_throughput_pct=k.metrics.sm_throughput_pct,
            memory_throughput_pct=k.metrics.memory_throughput_pct,
            dram_throughput_pct=k.metrics.dram_throughput_pct,
            achieved_occupancy_pct=k.occupancy.achieved_pct,
            registers_per_thread=k.launch.registers_per_thread,
        )
        for k in profile.kernels[:top_k]
    ]
    summary = ProfileSummary(
        tool=profile.tool,
        source=profile.source,
        kernels_total=len(profile.kernels),
        kernels=kernels,
        full_record='call again with detail="full" (kernel="REGEX" narrows it to matching kernels)',
    )
    return ProfileReply(summary=summary, profile=profile if detail == "full" else None)


def reply_tokens(payload: object) -> int:
    """A reply's size in tokens, estimated as JSON characters / 4 (the usual rule of thumb)."""
    return len(json.dumps(payload, separators=(",", ":"))) // 4
