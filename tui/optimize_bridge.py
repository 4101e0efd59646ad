"""Adapter between the walkthrough screens and the optimize loop (``perfagent.optimize``, issue 4).

The loop is looked up at run time (``getattr(perfagent, "optimize", None)``): in a build without it the
walkthrough says "the optimize loop is not available in this build" and offers what works without it
(the findings' suggested transforms, the machine's capabilities). The screens only see this module's
frozen dataclasses (``Candidate``, ``Check``, ``MetricChange``, ``Outcome``, ``Capabilities``), so wiring the
real loop means touching this file alone.

Expected interface of the loop
==============================

Call (made from a ``@work(thread=True)`` worker; never on the UI thread)::

    result = perfagent.optimize(
        target,                 # str: the source the record was diagnosed from (record.target: .cu/.py/...)
        kernel=kernel_regex,    # str: regex selecting the kernel (the TUI passes '^' + re.escape(base_name) + '$')
        finding=category,       # str: the finding's category id to target (taxonomy id, e.g. 'global-coalescing')
        transforms=[transform], # list[str]: catalog ids to try, in order (the TUI passes the one the user chose)
        backend=backend,        # str: 'recipes' (offline, always available) or 'llm' (OpenAI-compatible endpoint)
        progress=callback,      # Callable[[str | event], None]: see below
    )

``progress``: called for every step with a human-readable line (a ``str``, as ``diagnose(progress=...)``), or
with an event object carrying ``message: str`` and optionally ``step: int`` and ``total: int`` (drives the
progress bar). The callback raises ``OptimizeCancelled`` when the user has left the screen; the loop must let
it propagate (cleaning up in ``finally``) so that a cancelled run stops at its next step.

``result``: any object (a ``RunRecord`` of kind 'optimize' is fine) with ``candidates``, a sequence in the
order tried. Each candidate (attribute or mapping access) has:

=================  ==============================================================================
``id``             str, unique within the run ('c1', 'c2', ...)
``transform``      str, the catalog id applied
``backend``        str, 'recipes' or 'llm'
``diff``           str, unified diff of the candidate against the original source
``verdict``        str, the loop's verdict ('accepted', 'incorrect', 'not-faster', 'error'; 'metric-unmoved' in older records)
``checks``         sequence of checks, each ``name: str``, ``passed: bool``, ``detail: str`` and optionally
                   ``severity: str`` ('error', 'warning', 'inconclusive', 'skipped'): correctness,
                   anti-cheat, speed-up beyond noise, targeted metric moved, ...
``time_s_before``  float | None, median kernel time of the original, s (None when not timed, e.g. no GPU)
``time_s_after``   float | None, median kernel time of the candidate, s
``accepted``       bool, the loop's decision (correct, faster beyond measured noise, targeted metric moved)
``reason``         str, one line: why accepted or rejected
``source``         str | None, the candidate's full source text (what "accept" writes)
``file``           str | Path | None, the user's file the candidate replaces (default: ``target``)
``metrics_before`` optional ``Metrics`` (or mapping name -> number) of the original, for the before/after
``metrics_after``  table; canonical names (``profilers.model.Metrics``); missing = not shown
=================  ==============================================================================

``result.notes`` (optional, sequence of str): plain-language remarks shown above the candidates (e.g. "no GPU:
candidates were verified on CPU only; no timings").

Accept: ``accept()`` calls the one apply path of the CLI and the library,
``perfagent.optimize.apply.apply_rewrite``: a fresh backup (``<file>.orig``, or ``<file>.orig.N`` when
earlier backups exist; none is overwritten or silently reused), ``source`` written over ``file`` (temp file
+ rename), and, for a win measured with ``-D`` macros or launch geometry (``defines`` / ``launch`` of the
candidate), the launch spec holding them written beside the file. Reject writes nothing.

Without a GPU the loop is expected to verify correctness on CPU where the workload allows (Triton interpreter,
CPU torch) and leave the timings None; without an LLM endpoint only the 'recipes' backend is offered.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import perfagent
from perfagent.errors import BadInput
from perfagent.optimize.apply import apply_rewrite, needs_settings_note
from perfagent.optimize.measure import SPEC_COPY
from perfagent.records import RunRecord
from perfagent.render.units import fmt_bytes, fmt_count, fmt_number, fmt_pct, fmt_seconds, fmt_speedup

__all__ = [
    "LOOP_UNAVAILABLE",
    "Accepted",
    "Capabilities",
    "Candidate",
    "Check",
    "MetricChange",
    "OptimizeBridge",
    "OptimizeCancelled",
    "OptimizeRequest",
    "OptimizeUnavailable",
    "Outcome",
    "ProgressEvent",
    "normalize_result",
    "recipe_languages",
    "source_languages",
]

LOOP_UNAVAILABLE = "the optimize loop is not available in this build"
BACKENDS = ("recipes", "llm")


class OptimizeUnavailable(Exception):
    """``perfagent.optimize`` does not exist in this build."""


class OptimizeCancelled(Exception):
    """Raised from the progress callback when the user left the walkthrough; the loop lets it propagate."""


@dataclass(frozen=True)
class ProgressEvent:
    """One progress report of the loop, normalised."""

    text: str
    step: int | None = None
    total: int | None = None


@dataclass(frozen=True)
class Check:
    """One verification check of a candidate."""

    name: str
    passed: bool
    detail: str = ""
    severity: str = "error"
    """'error' (a failure rejects), 'warning' (reported only), 'inconclusive', or 'skipped' (not run)."""

    @property
    def mark(self) -> str:
        """✓ passed, ✗ failed, ! warning or inconclusive, – skipped."""
        if self.severity == "skipped":
            return "–"
        if self.passed:
            return "✓"
        return "!" if self.severity in ("warning", "inconclusive") else "✗"


@dataclass(frozen=True)
class MetricChange:
    """One row of the before/after table, already formatted."""

    name: str
    before: str
    after: str
    change: str
    """``-42 %``, ``1.8×``, or '' when not comparable."""


@dataclass(frozen=True)
class Candidate:
    """One candidate the loop produced, as the walkthrough shows it."""

    id: str
    transform: str
    backend: str
    diff: str
    verdict: str
    checks: tuple[Check, ...]
    time_s_before: float | None
    time_s_after: float | None
    accepted: bool
    reason: str
    source: str | None = None
    file: Path | None = None
    metrics: tuple[MetricChange, ...] = ()
    defines: Mapping[str, int] = field(default_factory=dict)
    """``-D`` macros the candidate was measured with (they must travel with it: see ``settings_note``)."""
    launch: Mapping[str, Any] = field(default_factory=dict)
    """Launch geometry (grid / block / shared_mem) the candidate was measured with."""
    spec_copy: Path | None = None
    """The candidate's own launch spec in the run folder (the base of the spec written on accept)."""

    @property
    def settings_note(self) -> str | None:
        """Why accepting also writes a launch spec (None: the source alone carries the win)."""
        name = f"{self.file.stem}.launch.toml" if self.file is not None else "the launch spec"
        return needs_settings_note(self.defines, self.launch, name)

    @property
    def speedup(self) -> float | None:
        """time before / time after, or None when either is missing."""
        if self.time_s_before and self.time_s_after:
            return self.time_s_before / self.time_s_after
        return None


@dataclass(frozen=True)
class Outcome:
    """What a run of the loop returned."""

    candidates: tuple[Candidate, ...]
    notes: tuple[str, ...] = ()


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
    """Extra keyword arguments for the loop (the CLI's profiling options)."""


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


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _float(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _fmt_metric(name: str, value: float | None) -> str:
    if name.endswith("_pct"):
        return fmt_pct(value)
    if name.endswith("_s"):
        return fmt_seconds(value)
    if name.endswith("_bytes"):
        return fmt_bytes(value)
    if name.endswith(("_sectors", "_requests", "_instructions", "_conflicts", "_wavefronts")):
        return fmt_count(value)
    return fmt_number(value)


def _metric_values(obj: Any) -> dict[str, float]:
    if obj is None:
        return {}
    raw = obj if isinstance(obj, Mapping) else (obj.model_dump() if hasattr(obj, "model_dump") else vars(obj))
    return {k: v for k, v in ((k, _float(v)) for k, v in raw.items()) if v is not None}


def _change(before: float | None, after: float | None, name: str) -> str:
    if before is None or after is None:
        return ""
    if name.endswith("_pct"):
        return f"{after - before:+.3g} pt"
    if before == 0:
        return ""
    return f"{(after - before) / before * 100:+.3g} %"


def _metrics(c: Any) -> tuple[MetricChange, ...]:
    rows = []
    before_t, after_t = _float(_get(c, "time_s_before")), _float(_get(c, "time_s_after"))
    if before_t is not None or after_t is not None:
        speed = fmt_speedup(before_t / after_t) if before_t and after_t else ""
        rows.append(MetricChange("time (median)", fmt_seconds(before_t), fmt_seconds(after_t), speed))
    before, after = _metric_values(_get(c, "metrics_before")), _metric_values(_get(c, "metrics_after"))
    for name in dict.fromkeys([*before, *after]):
        b, a = before.get(name), after.get(name)
        rows.append(MetricChange(name, _fmt_metric(name, b), _fmt_metric(name, a), _change(b, a, name)))
    return tuple(rows)


def _check(obj: Any) -> Check:
    if isinstance(obj, tuple | list):
        name, passed, *rest = obj
        return Check(str(name), bool(passed), str(rest[0]) if rest else "")
    return Check(
        str(_get(obj, "name", "check")),
        bool(_get(obj, "passed", False)),
        str(_get(obj, "detail", "") or ""),
        str(_get(obj, "severity", "error") or "error"),
    )


def normalize_result(result: Any, *, default_file: Path | None = None) -> Outcome:
    """Turn whatever ``perfagent.optimize`` returned into an ``Outcome`` (see the module docstring)."""
    candidates = []
    for i, c in enumerate(_get(result, "candidates", None) or (), 1):
        file = _get(c, "file")
        source = _get(c, "source")
        source_path = _get(c, "source_path")
        candidates.append(
            Candidate(
                id=str(_get(c, "id", f"c{i}")),
                transform=str(_get(c, "transform", "?")),
                backend=str(_get(c, "backend", "?")),
                diff=str(_get(c, "diff", "") or ""),
                verdict=str(_get(c, "verdict", "") or ("accepted" if _get(c, "accepted") else "rejected")),
                checks=tuple(_check(x) for x in (_get(c, "checks", None) or ())),
                time_s_before=_float(_get(c, "time_s_before")),
                time_s_after=_float(_get(c, "time_s_after")),
                accepted=bool(_get(c, "accepted", False)),
                reason=str(_get(c, "reason", "") or ""),
                source=None if source is None else str(source),
                file=Path(file) if file else default_file,
                metrics=_metrics(c),
                defines=dict(_get(c, "defines", None) or {}),
                launch=dict(_get(c, "launch", None) or {}),
                spec_copy=Path(source_path).parent / SPEC_COPY if source_path else None,
            )
        )
    notes = tuple(str(n) for n in (_get(result, "notes", None) or ()))
    return Outcome(candidates=tuple(candidates), notes=notes)


def _event(item: Any) -> ProgressEvent:
    if isinstance(item, str):
        return ProgressEvent(item)
    step, total = _get(item, "step"), _get(item, "total")
    return ProgressEvent(
        str(_get(item, "message", item)),
        step if isinstance(step, int) else None,
        total if isinstance(total, int) else None,
    )


def kernel_regex(base_name: str) -> str:
    """The ``kernel=`` regex that selects exactly this kernel by its base name."""
    return "^" + re.escape(base_name) + "$"


class OptimizeBridge:
    """The walkthrough's only way to the optimize loop. Subclass to pin capabilities in tests."""

    def loop(self) -> Callable[..., Any] | None:
        """``perfagent.optimize`` when this build has it."""
        found = getattr(perfagent, "optimize", None)
        return found if callable(found) else None

    def unavailable_reason(self) -> str | None:
        """None when the loop exists, else the sentence the walkthrough shows."""
        return None if self.loop() is not None else LOOP_UNAVAILABLE

    def probe(self, record: RunRecord) -> Capabilities:
        """What can run here (slow: runs the ``perfagent doctor`` probes; call from a worker)."""
        from perfagent.doctor import run_probes

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
            PerfAgentError, ProfilerError: whatever the loop raises.
        """
        loop = self.loop()
        if loop is None:
            raise OptimizeUnavailable(LOOP_UNAVAILABLE)
        result = loop(
            request.target,
            kernel=request.kernel_regex,
            finding=request.finding,
            transforms=[request.transform],
            backend=request.backend,
            progress=lambda item: progress(_event(item)),
            **dict(request.options),
        )
        return normalize_result(result, default_file=Path(request.target))

    def accept(self, candidate: Candidate) -> Accepted:
        """Write the candidate over its file through the one apply path (``perfagent.optimize.apply``).

        Raises:
            BadInput: the candidate has no file or no source, or a file cannot be written.
        """
        if candidate.file is None or candidate.source is None:
            raise BadInput(
                f"candidate {candidate.id} has no source to write",
                hint="the loop must return `source` and `file`",
            )
        applied = apply_rewrite(
            candidate.file,
            candidate.source,
            candidate=candidate.id,
            defines=candidate.defines,
            launch=candidate.launch,
            spec_copy=candidate.spec_copy,
        )
        return Accepted(
            path=Path(applied.path),
            backup=Path(applied.backup),
            backup_created=True,
            spec=Path(applied.spec) if applied.spec else None,
            notes=tuple(applied.notes),
        )


def source_reason(record: RunRecord) -> str | None:
    """None when the record's target is a source the loop can rewrite, else why it cannot."""
    from perfagent.targets import resolve_target

    try:
        target = resolve_target(record.target)
    except BadInput as exc:
        return f"not here: {exc.message}"
    if target.kind.is_recorded:
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
    from perfagent.workloads.kernelbench import inspect_python

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
    from perfagent.rewrite.recipes import recipes_for

    return frozenset(lang for recipe in recipes_for(transform) for lang in recipe.languages)


def progress_text(event: ProgressEvent) -> str:
    """A log line for ``event`` (``[2/5] verifying c2 …``)."""
    if event.step is not None and event.total:
        return f"[{event.step}/{event.total}] {event.text}"
    return event.text


def speedup_text(candidate: Candidate) -> str:
    """``1.8×`` or ``n/a``."""
    return fmt_speedup(candidate.speedup)


def summary_counts(candidates: Sequence[Candidate]) -> str:
    """``3 candidates: 1 accepted by the loop, 2 rejected``."""
    accepted = sum(c.accepted for c in candidates)
    n = len(candidates)
    return f"{n} candidate{'s' if n != 1 else ''}: {accepted} accepted by the loop, {n - accepted} rejected"
