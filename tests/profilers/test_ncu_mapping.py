"""Metric-map loader, expression language, unit conversion and launch aggregation."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge import KnowledgeError
from knowledge.metric_maps import (
    ExpressionError,
    MetricMap,
    expression_metrics,
    load_metric_map,
    parse_expression,
)
from profilers.model import Metrics
from profilers.ncu.mapping import (
    LaunchRecord,
    base_name_from_demangled,
    build_kernel,
    group_launches,
    ncu_metric_map,
    occupancy_limiter,
    to_base_values,
    unknown_targets,
)
from profilers.ncu.units import to_base_units, unit_factor


def tiny_map(**fields: Any) -> MetricMap:
    return MetricMap.model_validate(
        {
            "schema_version": 1,
            "tool": "t",
            "tool_versions": "test",
            "collect": {"sections": []},
            "defs": {"cycles": {"exprs": ["c.sum"], "fallbacks": ["c.rate * t.sum"]}},
            "fields": fields,
        }
    )


@pytest.mark.parametrize(
    ("unit", "factor"),
    [
        ("ns", 1e-9),
        ("nsecond", 1e-9),
        ("usecond", 1e-6),
        ("msecond", 1e-3),
        ("second", 1.0),
        ("Kbyte", 1e3),
        ("Mbyte", 1e6),
        ("Gbyte/second", 1e9),
        ("byte/s", 1.0),
        ("hz", 1.0),
        ("Ghz", 1e9),
        ("cycle/nsecond", 1e9),
        ("cycle/usecond", 1e6),
        ("%", 1.0),
        ("", 1.0),
        ("inst/cycle", 1.0),
        ("byte/cycle", 1.0),
        ("register/thread", 1.0),
        ("1/s", 1.0),
        ("KiB", 1024.0),
    ],
)
def test_unit_factors(unit: str, factor: float) -> None:
    assert unit_factor(unit) == pytest.approx(factor, rel=1e-12)


def test_unknown_unit_keeps_value_and_notes() -> None:
    assert to_base_units(5.0, "furlong/fortnight").known is False
    assert to_base_units(5.0, "furlong/fortnight").value == 5.0
    notes: set[str] = set()
    values = to_base_values(
        {"a.sum": (41696.0, "ns"), "b": (2.0, "parsec"), "c": (None, ""), "d": ("NVIDIA A10G", "")}, notes
    )
    assert values == {"a.sum": pytest.approx(41.696e-6), "b": 2.0, "d": "NVIDIA A10G"}
    assert len(notes) == 1 and "parsec" in next(iter(notes))


def test_expressions() -> None:
    spec = tiny_map(
        **{
            "metrics.dram_bytes": {"exprs": ["a.sum + b.sum", "r.per_second * t.sum"]},
            "metrics.l2_bytes": {"exprs": ["x / y"]},
            "metrics.l1_bytes": {"exprs": ["sum_present(p.sum, q.sum) * 2"]},
            "metrics.elapsed_cycles": {"exprs": ["$cycles"]},
            "metrics.sm_active_cycles": {"exprs": ["-(max(c.sum, 3) - min(2, 5)) + 10"]},
            "device.name": {"exprs": ["n"], "kind": "string"},
            "launch.grid_size": {"exprs": ["g"], "kind": "integer"},
        }
    )
    ev = spec.evaluator(
        {
            "b.sum": 2.0,
            "r.per_second": 10.0,
            "t.sum": 0.5,
            "x": 1.0,
            "y": 0.0,
            "q.sum": 4.0,
            "c.rate": 6.0,
            "n": "GPU",
            "g": 3.6,
        }
    )
    assert ev.field("metrics.dram_bytes") == 5.0  # a.sum missing: the next alternative
    assert ev.field("metrics.l2_bytes") is None  # division by zero: None, never inf or 0
    assert ev.field("metrics.l1_bytes") == 8.0
    assert ev.field("metrics.elapsed_cycles") == 3.0  # $cycles through its fallback
    assert ev.field("metrics.sm_active_cycles") is None  # c.sum missing inside max()
    assert ev.field("device.name") == "GPU"
    assert ev.field("launch.grid_size") == 4.0
    assert expression_metrics("2 * a.b.sum + $x / c:d") == {"a.b.sum", "c:d"}


@pytest.mark.parametrize("bad", ["a +", "(a", "foo(a)", "a b", "", "2 ** a"])
def test_bad_expressions(bad: str) -> None:
    with pytest.raises(ExpressionError):
        parse_expression(bad)


def test_map_validation() -> None:
    with pytest.raises(ValueError, match="cannot parse|unexpected"):
        tiny_map(**{"metrics.dram_bytes": {"exprs": ["a + + "]}})
    with pytest.raises(ValueError, match="unknown definition"):
        tiny_map(**{"metrics.dram_bytes": {"exprs": ["$nope"]}})
    with pytest.raises(ValueError, match="bare metric names"):
        tiny_map(**{"device.name": {"exprs": ["a + b"], "kind": "string"}})
    with pytest.raises(ValueError, match="cycle"):
        MetricMap.model_validate(
            {
                "schema_version": 1,
                "tool": "t",
                "tool_versions": "x",
                "collect": {"sections": []},
                "defs": {"a": {"exprs": ["$b"]}, "b": {"exprs": ["$a"]}},
                "fields": {},
            }
        )
    with pytest.raises(KnowledgeError):
        load_metric_map("no-such-tool")


def test_ncu_map_targets_are_all_known() -> None:
    metric_map = ncu_metric_map()
    assert unknown_targets(metric_map.fields) == []
    assert unknown_targets(["metrics.bogus", "launch.grid.w"]) == ["launch.grid.w", "metrics.bogus"]
    # every canonical precision and the roofline quantities are mapped
    for key in ("metrics.flops.fp32", "metrics.flops.fp64", "metrics.flops.fp16", "metrics.flops.tensor"):
        assert key in metric_map.fields
    for name in ("duration_s", "dram_bytes", "l2_bytes", "l1_bytes", "shared_bank_conflict_pct"):
        assert f"metrics.{name}" in metric_map.fields and name in Metrics.model_fields


def test_occupancy_limiter() -> None:
    limits = {"registers": 4, "shared-memory": 9, "warps": 4, "block-slots": 32}
    assert occupancy_limiter(limits, 50.0) == "registers"  # tie: the first in LIMITER_ORDER
    assert (
        occupancy_limiter({"registers": 21, "shared-memory": 9, "warps": 16, "block-slots": 32}, 56.25)
        == "shared-memory"
    )
    assert occupancy_limiter(limits, 100.0) is None
    assert occupancy_limiter({}, 50.0) is None


def test_aggregation_of_launches() -> None:
    def launch(duration: float, dram: float, sm_pct: float, grid_x: int = 64) -> LaunchRecord:
        return LaunchRecord(
            name="void k<1>(float *)",
            base_name="k",
            fields={
                "metrics.duration_s": duration,
                "metrics.dram_bytes": dram,
                "metrics.sm_throughput_pct": sm_pct,
                "launch.grid.x": float(grid_x),
                "launch.grid.y": 1.0,
                "launch.grid.z": 1.0,
                "device.name": "GPU",
            },
            raw_metric_count=100,
        )

    records = [launch(1e-3, 100.0, 10.0), launch(3e-3, 300.0, 50.0), launch(1e-3, 100.0, 10.0, grid_x=128)]
    groups = group_launches(records)
    assert [len(g) for g in groups] == [2, 1]
    kernel = build_kernel(groups[0])
    assert kernel.invocations == 2
    assert kernel.total_duration_s == pytest.approx(4e-3)
    assert kernel.metrics.duration_s == pytest.approx(2e-3)  # extensive: plain mean
    assert kernel.metrics.dram_bytes == pytest.approx(200.0)
    assert kernel.metrics.sm_throughput_pct == pytest.approx(40.0)  # intensive: duration-weighted
    assert kernel.launch.grid == (64, 1, 1)
    assert kernel.launch.block is None  # not measured: None
    assert kernel.device.name == "GPU" and kernel.device.peaks.source == "unknown"
    assert kernel.metrics.flops == {}


@pytest.mark.parametrize(
    ("name", "base"),
    [
        ("void one_blocktiling<(int)64, (int)64>(int, const float *, float *)", "one_blocktiling"),
        ("vec_add(float *, float *, float *, int)", "vec_add"),
        ("void at::native::(anonymous namespace)::reduce<float, 4>(int, float (*)(float))", "reduce"),
        ("MmaPtxShared", "MmaPtxShared"),
    ],
)
def test_base_name_from_demangled(name: str, base: str) -> None:
    assert base_name_from_demangled(name) == base
