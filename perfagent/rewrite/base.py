"""The rewriter interface: what a rewrite is asked for, what it proposes, and the ``Rewriter`` contract.

Every backend (``recipes``: deterministic edits on a parse tree; ``llm``: an OpenAI-compatible model)
takes a ``RewriteRequest`` for ONE transform and returns ``Candidate`` objects holding complete new
sources. Rewriters never compile, run or judge a candidate: the optimize loop verifies each one
against the original, re-profiles it, and records why it was kept or rejected; the rejection reasons
come back to the rewriter as ``RewriteRequest.failed_attempts``.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Mapping
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import Field, field_validator

from perfagent.workloads.base import Language
from perfagent.workloads.launch_spec import Expr, LaunchOverride
from profilers.model import DeviceInfo, Finding, Frozen, SourceLine

BackendName = Literal["recipes", "llm"]
WRITE_KERNEL = "write-kernel"
"""The transform that writes a first custom kernel (``ModelNew``) for a plain-PyTorch KernelBench problem."""
ParamValue = int | float | str | bool | None
RETUNED = "retuned"
"""The ``Candidate.parameters`` key of a re-tuned launch of another candidate's source (a structural rewrite's
launch sweep); its value says which launch ('block 512')."""


class TokenUsage(Frozen):
    """Tokens an LLM candidate cost, summed over every request made for it (retries included)."""

    prompt_tokens: int = 0
    """Input tokens, as the server reported them (``usage.prompt_tokens``)."""
    completion_tokens: int = 0
    """Output tokens (``usage.completion_tokens``)."""
    requests: int = 0
    """HTTP requests that returned a reply (malformed replies and the structured-output fallback included)."""
    wall_s: float = 0.0
    """Time spent waiting for those replies, s."""
    cost: float | None = None
    """Price of the tokens (``--llm-price`` per 1M prompt / completion tokens); None: no price given."""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def priced(self, per_million: tuple[float, float] | None) -> TokenUsage:
        """This usage with its cost at ``per_million`` = (prompt, completion) price per 1M tokens."""
        if per_million is None:
            return self
        cost = (self.prompt_tokens * per_million[0] + self.completion_tokens * per_million[1]) / 1e6
        return self.model_copy(update={"cost": cost})

    def __add__(self, other: TokenUsage) -> TokenUsage:
        costs = [c for c in (self.cost, other.cost) if c is not None]
        return TokenUsage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            requests=self.requests + other.requests,
            wall_s=self.wall_s + other.wall_s,
            cost=sum(costs) if costs else None,
        )


class FailedAttempt(Frozen):
    """An earlier candidate for the same kernel and why it was rejected (fed back to the rewriter)."""

    candidate_id: str
    reason: str
    """One line from the verifier or the loop: compile error, mismatch with values, not faster, metric did not move."""


class EarlierAttempt(Frozen):
    """An earlier candidate for the same kernel and what was measured on it (accepted or not)."""

    candidate_id: str
    transform: str
    verdict: str
    """The loop's verdict: 'accepted', 'incorrect', 'not-faster', 'not-timed', ..."""
    accepted: bool = False
    reason: str = ""
    """The loop's one-line reason."""
    description: str = ""
    """What the candidate changed (its rewriter's words)."""
    time_s: float | None = None
    """Measured time, s (None: not timed)."""
    time_s_before: float | None = None
    speedup: float | None = None
    metric: str | None = None
    """The metric the transform targets (canonical path)."""
    metric_before: float | None = None
    metric_after: float | None = None
    metric_moved: bool | None = None
    diff: str = ""
    """The candidate's full diff against its parent, for proposals not measured yet (a propose-only run's
    earlier iterations: the model sees what was already proposed and asks for something else); empty
    otherwise."""


class LaunchArg(Frozen):
    """One kernel argument of a launch spec, in parameter order."""

    name: str
    """The spec's name for it (the kernel's own parameter name may differ: match by position)."""
    value: Expr | None = None
    """Scalars: the value expression (e.g. 'n'); None for buffers."""
    shape: list[Expr] = Field(default_factory=list)
    """Buffers: the shape expressions."""
    role: str | None = None
    """Buffers: 'input', 'output', 'inout' or 'scratch' as the spec says (None: the spec's default)."""
    dtype: str | None = None
    """Element type of a buffer, or the C type of a scalar ('float32', 'int64', ...); None: not said."""


class LaunchContext(Frozen):
    """How the oracle's launch spec launches the kernel: what a launch recipe may change and reason with.

    Expressions may use the spec's params and defines and the device attributes ``sm_count``,
    ``max_threads_per_sm``, ``max_threads_per_block``, ``warp_size`` (bound on the GPU at launch).
    """

    grid: list[Expr]
    block: list[Expr]
    shared_mem: Expr = 0
    params: dict[str, float | int] = Field(default_factory=dict)
    defines: dict[str, Expr] = Field(default_factory=dict)
    args: list[LaunchArg] = Field(default_factory=list)
    check_params: list[dict[str, float | int]] = Field(default_factory=list)
    """The other parameter sets verification runs (each overrides some params): the shapes a launch must
    also cover."""


def launch_context(spec: Mapping[str, Any]) -> LaunchContext:
    """A ``LaunchContext`` from launch-spec data (``LaunchSpec.model_dump(mode="json")``, overrides merged)."""
    return LaunchContext(
        grid=list(spec["grid"]),
        block=list(spec["block"]),
        shared_mem=spec.get("shared_mem", 0),
        params=dict(spec.get("params") or {}),
        defines=dict(spec.get("defines") or {}),
        args=[
            LaunchArg(
                name=a["name"],
                value=a.get("value"),
                shape=list(a.get("shape") or []),
                role=a.get("role"),
                dtype=a.get("dtype"),
            )
            for a in spec.get("args", [])
        ],
        check_params=[dict(p) for p in spec.get("check_params") or []],
    )


class Candidate(Frozen):
    """One proposed rewrite: a complete new source and how it differs from the original."""

    id: str
    """Stable id: '<transform>/<backend>/<first 10 hex of the source's sha256>' (same source, same id)."""
    transform: str
    """Catalog transform id (knowledge/data/transforms)."""
    backend: BackendName
    recipe: str | None = None
    """The recipe that made it (recipes backend) or the model name (llm backend)."""
    source: str
    """The complete new source text (not a patch)."""
    description: str
    """What changed, in plain words (the LLM's explanation for llm candidates)."""
    parameters: dict[str, ParamValue] = Field(default_factory=dict)
    """The knobs this candidate set, e.g. {'BLOCK_ROWS': 16} or {'GROUP_M': 8}; for llm: model and attempts."""
    defines: dict[str, int] = Field(default_factory=dict)
    """Macro values the build must pass (-DNAME=value) for this candidate: a launch spec's own ``defines``
    would otherwise override an ``#ifndef``-guarded ``#define`` the recipe edited."""
    launch: LaunchOverride | None = None
    """Launch-spec geometry this candidate needs (grid, block, shared_mem), written into the candidate's
    spec copy; None: the current geometry. The user's spec is never edited (``--apply`` says what to set)."""
    diff: str
    """Unified diff against the original source."""
    tokens: TokenUsage | None = None
    """LLM token usage (None for recipes)."""
    notes: list[str] = Field(default_factory=list)
    """Caveats the loop and the report must show (e.g. 'aliasing unchecked: no launch site in this file')."""


class RewriteRequest(Frozen):
    """Everything a rewriter needs to propose candidates for ONE transform of one source."""

    source: str
    """The kernel source text (the original, or the current best when the loop iterates)."""
    path: str | None = None
    """Where the source lives (for diffs, prompts and messages)."""
    language: Language
    transform: str
    """Catalog transform id to apply."""
    finding: Finding | None = None
    """The diagnosis finding that motivated the transform (its evidence goes into prompts)."""
    hardware: DeviceInfo | None = None
    """The device the kernel was profiled on (None: unknown / static analysis)."""
    kernel: str | None = None
    """Name of the kernel to rewrite when the source holds several (None: every kernel in the file)."""
    failed_attempts: list[FailedAttempt] = Field(default_factory=list)
    """Earlier rejected candidates for this kernel, oldest first."""
    launch: LaunchContext | None = None
    """The launch spec's geometry (cuda-kernel workloads); None: the source launches itself or is not CUDA."""
    history: list[EarlierAttempt] = Field(default_factory=list)
    """Earlier candidates for this kernel with their measured outcome (accepted ones too), oldest first."""
    hot_lines: list[SourceLine] = Field(default_factory=list)
    """The current source's profile: source lines with ncu's source counters (warp-state samples), hottest first."""
    kernel_language: Literal["cuda", "triton"] | None = None
    """``write-kernel``: the language of the first kernel to write for a plain-PyTorch reference (CUDA through
    ``torch.utils.cpp_extension.load_inline``, or Triton); None for every other transform."""
    inputs: list[str] = Field(default_factory=list)
    """``write-kernel``: what ``forward`` and the constructor receive (dtypes and shapes), one line each."""
    reference_profile: list[str] = Field(default_factory=list)
    """KernelBench: the reference ``Model``'s profile when one was recorded (a kernel per line: time, share,
    top finding); empty: none."""
    max_candidates: int = Field(default=4, ge=1, le=64)
    """Most candidates to return."""

    @field_validator("failed_attempts", mode="before")
    @classmethod
    def _pairs(cls, value: Any) -> Any:
        """Accept ``[(candidate_id, reason), ...]`` as well as ``FailedAttempt`` objects or dicts."""
        if isinstance(value, list | tuple):
            return [
                {"candidate_id": v[0], "reason": v[1]} if isinstance(v, list | tuple) and len(v) == 2 else v
                for v in value
            ]
        return value


@runtime_checkable
class Rewriter(Protocol):
    """A rewrite backend. The optimize loop treats every backend the same way."""

    name: str
    """Registry name: 'recipes' or 'llm'."""

    def availability(self) -> str | None:
        """Whether the backend can run at all.

        Returns:
            None when usable, else the reason in plain words with the next step
            (e.g. 'no LLM endpoint configured: set PERFAGENT_LLM_BASE_URL and PERFAGENT_LLM_MODEL').
        """
        ...

    def applies(self, request: RewriteRequest) -> str | None:
        """Whether ``propose`` can return anything for this request, without doing the work.

        Returns:
            None when it may propose candidates, else why not (no recipe for the transform, a
            precondition that fails on this source: 'no __shared__ array with a last dimension that is
            a multiple of 32').
        """
        ...

    def propose(self, request: RewriteRequest) -> list[Candidate]:
        """Candidates applying ``request.transform`` to ``request.source``.

        Args:
            request: the source, the transform, the finding, the hardware and earlier failures.

        Returns:
            At most ``request.max_candidates`` candidates, best guess first; an empty list when
            ``applies(request)`` gives a reason.

        Raises:
            LLMError: (llm backend) the endpoint is unreachable, timed out, or kept replying unusably.
        """
        ...


def unified_diff(original: str, new: str, path: str | None) -> str:
    """A unified diff of ``original`` -> ``new`` with a/ and b/ file names."""
    name = path or "kernel"
    return "".join(
        difflib.unified_diff(
            original.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"a/{name}",
            tofile=f"b/{name}",
        )
    )


def candidate_id(transform: str, backend: str, source: str) -> str:
    """The stable id of a candidate: same transform, backend and source give the same id."""
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()[:10]
    return f"{transform}/{backend}/{digest}"


def make_candidate(
    request: RewriteRequest,
    *,
    backend: BackendName,
    source: str,
    description: str,
    recipe: str | None = None,
    parameters: dict[str, ParamValue] | None = None,
    defines: dict[str, int] | None = None,
    launch: LaunchOverride | None = None,
    tokens: TokenUsage | None = None,
    notes: list[str] | None = None,
) -> Candidate:
    """Build a ``Candidate`` for ``request`` with its id and diff filled in."""
    return Candidate(
        id=candidate_id(request.transform, backend, source + _launch_key(launch)),
        transform=request.transform,
        backend=backend,
        recipe=recipe,
        source=source,
        description=description,
        parameters=dict(parameters or {}),
        defines=dict(defines or {}),
        launch=launch,
        diff=unified_diff(request.source, source, request.path),
        tokens=tokens,
        notes=list(notes or []),
    )


def _launch_key(launch: LaunchOverride | None) -> str:
    """Extra id material: the same source under another launch geometry is another candidate."""
    if launch is None:
        return ""
    return "\0" + launch.model_dump_json(exclude_none=True)
