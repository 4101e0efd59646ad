"""The transformation catalog: what each transform fixes, when it applies, how to apply it, what it risks.

One TOML file per transform id under ``knowledge/data/transforms/<id>.toml``; each is a ``Transform``.
The planner reads ``fixes`` and ``applies_when`` to rank transforms for a finding, the rewriters read
``how_cuda`` / ``how_triton`` / ``risks`` / the example (the LLM prompt carries the whole entry), and
the optimize loop reads ``expected_effect`` to check that an accepted rewrite moved the metric it
targeted, in the right direction.

Metric names are paths into the canonical kernel profile (``profilers.model.KernelProfile``), the same
spelling the metric maps use: ``metrics.shared_bank_conflict_pct``, ``metrics.warp_stalls.barrier``,
``occupancy.achieved_pct``, ``launch.waves_per_sm``. This module imports nothing of the project
beyond ``knowledge``; tests check every name against the models.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from knowledge import KnowledgeError, KnowledgeModel, data_files, load_toml

Comparison = Literal["<", "<=", ">", ">=", "==", "!="]
Direction = Literal["down", "up"]
Backend = Literal["recipes", "llm"]
Kind = Literal["structural", "tuning"]

_COMPARE: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
METRIC_ROOTS = ("metrics", "occupancy", "launch")
"""Top-level attributes of a kernel profile a metric path may start with."""


def metric_value(kernel: Any, path: str) -> float | None:
    """The value at ``path`` (e.g. ``metrics.warp_stalls.barrier``) of a kernel profile, or None.

    Works on any object with ``metrics`` / ``occupancy`` / ``launch`` attributes (duck-typed so that
    ``knowledge`` need not import the profile model). Missing attributes and dict keys give None.
    """
    value: Any = kernel
    for part in path.split("."):
        if isinstance(value, Mapping):
            value = value.get(part)
        else:
            value = getattr(value, part, None)
        if value is None:
            return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


class MetricCondition(KnowledgeModel):
    """One measured condition under which a transform is worth trying."""

    metric: str
    """Canonical metric path, e.g. 'metrics.shared_bank_conflict_pct' or 'launch.waves_per_sm'."""
    comparison: Comparison
    """How the measured value must relate to ``threshold``."""
    threshold: float
    """The value compared against, in the metric's own unit."""
    unit: str = ""
    """Unit of ``threshold`` for display ('%', 'byte', 'wave', ...)."""
    text: str
    """The condition in plain words, for reports and prompts."""

    @field_validator("metric")
    @classmethod
    def _root(cls, v: str) -> str:
        if v.split(".")[0] not in METRIC_ROOTS:
            raise ValueError(f"metric path {v!r} must start with one of {', '.join(METRIC_ROOTS)}")
        return v

    def holds(self, value: float | None) -> bool | None:
        """Whether ``value`` satisfies the condition (None when the value is unknown)."""
        if value is None:
            return None
        return _COMPARE[self.comparison](value, self.threshold)

    def evaluate(self, kernel: Any) -> bool | None:
        """Whether the condition holds on a kernel profile (None when the metric is missing)."""
        return self.holds(metric_value(kernel, self.metric))

    def describe(self) -> str:
        unit = f" {self.unit}" if self.unit and self.unit != "%" else self.unit
        return f"{self.metric} {self.comparison} {self.threshold:g}{unit}: {self.text}"


class ExpectedEffect(KnowledgeModel):
    """A metric that must move, and which way, if the transform worked."""

    metric: str
    """Canonical metric path (same spelling as ``MetricCondition.metric``)."""
    direction: Direction
    """'down' or 'up'."""
    text: str = ""
    """Why this metric moves, in plain words."""
    categories: list[str] = Field(default_factory=list)
    """When the transform targets a finding of one of these taxonomy categories, this effect decides
    (before the primary): a launch tweak on a DRAM-bound kernel must raise DRAM throughput, whatever
    it does to occupancy. Empty: no preference."""

    @field_validator("metric")
    @classmethod
    def _root(cls, v: str) -> str:
        if v.split(".")[0] not in METRIC_ROOTS:
            raise ValueError(f"metric path {v!r} must start with one of {', '.join(METRIC_ROOTS)}")
        return v

    def moved(self, before: float | None, after: float | None, *, min_change: float = 0.0) -> bool | None:
        """Whether the metric moved in ``direction`` by more than ``min_change`` (relative, 0..1).

        Returns None when either value is unknown.
        """
        if before is None or after is None:
            return None
        scale = max(abs(before), 1e-30)
        change = (after - before) / scale
        return change < -min_change if self.direction == "down" else change > min_change


class Transform(KnowledgeModel):
    """One catalog entry (``knowledge/data/transforms/<id>.toml``)."""

    id: str
    """Stable transform id (taxonomy.toml ``[transforms].ids``); equals the file name."""
    title: str
    summary: str
    """One or two sentences: what the transform does."""
    fixes: list[str] = Field(min_length=1)
    """Bottleneck category ids (taxonomy.toml) this transform addresses, most direct first."""
    kind: Kind
    """'structural' (changes which thread touches which data, or how much: coalescing, tiling, a warp per
    row, shuffle reductions, padding) or 'tuning' (a nudge that leaves the algorithm as it is: launch
    geometry, unroll pragmas, ``__restrict__``, fast math). The planner tries a finding's structural
    fixes before its tuning nudges: a 4x fix is not queued behind a 1.1x nudge."""
    applies_when: list[MetricCondition] = Field(min_length=1)
    """Measured indicators; any one holding makes the transform a candidate (the planner ranks)."""
    preconditions: list[str] = Field(default_factory=list)
    """Source-level conditions in plain words (what the code must look like for it to apply)."""
    how_cuda: str
    """How to apply it to CUDA C++."""
    how_triton: str
    """How to apply it to a Triton kernel (or why it does not apply there)."""
    risks: list[str] = Field(min_length=1)
    """What can go wrong: correctness traps, performance regressions, portability."""
    example_language: Literal["cuda", "triton"] = "cuda"
    example_before: str
    """A short before snippet."""
    example_after: str
    """The same snippet after the transform."""
    expected_effect: list[ExpectedEffect] = Field(min_length=1)
    """The metric(s) that must move if it worked; the first is the primary check."""
    typical_gain: str
    """Measured gains with their source (shared/reference/evaluation.md §5 ladders), or 'not measured'."""
    backends: list[Backend] = Field(min_length=1)
    """Rewriter backends that can apply it: 'recipes' (deterministic) and/or 'llm'."""
    recipes: list[str] = Field(default_factory=list)
    """Names of the deterministic recipes implementing it (perfagent/rewrite/recipes/), when any."""
    no_recipe: str | None = None
    """Why no deterministic recipe can apply it (required exactly when ``recipes`` is empty); the llm
    backend is the way to it."""

    @model_validator(mode="after")
    def _check(self) -> Transform:
        if ("recipes" in self.backends) != bool(self.recipes):
            raise ValueError(f"transform {self.id}: list recipe names exactly when 'recipes' is a backend")
        if bool(self.recipes) == bool(self.no_recipe):
            raise ValueError(
                f"transform {self.id}: say why there is no recipe (no_recipe) exactly when none is listed"
            )
        if len(set(self.fixes)) != len(self.fixes):
            raise ValueError(f"transform {self.id}: duplicate ids in fixes")
        return self

    @property
    def primary_effect(self) -> ExpectedEffect:
        """The metric the optimize loop checks first (with no targeted category)."""
        return self.expected_effect[0]

    def effect_for(self, category: str | None) -> ExpectedEffect:
        """The effect that decides for a finding of ``category``: one naming it, else the primary."""
        if category is not None:
            for effect in self.expected_effect:
                if category in effect.categories:
                    return effect
        return self.primary_effect

    def applicable(self, kernel: Any) -> list[MetricCondition]:
        """The ``applies_when`` conditions that hold on a kernel profile."""
        return [c for c in self.applies_when if c.evaluate(kernel)]

    def as_prompt(self, language: Literal["cuda", "triton", "python"]) -> str:
        """The entry as plain text for an LLM prompt (how-to for the given language first)."""
        how = self.how_triton if language in ("triton", "python") else self.how_cuda
        other = self.how_cuda if language in ("triton", "python") else self.how_triton
        lines = [
            f"Transform `{self.id}`: {self.title}",
            self.summary.strip(),
            "",
            f"Fixes: {', '.join(self.fixes)}.",
            "Applies when (any of):",
            *(f"- {c.describe()}" for c in self.applies_when),
        ]
        if self.preconditions:
            lines += ["Preconditions:", *(f"- {c}" for c in self.preconditions)]
        lines += [
            "",
            "How to apply:",
            how.strip(),
            "",
            "(For the other language: " + " ".join(other.split()) + ")",
            "",
            "Risks:",
            *(f"- {r}" for r in self.risks),
            "",
            f"Example before ({self.example_language}):",
            self.example_before.rstrip(),
            "Example after:",
            self.example_after.rstrip(),
            "",
            "If it worked: "
            + "; ".join(
                f"{e.metric} goes {e.direction}" + (f" ({e.text})" if e.text else "")
                for e in self.expected_effect
            ),
            f"Typical gain: {' '.join(self.typical_gain.split())}",
        ]
        return "\n".join(lines)


@cache
def catalog() -> dict[str, Transform]:
    """Every transform by id, in file-name order.

    Raises:
        KnowledgeError: a file is invalid, or its ``id`` differs from its file name.
    """
    out: dict[str, Transform] = {}
    for path in data_files("transforms"):
        stem = path.rsplit("/", 1)[-1].removesuffix(".toml")
        try:
            entry = Transform(**load_toml(path))
        except (TypeError, ValueError) as exc:
            raise KnowledgeError(f"knowledge file data/{path} is invalid: {exc}") from exc
        if entry.id != stem:
            raise KnowledgeError(
                f"knowledge file data/{path} has id {entry.id!r}; it must equal the file name"
            )
        out[entry.id] = entry
    return out


def transform(tid: str) -> Transform:
    """The catalog entry for ``tid``.

    Raises:
        KeyError: unknown id (the message lists the known ids).
    """
    entries = catalog()
    try:
        return entries[tid]
    except KeyError:
        raise KeyError(f"unknown transform {tid!r}; known: {', '.join(sorted(entries))}") from None
