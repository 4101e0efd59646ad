"""The saved run: ``RunRecord`` and what an optimize run adds to it (baseline, candidates, verdicts, best).

Every model here crosses the disk boundary (``record.json``): a diagnose run saves the record's kernels,
an optimize run adds ``optimize`` plus the stable top-level keys ``baseline``, ``candidates``, ``best``.
The module sits low in the layers (it imports only ``profilers.model`` and the profile models), so the
loop, the renderers, the TUI and the session store all read one definition.

Times are seconds, percentages are 0-100. A quantity that was not measured is ``None``, never 0,
and the candidate's ``reason`` says why (e.g. "correct but not timed (no GPU): speed-up not measured").
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from perfagent.run_cost import IterationCost, ProfileRun, RunCost
from profilers.model import SCHEMA_VERSION, CollectionMode, Frozen, KernelDiagnosis, Profile

__all__ = [
    "NOT_TIMED",
    "OPTIMIZE_KEYS",
    "AcceptRoute",
    "AppliedChange",
    "CandidateOutcome",
    "CandidateVerdict",
    "CheckRecord",
    "FindingSummary",
    "IterationCost",
    "OptimizeBaseline",
    "OptimizeResult",
    "PhasesInfo",
    "PlanStep",
    "ProfileRun",
    "ProfileSummary",
    "ProposalRound",
    "RunCost",
    "RunRecord",
    "TableRow",
    "VerificationSummary",
]

NOT_TIMED = "correct but not timed (no GPU): speed-up not measured"
"""The reason of a candidate that passed verification on a machine without a GPU."""

CandidateVerdict = Literal[
    "accepted",
    "incorrect",
    "inconclusive",
    "build-failed",
    "not-verified",
    "not-timed",
    "not-faster",
    "implausible",
    "metric-unmoved",
    "duplicate",
    "error",
    "proposed",
]
"""The loop's verdict on a candidate. Only 'accepted' is kept; every other one comes with a reason.
'metric-unmoved' is no longer given (a faster candidate whose metric did not move is accepted with
``route='another'``); it stays so that older records load. 'proposed': written by ``--propose-only`` and not
evaluated yet (``perfagent optimize --evaluate RUN``)."""

AcceptRoute = Literal["targeted", "another", "unchecked"]
"""How an accepted candidate won: 'targeted' (its transform's metric moved the right way), 'another'
("won by another route": faster beyond noise while the metric did not move or moved the wrong way —
the proxy did not confirm the mechanism), 'unchecked' (not re-profiled: the metric was not compared)."""

PlanOrigin = Literal["requested", "diagnosis", "headroom", "catalog", "indicated", "recipe", "write-kernel"]


class CheckRecord(Frozen):
    """One check behind a verdict (from the verifier or from the loop's accept rule)."""

    name: str
    """Stable id: 'correctness', 'static:no-streams', 'build', 'speed-up', 'targeted-metric', ..."""
    passed: bool
    detail: str = ""
    severity: str = "error"
    """'error' (a failure rejects), 'warning' (reported only), 'inconclusive'; 'skipped' = not run."""


class VerificationSummary(Frozen):
    """The verifier's verdict on a candidate (the full ``VerificationResult`` is in verification.json)."""

    verdict: Literal["pass", "fail", "inconclusive", "not-verified"]
    """'not-verified': the workload could not be run here (a launch-spec kernel without a GPU)."""
    reason: str
    checks: list[CheckRecord] = Field(default_factory=list)
    device: str | None = None
    """Where it ran: 'cpu' or 'cuda:0 (<GPU>)'; None when nothing ran."""
    elapsed_s: float | None = None
    """Wall time of the verification, s."""


class FindingSummary(Frozen):
    """A diagnosis finding in one line (the full finding is in the record's ``kernels``)."""

    category: str
    severity: str
    title: str
    transforms: list[str] = Field(default_factory=list)


class ProfileSummary(Frozen):
    """The profile of one kernel, reduced to what the before/after table needs."""

    tool: str
    """'ncu', 'static', ..."""
    mode: str
    """'counters', 'static', 'timing-only'."""
    kernel: str | None = None
    duration_s: float | None = None
    """Kernel duration as the profiler measured it (under its own clock/cache control), s."""
    dram_throughput_pct: float | None = None
    sm_throughput_pct: float | None = None
    memory_throughput_pct: float | None = None
    achieved_occupancy_pct: float | None = None
    fraction_of_sol_pct: float | None = None
    """Speed of light / duration, % (the profile's roofline)."""
    bound: str | None = None
    """'memory', 'compute' or 'unknown' (the profile's roofline)."""


class OptimizeBaseline(Frozen):
    """The original kernel: how fast, how close to its roofline, what the diagnosis said."""

    file: str
    """The user's file the loop rewrites."""
    kernel: str | None = None
    """The kernel the loop targets (entry point / Triton kernel / top kernel of the profile)."""
    time_s: float | None = None
    """Median time per call, s (None: not timed — no GPU)."""
    timer: str | None = None
    """'cuda-events' (perfagent bench), 'ncu' (profiler kernel durations) or None."""
    pct_of_roofline: float | None = None
    """Speed-of-light time / measured time, % (spec or problem bytes and FLOP, datasheet peaks)."""
    pct_of_dram_peak: float | None = None
    """Achieved DRAM bandwidth (minimum bytes / time) as % of the device's peak."""
    pct_of_compute_peak: float | None = None
    """Achieved FLOP/s as % of the device's peak for the kernel's precision."""
    start_speedup: float | None = None
    """For a KernelBench ModelNew starting point: its speed-up over the problem's Model (x)."""
    compile_time_s: float | None = None
    """KernelBench: the reference under ``torch.compile(Model)`` (default mode), median s (None: not timed)."""
    compile_speedup: float | None = None
    """KernelBench: eager time / torch.compile time, measured in one run (>1: compile beats eager)."""
    compile_note: str | None = None
    """Why the torch.compile baseline is missing (unavailable here, no GPU), when it is."""
    stage_s: dict[str, float] = Field(default_factory=dict)
    """Wall seconds of measuring the original: ``profile`` (ncu, a recorded report or static analysis)
    and ``time`` (CUDA events or a second ncu run); empty in records from before."""
    profile: ProfileSummary | None = None
    findings: list[FindingSummary] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class PlanStep(Frozen):
    """One (finding, transform) pair the planner ranked, and whether it was tried."""

    transform: str
    finding: str | None = None
    """Category of the finding it addresses (None: requested directly or no diagnosis)."""
    finding_title: str | None = None
    origin: PlanOrigin
    """requested (--transform), diagnosis (the finding names it), catalog (fixes the finding's category
    and a measured indicator holds), indicated (an indicator holds), recipe (no measurement: a
    deterministic recipe applies to the source)."""
    kind: Literal["structural", "tuning"] | None = None
    """The catalog's kind: structural fixes of a finding are planned before its tuning nudges (None: older
    records)."""
    indicators: list[str] = Field(default_factory=list)
    """The catalog's ``applies_when`` conditions that hold on the measured kernel."""
    skipped: str | None = None
    """Why it was not tried (None: tried, or not reached within the iteration budget)."""
    tried: bool = False
    reason: str | None = None
    """Why it is at this place and why it was tried or not: '<why planned>; tried: precondition met;
    c1 (accepted): rewrites lines 9-13', '...; not tried: recipes: cooperative-row: the loop on line 9 is
    nested ...', '...; not reached: iteration budget spent (3)'. None: records older than this field."""
    backends: list[str] = Field(default_factory=list)
    """The backends whose candidates competed on this step ('recipes', 'llm'), in the order proposed
    (empty: not tried, or a record older than this field)."""
    winner: str | None = None
    """The candidate accepted on this step (the last one, when several were); None: none won."""
    winner_backend: str | None = None
    """The backend that produced ``winner`` ('recipes' or 'llm')."""


class CandidateOutcome(Frozen):
    """One candidate, what was measured, and the loop's decision with its reason."""

    id: str
    """'c1', 'c2', ... in the order tried."""
    rewrite_id: str
    """The rewriter's stable id: '<transform>/<backend>/<sha256 prefix>'."""
    backend: str
    transform: str
    recipe: str | None = None
    """The recipe (recipes backend) or the model (llm backend)."""
    description: str = ""
    parameters: dict[str, int | float | str | bool | None] = Field(default_factory=dict)
    defines: dict[str, int] = Field(default_factory=dict)
    """Macros the build passes (-D) for this candidate (launch-spec kernels), the parent's included."""
    launch: dict[str, list[int | float | str] | int | float | str] = Field(default_factory=dict)
    """Launch geometry the candidate runs with instead of the spec's (grid, block, shared_mem), the
    parent's included; empty: the spec's own."""
    iteration: int
    """The loop iteration (1-based) that proposed it."""
    parent: str | None = None
    """The candidate whose source it was proposed from (None: the original)."""
    repairs: int = 0
    """Repair round that produced it: 0 = proposed, N = the Nth repair request after a failed build or
    verification (``--repairs``)."""
    repair_of: str | None = None
    """The candidate it repairs (its failure was the feedback), None for a proposal."""
    verification: VerificationSummary
    verdict: CandidateVerdict
    accepted: bool
    reason: str
    """One line: why it was kept, or why not."""
    checks: list[CheckRecord] = Field(default_factory=list)
    """The loop's own checks: build, correctness, speed-up beyond noise, targeted metric."""
    route: AcceptRoute | None = None
    """How an accepted candidate won (``AcceptRoute``); None: rejected, or a record written before routes."""
    improved: list[str] = Field(default_factory=list)
    """Route 'another': the bottleneck evidence that improved ('kernel time 1.67x faster (cuda-events)',
    'metrics.dram_throughput_pct 12 -> 40'); empty otherwise."""
    time_s: float | None = None
    """Candidate median time per call, s (None: not timed)."""
    time_s_before: float | None = None
    """Baseline median time from the same interleaved run, s."""
    speedup: float | None = None
    """Baseline time / candidate time against the original (x)."""
    speedup_over_compile: float | None = None
    """KernelBench: the speed-up over ``torch.compile(Model)``: ``speedup`` / the baseline's compile speed-up."""
    noise_threshold: float | None = None
    """Relative change below which timings are noise (fraction)."""
    timing_rounds: int | None = None
    """Interleaved rounds the timing took (fewer than ``--runs`` when the time budget was filled:
    ``profilers.settings.TIMING``); its ``bench.json`` has the samples. None: not timed, or an older record."""
    timer: str | None = None
    pct_of_roofline: float | None = None
    """Speed-of-light time / candidate time, %."""
    pct_of_dram_peak: float | None = None
    """Achieved DRAM bandwidth (minimum bytes / time) as % of the device's peak."""
    pct_of_compute_peak: float | None = None
    """Achieved FLOP/s as % of the device's peak for the kernel's precision."""
    metric: str | None = None
    """The targeted metric (the transform's primary expected effect)."""
    metric_direction: Literal["up", "down"] | None = None
    metric_before: float | None = None
    metric_after: float | None = None
    metric_moved: bool | None = None
    """None: not re-profiled (no GPU, no ncu, counters denied, metric missing)."""
    metrics_before: dict[str, float] = Field(default_factory=dict)
    """Canonical metrics of the source it was proposed from (targeted metric, duration, throughputs)."""
    metrics_after: dict[str, float] = Field(default_factory=dict)
    file: str
    """The user's file this candidate would replace (``--apply``)."""
    source_path: str | None = None
    diff_path: str | None = None
    diff: str = ""
    """Unified diff against the source it was proposed from."""
    tokens: dict[str, float | int | None] | None = None
    """LLM token usage (prompt_tokens, completion_tokens, requests, wall_s, cost)."""
    stage_s: dict[str, float] = Field(default_factory=dict)
    """Wall seconds of each stage this candidate reached: build, verify, time, profile (re-profile)."""
    notes: list[str] = Field(default_factory=list)
    proposal: str | None = None
    """Two-machine runs: the proposal ('p3') this candidate was evaluated from, or its own id while it is
    only proposed (None: proposed and evaluated in one run)."""
    proposal_dir: str | None = None
    """That proposal's folder, relative to the run folder ('proposals/03_smem-padding')."""

    @property
    def source(self) -> str | None:
        """The candidate's full source text, read from the run folder (None when it is gone)."""
        if self.source_path is None:
            return None
        try:
            return Path(self.source_path).read_text(encoding="utf-8")
        except OSError:
            return None


class TableRow(Frozen):
    """One row of the before/after table (original vs best)."""

    quantity: str
    """'time (median)', '% of roofline', the targeted metric path, ..."""
    before: float | None = None
    after: float | None = None
    unit: str = ""
    """'s', '%', 'x' or the metric's own unit."""
    note: str = ""


class AppliedChange(Frozen):
    """What ``--apply`` wrote."""

    path: str
    """The user's file, now holding the best candidate."""
    backup: str
    """The file as it was before this write: ``<file>.orig``, or ``<file>.orig.N`` when earlier backups exist."""
    candidate: str
    notes: list[str] = Field(default_factory=list)
    spec: str | None = None
    """The launch spec written beside the file (``<stem>.launch.toml``) because the win needs ``-D`` macros or
    launch geometry the source does not carry; None when it needs none."""
    spec_backup: str | None = None
    """That spec as it was before (None: it did not exist)."""


class ProposalRound(Frozen):
    """One ``--propose-only`` round of a two-machine run, and what ``--evaluate`` made of it."""

    round: int
    backend: str
    """The rewriter that proposed ('recipes' or 'llm')."""
    diagnosis: str = ""
    """Where the diagnosis behind the proposals came from (a recorded report, an earlier run's profile, ...)."""
    parent: str | None = None
    """The candidate the proposals were made from (None: the original)."""
    proposals: list[str] = Field(default_factory=list)
    """Proposal ids ('p1', ...), in the order they were proposed."""
    evaluated_on: str | None = None
    """The device of the ``--evaluate`` that measured them (None: not evaluated yet)."""
    candidates: list[str] = Field(default_factory=list)
    """The candidates they became ('c1', ...)."""


class PhasesInfo(Frozen):
    """A two-machine run: proposals made where the model is (``--propose-only``), measured where the GPU is
    (``--evaluate RUN``). What the GPU machine needs to find and check the target, and the settings."""

    state: Literal["proposed", "evaluated"]
    """'proposed': proposals wait for ``--evaluate``; 'evaluated': every proposal has its verdict."""
    target: str
    """The target as given to ``--propose-only`` (relative paths are tried from the working folder)."""
    file: str
    """The target file's absolute path where the proposals were made."""
    file_sha256: str
    """The target file's content hash: ``--evaluate`` refuses a file that changed since (exit 2)."""
    problem: str | None = None
    """``--problem`` as given (a ModelNew target's KernelBench problem)."""
    problem_file: str | None = None
    problem_sha256: str | None = None
    spec: str | None = None
    """``--spec`` as given (a launch spec not beside the .cu target)."""
    spec_file: str | None = None
    spec_sha256: str | None = None
    kernel: str | None = None
    """``--kernel`` (which kernel of the diagnosis)."""
    settings: dict[str, float | int | str] = Field(default_factory=dict)
    """Verification, timing and profiling settings ``--evaluate`` uses (seeds, timeouts, runs, warmup, arch)."""
    rounds: list[ProposalRound] = Field(default_factory=list)


class OptimizeResult(Frozen):
    """Everything the optimize loop decided, and why."""

    target: str
    workload: Literal["cuda-kernel", "kernelbench", "triton-script"]
    language: str
    """'cuda', 'triton' or 'python'."""
    backend: str
    """The backend that ran: 'recipes', 'llm' or 'auto' (both in one loop; each candidate says its own)."""
    backend_reason: str = ""
    """Why this backend (``auto``: recipes and llm together when configured, else recipes)."""
    device: str
    """'cpu' or 'cuda:0 (<GPU>)'."""
    gpu: bool
    """Whether candidates could be timed and re-profiled here."""
    iterations: int
    """Iteration budget (rewrite rounds)."""
    iterations_used: int = 0
    baseline: OptimizeBaseline
    plan: list[PlanStep] = Field(default_factory=list)
    candidates: list[CandidateOutcome] = Field(default_factory=list)
    best: str | None = None
    """Id of the best accepted candidate (None: nothing won)."""
    best_speedup: float | None = None
    table: list[TableRow] = Field(default_factory=list)
    stopped: str = ""
    """Why the loop ended (budget spent, plan exhausted, LLM failing)."""
    llm_errors: list[str] = Field(default_factory=list)
    llm_usage: dict[str, float | int | None] | None = None
    """The run's LLM cost summed over its candidates: prompt/completion tokens, requests, wait (s), cost."""
    samples: int | None = None
    """LLM candidates asked for per rewrite request (``--samples``); None: recipes, or a record from before."""
    duplicates_dropped: int | None = None
    """LLM samples dropped before any measurement because their source, comments and whitespace aside,
    repeated another sample's or the current source (None: recipes, or a record from before)."""
    applied: AppliedChange | None = None
    run_dir: str | None = None
    notes: list[str] = Field(default_factory=list)
    phases: PhasesInfo | None = None
    """Two-machine runs (``--propose-only`` / ``--evaluate``); None for a run made in one go."""
    wall_s: float | None = None
    """Wall seconds of this invocation so far: the original measured, every candidate, the record
    written (a two-machine phase: that phase alone; None: a record from before)."""
    cost: RunCost | None = None
    """``wall_s`` by stage and by iteration (None: a record from before)."""

    def candidate(self, cid: str) -> CandidateOutcome | None:
        """The candidate with id ``cid``."""
        return next((c for c in self.candidates if c.id == cid), None)


OPTIMIZE_KEYS = ("optimize", "baseline", "candidates", "best")
"""RunRecord keys that only an optimize run writes (a diagnose record's JSON never carries them)."""


class RunRecord(Frozen):
    """Everything a run produced; saved as JSON and reloadable without a GPU."""

    schema_version: int = SCHEMA_VERSION
    kind: Literal["diagnose", "optimize"] = "diagnose"
    id: str = ""
    created: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    perfagent_version: str = ""
    target: str
    """What the user asked about (report path, source file or command)."""
    tool: str
    tool_version: str | None = None
    mode: CollectionMode = "counters"
    command: str | None = None
    notes: list[str] = Field(default_factory=list)
    kernels: list[KernelDiagnosis] = Field(default_factory=list)
    """In priority order (recoverable time)."""
    optimize: OptimizeResult | None = None
    """kind 'optimize': the loop's plan, candidates, decisions and before/after table."""
    baseline: OptimizeBaseline | None = None
    """kind 'optimize': the original kernel's time, % of roofline and profile (= ``optimize.baseline``)."""
    candidates: list[CandidateOutcome] = Field(default_factory=list)
    """kind 'optimize': every candidate in the order tried (= ``optimize.candidates``)."""
    best: str | None = None
    """kind 'optimize': id of the best accepted candidate, None when nothing won (= ``optimize.best``)."""

    @model_serializer(mode="wrap")
    def _drop_optimize_keys(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A diagnose record serialises exactly as before the optimize keys existed."""
        data: dict[str, Any] = handler(self)
        if self.kind != "optimize":
            for key in OPTIMIZE_KEYS:
                data.pop(key, None)
        return data

    def profile(self) -> Profile:
        """Rebuild the ``Profile`` this record was diagnosed from."""
        return Profile(
            tool=self.tool,
            tool_version=self.tool_version,
            mode=self.mode,
            source=self.target,
            command=self.command,
            kernels=[k.profile for k in self.kernels],
            notes=list(self.notes),
        )
