"""The AMD counter map (``data/metric_maps/rocprof.toml``): rocprof counters -> canonical metrics, as data.

The map is an ordered list of derived quantities, each with alternative formulas over counter names,
reader-supplied context variables (clock, CU count, XCD count, peaks) and earlier derived quantities.
This module validates the file (every formula parses into the small arithmetic language below, every
lower-case name is declared before it is used, targets are well formed, the per-architecture collection
lists name only counters the formulas use) and offers the parsed trees; evaluating them against real
counters is the profiler's job (``profilers.rocprof.metrics``). It imports nothing of the project beyond
``knowledge``.

Formula language: numbers, names, ``+ - * /``, unary minus, parentheses and the functions ``pos``,
``sum_present``, ``pct0``, ``ratio0``, ``min``, ``max`` (meanings in the TOML header). UPPER_CASE names
(anything that is not all lower case) are counters; lower_case names are context or derived values.
"""

from __future__ import annotations

import ast
import re
from functools import cache

from pydantic import Field, field_validator, model_validator

from knowledge import KnowledgeError, KnowledgeModel, load_toml

MAP_PATH = "metric_maps/rocprof.toml"

FUNCTIONS: dict[str, tuple[int, int | None]] = {
    "pos": (1, 1),
    "sum_present": (1, None),
    "pct0": (2, 2),
    "ratio0": (2, 2),
    "min": (2, None),
    "max": (1, None),
}
"""Allowed functions and their (min, max) argument counts (None = unbounded)."""

_TARGET = re.compile(
    r"^(metrics\.[a-z0-9_]+|metrics\.(flops|pipe_utilization_pct)\.[a-z0-9_]+|occupancy\.achieved_pct)$"
)
_LOWER_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_ALLOWED_NODES = (
    ast.Expression,
    ast.BinOp,
    ast.UnaryOp,
    ast.Constant,
    ast.Name,
    ast.Load,
    ast.Call,
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.USub,
    ast.UAdd,
)


def is_counter_name(name: str) -> bool:
    """True for a counter name (anything not all lower case), False for context/derived names."""
    return _LOWER_NAME.match(name) is None


def parse_formula(text: str) -> ast.Expression:
    """Parse ``text`` into a checked expression tree.

    Raises:
        ValueError: the text is not in the formula language.
    """
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"formula does not parse: {text!r} ({exc.msg})") from None
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED_NODES):
            raise ValueError(f"formula {text!r}: {type(node).__name__} is not allowed")
        if isinstance(node, ast.Constant) and (
            isinstance(node.value, bool) or not isinstance(node.value, int | float)
        ):
            raise ValueError(f"formula {text!r}: only numeric literals are allowed")
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
                raise ValueError(f"formula {text!r}: unknown function (allowed: {', '.join(FUNCTIONS)})")
            if node.keywords:
                raise ValueError(f"formula {text!r}: keyword arguments are not allowed")
            low, high = FUNCTIONS[node.func.id]
            if len(node.args) < low or (high is not None and len(node.args) > high):
                raise ValueError(f"formula {text!r}: wrong number of arguments to {node.func.id}")
    return tree


def formula_names(tree: ast.Expression) -> frozenset[str]:
    """The variable names a parsed formula reads (function names excluded)."""
    funcs = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return frozenset(n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in funcs)


class Formula(KnowledgeModel):
    """One alternative way to compute a derived quantity."""

    expr: str
    """The formula (see the module docstring for the language)."""
    arch: list[str] = Field(default_factory=list)
    """gfx targets it applies to (empty: all). Ignored when the data's architecture is unknown."""
    estimate: str = ""
    """Non-empty when the result rests on an assumption: the sentence that says which (goes to notes)."""

    @field_validator("expr")
    @classmethod
    def _parses(cls, value: str) -> str:
        parse_formula(value)
        return value

    @property
    def tree(self) -> ast.Expression:
        """The parsed expression."""
        return _parsed(self.expr)

    @property
    def names(self) -> frozenset[str]:
        """Every name the formula reads."""
        return formula_names(self.tree)

    @property
    def counters(self) -> frozenset[str]:
        """The counter names the formula reads."""
        return frozenset(n for n in self.names if is_counter_name(n))

    def applies_to(self, arch: str | None) -> bool:
        """Whether the formula's architecture filter admits ``arch`` (unknown arch: always)."""
        return not self.arch or arch is None or arch in self.arch


class Derived(KnowledgeModel):
    """A derived quantity and where it lands in the canonical model."""

    name: str
    """snake_case identifier; later formulas may read it."""
    target: str | None = None
    """'metrics.<field>', 'metrics.flops.<precision>', 'metrics.pipe_utilization_pct.<pipe>',
    'occupancy.achieved_pct', or None for an intermediate or a tool-finding-only quantity."""
    unit: str
    doc: str
    sources: list[str] = Field(default_factory=list)
    formula: list[Formula] = Field(min_length=1)
    """Alternatives, tried in order; the first that evaluates wins."""

    @field_validator("name")
    @classmethod
    def _snake(cls, value: str) -> str:
        if not _LOWER_NAME.match(value):
            raise ValueError(f"derived name {value!r} must be snake_case")
        return value

    @field_validator("target")
    @classmethod
    def _target(cls, value: str | None) -> str | None:
        if value is not None and not _TARGET.match(value):
            raise ValueError(f"target {value!r} is not a canonical metric path")
        return value


class RocprofMetricMap(KnowledgeModel):
    """The whole map file."""

    schema_version: int
    map_version: str
    description: str
    context: dict[str, str]
    """Context variables the reader supplies, with what each means."""
    aliases: dict[str, list[str]] = Field(default_factory=dict)
    """Counter name -> other spellings tried when it is absent."""
    block_limits: dict[str, int]
    """Counters per hardware block one replay pass can collect."""
    collect: dict[str, list[str]]
    """gfx target -> counters a profiling run requests there."""
    derived: list[Derived]

    @model_validator(mode="after")
    def _consistent(self) -> RocprofMetricMap:
        known: set[str] = set(self.context)
        for item in self.derived:
            if item.name in known:
                raise ValueError(f"derived {item.name!r} is defined twice or shadows a context variable")
            for alt in item.formula:
                for name in alt.names:
                    if not is_counter_name(name) and name not in known:
                        raise ValueError(f"{item.name}: {name!r} is used before it is defined")
            known.add(item.name)
        targets = [d.target for d in self.derived if d.target]
        if len(targets) != len(set(targets)):
            raise ValueError("two derived quantities write the same target")
        used = {c for d in self.derived for alt in d.formula for c in alt.counters}
        spelled = used | {a for names in self.aliases.values() for a in names}
        for arch, counters in self.collect.items():
            for counter in counters:
                if counter not in spelled and counter.removesuffix("_sum") not in spelled:
                    raise ValueError(f"collect.{arch}: {counter} is not used by any formula")
            if len(counters) != len(set(counters)):
                raise ValueError(f"collect.{arch} lists a counter twice")
        return self

    def collect_for(self, arch: str | None) -> list[str]:
        """Counters to request on ``arch``: its own list, else its family's (gfx94x -> gfx942), else [].

        Args:
            arch: a gfx target such as 'gfx942', or None.
        """
        if not arch:
            return []
        if arch in self.collect:
            return list(self.collect[arch])
        family = [key for key in self.collect if key[:5] == arch[:5]]
        return list(self.collect[family[0]]) if len(family) == 1 else []


@cache
def _parsed(expr: str) -> ast.Expression:
    return parse_formula(expr)


@cache
def rocprof_metric_map() -> RocprofMetricMap:
    """The validated AMD metric map (cached).

    Raises:
        KnowledgeError: the file is missing or invalid.
    """
    raw = load_toml(MAP_PATH)
    try:
        return RocprofMetricMap(**raw)
    except ValueError as exc:
        raise KnowledgeError(f"knowledge file data/{MAP_PATH} is invalid: {exc}") from exc
