"""Evaluate the AMD metric map (``knowledge/data/metric_maps/rocprof.toml``) on a kernel's counters.

Input: counter values averaged over a kernel's kept dispatches, plus context (clock, CU and XCD count,
peaks, the dispatches' mean duration). Output: every derived quantity, which alternative produced it, the
canonical fields they target, and the notes for alternatives that are estimates. No counter name is
spelled here; they all live in the map.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from knowledge.rocprof_metric_map import Derived, RocprofMetricMap, is_counter_name, rocprof_metric_map

Values = Mapping[str, float]


@dataclass(frozen=True)
class Evaluation:
    """The map evaluated for one kernel."""

    values: dict[str, float]
    """Derived name -> value (only the quantities that could be computed)."""
    chosen: dict[str, str]
    """Derived name -> the formula text that produced it."""
    estimates: dict[str, str]
    """Derived name -> the estimate sentence, for values that came from an estimating alternative."""
    targets: dict[str, float] = field(default_factory=dict)
    """Canonical target path ('metrics.dram_bytes', 'occupancy.achieved_pct', ...) -> value."""


def lookup_counter(counters: Values, name: str, aliases: Mapping[str, list[str]]) -> float | None:
    """A counter's value under its own name, its ``_sum``/bare twin, or an alias (None when absent)."""
    for candidate in (name, *aliases.get(name, [])):
        if candidate in counters:
            return counters[candidate]
        twin = candidate.removesuffix("_sum") if candidate.endswith("_sum") else candidate + "_sum"
        if twin in counters:
            return counters[twin]
    return None


class _Evaluator:
    """Evaluates a parsed formula; None means unavailable (missing input, division by zero, not finite)."""

    def __init__(self, counters: Values, scope: Mapping[str, float], aliases: Mapping[str, list[str]]):
        self.counters = counters
        self.scope = scope
        self.aliases = aliases

    def run(self, tree: ast.Expression) -> float | None:
        value = self._eval(tree.body)
        return value if value is not None and math.isfinite(value) else None

    def _name(self, name: str) -> float | None:
        if is_counter_name(name):
            return lookup_counter(self.counters, name, self.aliases)
        return self.scope.get(name)

    def _eval(self, node: ast.expr) -> float | None:
        if isinstance(node, ast.Constant):
            return float(node.value) if isinstance(node.value, int | float) else None
        if isinstance(node, ast.Name):
            return self._name(node.id)
        if isinstance(node, ast.UnaryOp):
            operand = self._eval(node.operand)
            if operand is None:
                return None
            return -operand if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.BinOp):
            left, right = self._eval(node.left), self._eval(node.right)
            if left is None or right is None:
                return None
            if isinstance(node.op, ast.Add):
                return left + right
            if isinstance(node.op, ast.Sub):
                return left - right
            if isinstance(node.op, ast.Mult):
                return left * right
            if isinstance(node.op, ast.Div):
                return None if right == 0 else left / right
            return None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return self._call(node.func.id, node.args)
        return None

    def _call(self, func: str, args: list[ast.expr]) -> float | None:
        if func in ("pct0", "ratio0"):
            # Zero measured in the numerator is a result (0), whatever the denominator.
            numerator = self._eval(args[0])
            if numerator == 0:
                return 0.0
        values = [self._eval(a) for a in args]
        if func == "sum_present":
            present = [v for v in values if v is not None]
            return sum(present) if present else None
        if func in ("min", "max"):
            present = [v for v in values if v is not None]
            if func == "min" and len(present) != len(values):
                return None
            if not present:
                return None
            return min(present) if func == "min" else max(present)
        if any(v is None for v in values):
            return None
        if func == "pos":
            return max(values[0] or 0.0, 0.0)
        numerator, denominator = values[0] or 0.0, values[1] or 0.0
        if numerator == 0:
            return 0.0
        if denominator == 0:
            return None
        return 100.0 * numerator / denominator if func == "pct0" else numerator / denominator


def evaluate(
    counters: Values,
    context: Mapping[str, float | None],
    *,
    arch: str | None = None,
    metric_map: RocprofMetricMap | None = None,
) -> Evaluation:
    """Evaluate every derived quantity of the map, in map order.

    ``max`` takes the largest of the operands that are available (``memory_throughput_pct`` is the busiest
    level measured); ``min`` needs all of them.

    Args:
        counters: counter name -> per-launch value.
        context: the map's context variables (None = unknown).
        arch: gfx target selecting arch-specific alternatives (None: all alternatives are eligible).
        metric_map: the map (default: the packaged one).
    """
    mmap = metric_map or rocprof_metric_map()
    scope: dict[str, float] = {k: float(v) for k, v in context.items() if v is not None}
    evaluator = _Evaluator(counters, scope, mmap.aliases)
    values: dict[str, float] = {}
    chosen: dict[str, str] = {}
    estimates: dict[str, str] = {}
    targets: dict[str, float] = {}
    for item in mmap.derived:
        result = _first_available(item, evaluator, arch)
        if result is None:
            continue
        value, formula_text, estimate = result
        values[item.name] = value
        scope[item.name] = value
        chosen[item.name] = formula_text
        if estimate:
            estimates[item.name] = estimate
        if item.target:
            targets[item.target] = value
    return Evaluation(values=values, chosen=chosen, estimates=estimates, targets=targets)


def _first_available(item: Derived, evaluator: _Evaluator, arch: str | None) -> tuple[float, str, str] | None:
    for alt in item.formula:
        if not alt.applies_to(arch):
            continue
        value = evaluator.run(alt.tree)
        if value is not None:
            return value, alt.expr, alt.estimate
    return None


def split_targets(targets: Mapping[str, float]) -> tuple[dict[str, object], float | None]:
    """Group canonical targets into ``Metrics`` keyword arguments and the achieved occupancy.

    Returns:
        (kwargs for ``Metrics`` including the ``flops`` and ``pipe_utilization_pct`` dicts, achieved %).
    """
    metrics: dict[str, object] = {}
    flops: dict[str, float] = {}
    pipes: dict[str, float] = {}
    achieved: float | None = None
    for path, value in targets.items():
        parts = path.split(".")
        if path == "occupancy.achieved_pct":
            achieved = value
        elif parts[:2] == ["metrics", "flops"]:
            flops[parts[2]] = value
        elif parts[:2] == ["metrics", "pipe_utilization_pct"]:
            pipes[parts[2]] = value
        elif parts[0] == "metrics" and len(parts) == 2:
            metrics[parts[1]] = value
    if flops:
        metrics["flops"] = flops
    if pipes:
        metrics["pipe_utilization_pct"] = pipes
    return metrics, achieved
