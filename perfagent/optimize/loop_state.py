"""What the optimize loop knows and carries between its steps, and the small pure helpers the steps share.

``OptimizeLoop`` (``loop``: plan and propose), its evaluate and decide steps (``evaluate``), the write-kernel
step (``first_kernel``) and the two-machine loops (``phases``) all read and update one ``LoopState``; a
batch of candidates runs with the ``Origin`` it was proposed from. Nothing here measures anything.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from knowledge.transforms import catalog, metric_value
from perfagent.classifier import classify
from perfagent.optimize import measure
from perfagent.optimize.plan import PlannedTransform
from perfagent.records import CandidateOutcome, CheckRecord, PlanStep, VerificationSummary
from perfagent.rewrite.base import Candidate, FailedAttempt
from perfagent.rewrite.llm_reply import normalised
from perfagent.roofline import roofline
from perfagent.verify.models import ENVIRONMENT_CHECK, VerificationResult
from profilers.model import KernelDiagnosis, KernelProfile, Profile

FEEDBACK_VERDICTS = frozenset(
    {"incorrect", "inconclusive", "build-failed", "not-faster", "metric-unmoved", "implausible", "error"}
)
"""Rejections worth telling the rewriter about (not 'not-timed': that is the machine, not the code;
'metric-unmoved' is no longer given, kept for older records)."""
MAX_FEEDBACK = 8
"""Most recent failed attempts carried into a request."""
SNAPSHOT_METRICS = (
    "metrics.duration_s",
    "metrics.dram_throughput_pct",
    "metrics.sm_throughput_pct",
    "occupancy.achieved_pct",
)
"""Metrics kept with each candidate (besides the targeted one) for before/after views."""


@dataclass
class BaselineState:
    """What the loop knows about the original before it starts."""

    diagnosis: KernelDiagnosis | None
    """The targeted kernel's diagnosis (None: nothing profiled)."""
    measured: bool
    """The diagnosis comes from hardware counters."""
    can_profile: bool
    """ncu can re-profile candidates here (GPU and ncu usable)."""
    profile_note: str | None = None
    """Why candidates cannot be re-profiled, when they cannot."""
    time_s: float | None = None
    start_speedup: float | None = None
    """KernelBench: the starting ModelNew's speed-up over Model (candidates must beat it)."""
    script_durations: list[float] = field(default_factory=list)
    """Triton scripts: the baseline's kernel durations from separate ncu runs (the noise)."""
    kernel_name: str | None = None
    spent_s: float = 0.0
    """Wall seconds the original's profile and timing took (``--time-budget`` counts them)."""


@dataclass
class LoopResult:
    """What the loop produced."""

    candidates: list[CandidateOutcome]
    plan: list[PlanStep]
    best: str | None
    best_speedup: float | None
    iterations_used: int
    stopped: str
    llm_errors: list[str]


@dataclass(frozen=True)
class Origin:
    """What a batch of candidates was proposed from: the best's macros, launch geometry and id."""

    defines: dict[str, int]
    launch: dict[str, Any]
    parent: str | None


@dataclass
class LoopState:
    """The working source (the best so far) and everything measured."""

    source: str
    source_file: Path
    defines: dict[str, int]
    before: KernelProfile | None
    """The profile the next candidate's targeted metric is compared with (the best's)."""
    diagnosis: KernelDiagnosis | None
    launch: dict[str, Any] = field(default_factory=dict)
    """Launch geometry of the current best (overrides of the spec's grid / block / shared_mem)."""
    parent: str | None = None
    best_id: str | None = None
    best_speedup: float | None = None
    failed: list[FailedAttempt] = field(default_factory=list)
    seen: dict[str, str] = field(default_factory=dict)
    """``candidate_key`` -> the id that was measured with it ('the original' for the start)."""
    outcomes: list[CandidateOutcome] = field(default_factory=list)
    llm_errors: list[str] = field(default_factory=list)

    def origin(self) -> Origin:
        """What a batch proposed now is proposed from."""
        return Origin(dict(self.defines), dict(self.launch), self.parent)

    def adopt(self, outcome: CandidateOutcome, profile: KernelProfile | None) -> None:
        """An accepted candidate becomes the source of later requests, its profile their diagnosis."""
        self.source_file = Path(str(outcome.source_path))
        self.source = self.source_file.read_text(encoding="utf-8")
        self.defines = dict(outcome.defines)
        self.launch = dict(outcome.launch)
        self.parent = self.best_id = outcome.id
        self.best_speedup = outcome.speedup
        if profile is not None:
            self.before = profile
            self.diagnosis = diagnose_one(profile)

    def remember_rejection(self, outcome: CandidateOutcome) -> None:
        """A rejection worth telling the rewriter about goes into every later request."""
        if outcome.verdict in FEEDBACK_VERDICTS:
            self.failed.append(FailedAttempt(candidate_id=outcome.id, reason=outcome.reason))

    def best(self) -> CandidateOutcome | None:
        return next((c for c in self.outcomes if c.id == self.best_id), None)


def merged(cand: Candidate, origin: Origin) -> tuple[dict[str, int], dict[str, Any]]:
    """The macros and launch geometry a candidate runs with: its own over those it was proposed from."""
    own_launch = (
        cand.launch.model_dump(include=set(measure.LAUNCH_KEYS), exclude_none=True) if cand.launch else {}
    )
    return {**origin.defines, **cand.defines}, {**origin.launch, **own_launch}


def candidate_key(
    source: str,
    defines: dict[str, int],
    launch: Mapping[str, Any] | None = None,
    *,
    language: str | None = None,
) -> str:
    """The identity of a measurement: source, macros and launch geometry (a repeat is not measured again).

    With ``language`` the source is compared without its comments and layout (``normalised_source``):
    two candidates that differ only there build the same kernel, and the second is not measured.
    """
    body = normalised_source(source, language) if language else source
    text = body + "\0" + ",".join(f"{k}={v}" for k, v in sorted(defines.items()))
    if launch:
        text += "\0" + json.dumps(dict(launch), sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_C_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_SPACE_BY_SEPARATOR = re.compile(r" ?([(){}\[\];,]) ?")


def normalised_source(source: str, language: str) -> str:
    """``source`` with its comments and layout taken out, its tokens kept.

    CUDA: comments go, whitespace runs become one space (none beside brackets, ``;`` and ``,``), blank
    lines go; a preprocessor line (and its ``\\`` continuations) keeps its own line. Python (and Triton): the
    tokenizer's tokens without comments and blank lines (``rewrite.llm_reply.normalised``); string
    literals, a ``load_inline`` kernel among them, are kept as written.
    """
    if language != "cuda":
        return normalised(source, "python")
    out: list[str] = []
    directive = False
    for line in (" ".join(raw.split()) for raw in _C_COMMENT.sub(" ", source).splitlines()):
        if not line:
            continue
        starts = line.startswith("#") or (directive and out[-1].endswith("\\"))
        out.append(("\n" if starts or directive else " ") + line)
        directive = starts
    return _SPACE_BY_SEPARATOR.sub(r"\1", "".join(out)).strip()


def candidate_fields(
    cand: Candidate, step: PlannedTransform, origin: Origin, *, iteration: int, file: Path
) -> dict[str, Any]:
    """The ``CandidateOutcome`` fields a candidate has before anything is measured (loop and proposals alike)."""
    defines, launch = merged(cand, origin)
    effect = catalog()[cand.transform].effect_for(step.finding.category if step.finding else None)
    return {
        "rewrite_id": cand.id,
        "backend": cand.backend,
        "transform": cand.transform,
        "recipe": cand.recipe,
        "description": cand.description,
        "parameters": dict(cand.parameters),
        "defines": defines,
        "launch": launch,
        "iteration": iteration,
        "parent": origin.parent,
        "file": str(file),
        "diff": cand.diff,
        "tokens": cand.tokens.model_dump() if cand.tokens else None,
        "notes": list(cand.notes),
        "metric": effect.metric,
        "metric_direction": effect.direction,
    }


def diagnose_one(kernel: KernelProfile) -> KernelDiagnosis | None:
    """The diagnosis of one re-profiled kernel (what the loop re-plans from)."""
    diagnoses = classify(Profile(tool="ncu", source=kernel.name, kernels=[kernel]))
    return diagnoses[0] if diagnoses else None


def profile_pcts(kernel: KernelProfile) -> tuple[float | None, float | None]:
    """(% of the profile's speed of light, DRAM throughput as % of peak) of a profiled kernel."""
    roof = roofline(kernel)
    sol = roof.fraction_of_sol * 100.0 if roof is not None and roof.fraction_of_sol is not None else None
    return sol, kernel.metrics.dram_throughput_pct


def snapshot(kernel: KernelProfile | None, names: tuple[str, ...]) -> dict[str, float]:
    """The canonical metrics ``names`` of ``kernel`` that it has."""
    if kernel is None:
        return {}
    out: dict[str, float] = {}
    for name in names:
        value = metric_value(kernel, name)
        if value is not None:
            out[name] = value
    return out


def verification_summary(
    result: VerificationResult | None, build: measure.BuildOutcome
) -> VerificationSummary:
    """The verifier's result as the record keeps it (a launch-spec kernel without a GPU: not verified)."""
    if result is None:
        built = "compiles" if build.ok else "not compiled here" if build.ok is None else "does not compile"
        return VerificationSummary(
            verdict="not-verified",
            reason=f"{built}, but not verified (no GPU): launch-spec kernels run only on a CUDA GPU",
            checks=[
                CheckRecord(
                    name="build",
                    passed=bool(build.ok),
                    detail=build.detail,
                    severity="error" if build.ok is not None else "skipped",
                )
            ],
        )
    missing = next((c for c in result.checks if c.name == ENVIRONMENT_CHECK and not c.passed), None)
    return VerificationSummary(
        verdict="not-verified" if missing else result.verdict,
        reason=f"not verified here: {missing.detail}" if missing else result.reason,
        checks=[
            CheckRecord(name=c.name, passed=c.passed, detail=c.detail, severity=c.severity)
            for c in result.checks
        ],
        device=result.device,
        elapsed_s=result.elapsed_s,
    )


def changed_lines(diff: str) -> str:
    """The lines a unified diff rewrites in the source it was taken against ('rewrites lines 9-13, 20').

    A removed or replaced line counts as itself; an inserted one as the line it follows.
    """
    changed: set[int] = set()
    line_no = 0
    for line in diff.splitlines():
        if line.startswith("@@ -"):
            line_no = int(line[4:].split(" ", 1)[0].partition(",")[0])
        elif line.startswith(("---", "+++")) or line_no == 0:
            continue
        elif line.startswith("-"):
            changed.add(line_no)
            line_no += 1
        elif line.startswith("+"):
            changed.add(max(line_no - 1, 1))
        elif line.startswith(" "):
            line_no += 1
    if not changed:
        return "no source line changed (launch geometry or macros only)"
    return f"rewrites line{'s' if len(changed) > 1 else ''} {_spans(sorted(changed))}"


def _spans(numbers: list[int]) -> str:
    """[9, 10, 11, 20] -> '9-11, 20'."""
    out: list[str] = []
    start = prev = numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ", ".join(out)
