"""Vendor metric maps: which raw profiler metrics give each canonical quantity, as versioned data.

A metric map (``knowledge/data/metric_maps/<tool>.toml``) lists, for every canonical target key (e.g.
``metrics.dram_bytes``), the raw metric expressions to try in order. Version drift between profiler
releases and chip families is handled by listing several alternatives: the first one whose metrics are
all present (and that evaluates to a number) wins.

Expressions are a tiny arithmetic language over raw metric names::

    dram__bytes_read.sum + dram__bytes_write.sum
    2 * sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained * sm__cycles_elapsed.avg.per_second
    $fadd + $fmul + 2 * $ffma          ($name = a shared definition from the [defs] table)
    sum_present(a.sum, b.sum)          (sum of the operands that are present; None when none is)

Operators ``+ - * /`` and parentheses; functions ``sum_present``, ``max``, ``min``. A missing metric,
a non-numeric value or a division by zero makes the whole alternative ``None`` (never 0), so that the
next alternative is tried. Values are expected in base units (the reader converts before evaluating).

``exprs`` alternatives are also what a targeted profiling run collects; ``fallbacks`` are only tried when
reading reports recorded differently (older releases, other metric sets) and are not collected.
This module imports nothing of the project beyond ``knowledge``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Literal

from pydantic import Field, field_validator, model_validator

from knowledge import KnowledgeError, KnowledgeModel, load_toml

Value = float | str | None
"""What an expression evaluates to: a number (base units), a string (names), or None (not available)."""

_TOKEN = re.compile(
    r"\s*(?:"
    r"(?P<num>\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)"
    r"|(?P<ref>\$[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_.:]*)"
    r"|(?P<op>[-+*/(),])"
    r")"
)
_FUNCTIONS = frozenset({"sum_present", "max", "min"})


class ExpressionError(ValueError):
    """An expression in a metric map does not parse."""


# --------------------------------------------------------------------------- expression tree


class Env:
    """What an expression reads: raw metric values and shared definitions."""

    def metric(self, name: str) -> Value:
        """The raw value of metric ``name`` (base units), or None when absent."""
        raise NotImplementedError

    def ref(self, name: str) -> Value:
        """The value of the shared definition ``$name``, or None when unavailable."""
        raise NotImplementedError


@dataclass(frozen=True)
class Num:
    """A numeric literal."""

    value: float

    def evaluate(self, env: Env) -> Value:
        return self.value

    def walk(self) -> Iterable[Node]:
        yield self


@dataclass(frozen=True)
class Metric:
    """A raw metric name."""

    name: str

    def evaluate(self, env: Env) -> Value:
        return env.metric(self.name)

    def walk(self) -> Iterable[Node]:
        yield self


@dataclass(frozen=True)
class Ref:
    """A reference ``$name`` to a shared definition."""

    name: str

    def evaluate(self, env: Env) -> Value:
        return env.ref(self.name)

    def walk(self) -> Iterable[Node]:
        yield self


@dataclass(frozen=True)
class Neg:
    """Unary minus."""

    operand: Node

    def evaluate(self, env: Env) -> Value:
        value = _number(self.operand.evaluate(env))
        return None if value is None else -value

    def walk(self) -> Iterable[Node]:
        yield self
        yield from self.operand.walk()


@dataclass(frozen=True)
class BinOp:
    """``left op right`` for op in + - * /."""

    op: str
    left: Node
    right: Node

    def evaluate(self, env: Env) -> Value:
        a = _number(self.left.evaluate(env))
        if a is None:
            return None
        b = _number(self.right.evaluate(env))
        if b is None:
            return None
        if self.op == "+":
            return a + b
        if self.op == "-":
            return a - b
        if self.op == "*":
            return a * b
        return a / b if b != 0 else None

    def walk(self) -> Iterable[Node]:
        yield self
        yield from self.left.walk()
        yield from self.right.walk()


@dataclass(frozen=True)
class Call:
    """``func(args...)`` for func in sum_present, max, min."""

    func: str
    args: tuple[Node, ...]

    def evaluate(self, env: Env) -> Value:
        values = [_number(a.evaluate(env)) for a in self.args]
        if self.func == "sum_present":
            present = [v for v in values if v is not None]
            return sum(present) if present else None
        if any(v is None for v in values):
            return None
        numbers = [v for v in values if v is not None]
        return max(numbers) if self.func == "max" else min(numbers)

    def walk(self) -> Iterable[Node]:
        yield self
        for arg in self.args:
            yield from arg.walk()


Node = Num | Metric | Ref | Neg | BinOp | Call


def _number(value: Value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return None if math.isnan(number) or math.isinf(number) else number


class _Parser:
    """Recursive-descent parser: expr := term (+|- term)*; term := factor (*|/ factor)*."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        stripped = text.rstrip()
        while pos < len(stripped):
            match = _TOKEN.match(stripped, pos)
            if not match or match.end() == pos:
                raise ExpressionError(f"cannot parse {text!r} at position {pos}")
            kind = match.lastgroup
            assert kind is not None
            self.tokens.append((kind, match.group(kind)))
            pos = match.end()
        self.pos = 0

    def parse(self) -> Node:
        if not self.tokens:
            raise ExpressionError("empty expression")
        node = self._expr()
        if self.pos != len(self.tokens):
            raise ExpressionError(f"unexpected {self.tokens[self.pos][1]!r} in {self.text!r}")
        return node

    def _peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _take(self, value: str) -> bool:
        token = self._peek()
        if token is not None and token == ("op", value):
            self.pos += 1
            return True
        return False

    def _expr(self) -> Node:
        node = self._term()
        while True:
            if self._take("+"):
                node = BinOp("+", node, self._term())
            elif self._take("-"):
                node = BinOp("-", node, self._term())
            else:
                return node

    def _term(self) -> Node:
        node = self._factor()
        while True:
            if self._take("*"):
                node = BinOp("*", node, self._factor())
            elif self._take("/"):
                node = BinOp("/", node, self._factor())
            else:
                return node

    def _factor(self) -> Node:
        token = self._peek()
        if token is None:
            raise ExpressionError(f"unexpected end of {self.text!r}")
        kind, value = token
        self.pos += 1
        if kind == "num":
            return Num(float(value))
        if kind == "ref":
            return Ref(value[1:])
        if kind == "name":
            if self._take("("):
                if value not in _FUNCTIONS:
                    raise ExpressionError(f"unknown function {value!r} in {self.text!r}")
                args = [self._expr()]
                while self._take(","):
                    args.append(self._expr())
                if not self._take(")"):
                    raise ExpressionError(f"missing ')' in {self.text!r}")
                return Call(value, tuple(args))
            return Metric(value)
        if value == "-":
            return Neg(self._factor())
        if value == "(":
            node = self._expr()
            if not self._take(")"):
                raise ExpressionError(f"missing ')' in {self.text!r}")
            return node
        raise ExpressionError(f"unexpected {value!r} in {self.text!r}")


@cache
def parse_expression(text: str) -> Node:
    """Parse one metric-map expression.

    Args:
        text: the expression, e.g. ``"dram__bytes_read.sum + dram__bytes_write.sum"``.

    Returns:
        The expression tree (cached per text).

    Raises:
        ExpressionError: the text is not a valid expression.
    """
    return _Parser(text).parse()


def expression_metrics(text: str) -> frozenset[str]:
    """The raw metric names an expression reads directly (not through ``$`` definitions)."""
    return frozenset(n.name for n in parse_expression(text).walk() if isinstance(n, Metric))


def expression_refs(text: str) -> frozenset[str]:
    """The ``$`` definitions an expression refers to."""
    return frozenset(n.name for n in parse_expression(text).walk() if isinstance(n, Ref))


# --------------------------------------------------------------------------- map models


class MetricSpec(KnowledgeModel):
    """How to obtain one canonical quantity (or one shared definition) from raw metrics."""

    exprs: list[str] = Field(min_length=1)
    """Alternatives tried in order; their metrics are collected by a targeted profiling run."""
    fallbacks: list[str] = Field(default_factory=list)
    """Further alternatives tried after ``exprs``, for reports recorded differently; not collected."""
    kind: Literal["number", "integer", "string"] = "number"
    """Value type: 'integer' values are rounded; 'string' alternatives must be bare metric names."""
    extensive: bool = False
    """True for counts that scale with the work (bytes, FLOPs, instructions, cycles, durations): several
    launches are averaged plainly. Intensive values (percentages, ratios, rates) are duration-weighted."""
    doc: str = ""
    """What the quantity is, in plain words, with its unit."""

    @field_validator("exprs", "fallbacks")
    @classmethod
    def _parses(cls, alternatives: list[str]) -> list[str]:
        for text in alternatives:
            try:
                parse_expression(text)
            except ExpressionError as exc:
                raise ValueError(str(exc)) from exc
        return alternatives

    @model_validator(mode="after")
    def _strings_are_bare_names(self) -> MetricSpec:
        if self.kind == "string":
            for text in [*self.exprs, *self.fallbacks]:
                if not isinstance(parse_expression(text), Metric):
                    raise ValueError(f"string quantity alternatives must be bare metric names, not {text!r}")
        return self

    def alternatives(self) -> list[str]:
        """``exprs`` then ``fallbacks``, in trial order."""
        return [*self.exprs, *self.fallbacks]


class CollectSpec(KnowledgeModel):
    """What a targeted profiling run asks the tool for, besides the metrics the map reads."""

    sections: list[str]
    """Tool sections collected in every targeted run (they also feed the tool's own rules)."""
    metrics: list[str] = Field(default_factory=list)
    """Extra raw metrics to collect (device attributes and the like)."""
    source_sections: list[str] = Field(default_factory=list)
    """Sections added when per-source-line counters are requested."""


class MetricMap(KnowledgeModel):
    """A vendor tool's raw → canonical metric map."""

    schema_version: Literal[1]
    tool: str
    """Tool id, e.g. 'ncu'."""
    tool_versions: str
    """Releases this map was checked against (documentation)."""
    description: str = ""
    collect: CollectSpec
    defs: dict[str, MetricSpec] = Field(default_factory=dict)
    """Shared definitions referred to as ``$name`` in expressions."""
    fields: dict[str, MetricSpec]
    """Canonical target key (e.g. 'metrics.dram_bytes') → how to obtain it."""

    @model_validator(mode="after")
    def _refs_resolve(self) -> MetricMap:
        for owner, spec in [*self.defs.items(), *self.fields.items()]:
            for text in spec.alternatives():
                missing = expression_refs(text) - set(self.defs)
                if missing:
                    raise ValueError(f"{owner}: unknown definition(s) {sorted(missing)} in {text!r}")
        for name in self.defs:
            self._check_acyclic(name, ())
        return self

    def _check_acyclic(self, name: str, stack: tuple[str, ...]) -> None:
        if name in stack:
            raise ValueError(f"definition cycle: {' -> '.join((*stack, name))}")
        for text in self.defs[name].alternatives():
            for ref in expression_refs(text):
                self._check_acyclic(ref, (*stack, name))

    def metric_names(self) -> frozenset[str]:
        """Every raw metric name any alternative may read (what a reader should fetch)."""
        names: set[str] = set(self.collect.metrics)
        for spec in [*self.defs.values(), *self.fields.values()]:
            for text in spec.alternatives():
                names |= expression_metrics(text)
        return frozenset(names)

    def collected_metric_names(self) -> tuple[str, ...]:
        """Raw metrics a targeted run collects: ``collect.metrics`` plus everything reachable through
        ``exprs`` (not ``fallbacks``) of the fields, following ``$`` definitions the same way. Sorted."""
        names: set[str] = set(self.collect.metrics)
        seen_defs: set[str] = set()
        pending = [text for spec in self.fields.values() for text in spec.exprs]
        while pending:
            text = pending.pop()
            names |= expression_metrics(text)
            for ref in expression_refs(text) - seen_defs:
                seen_defs.add(ref)
                pending.extend(self.defs[ref].exprs)
        return tuple(sorted(names))

    def evaluator(self, values: Mapping[str, float | str]) -> MapEvaluator:
        """An evaluator of this map over one set of raw values (metric name → base-unit value)."""
        return MapEvaluator(self, values)


class MapEvaluator(Env):
    """Evaluates a map's fields over one set of raw values; shared definitions are memoised."""

    def __init__(self, metric_map: MetricMap, values: Mapping[str, float | str]) -> None:
        self._map = metric_map
        self._values = values
        self._refs: dict[str, Value] = {}

    def metric(self, name: str) -> Value:
        return self._values.get(name)

    def ref(self, name: str) -> Value:
        if name not in self._refs:
            self._refs[name] = self._first(self._map.defs[name])
        return self._refs[name]

    def field(self, key: str) -> Value:
        """The value of target ``key``: the first alternative that evaluates, else None.

        Raises:
            KeyError: ``key`` is not in the map.
        """
        return self._first(self._map.fields[key])

    def _first(self, spec: MetricSpec) -> Value:
        for text in spec.alternatives():
            value = parse_expression(text).evaluate(self)
            if isinstance(value, str):
                if spec.kind == "string" and value:
                    return value
                continue
            number = _number(value)
            if number is not None:
                return float(round(number)) if spec.kind == "integer" else number
        return None

    def all_fields(self) -> dict[str, Value]:
        """Every field of the map that evaluates, by key (absent keys were not available)."""
        out: dict[str, Value] = {}
        for key in self._map.fields:
            value = self.field(key)
            if value is not None:
                out[key] = value
        return out


@cache
def load_metric_map(tool: str) -> MetricMap:
    """Load and validate ``knowledge/data/metric_maps/<tool>.toml``.

    Args:
        tool: the tool id, e.g. 'ncu'.

    Returns:
        The validated map (cached).

    Raises:
        KnowledgeError: the file is missing or invalid.
    """
    raw = load_toml(f"metric_maps/{tool}.toml")
    try:
        return MetricMap.model_validate(raw)
    except ValueError as exc:
        raise KnowledgeError(f"metric map metric_maps/{tool}.toml is invalid: {exc}") from exc
