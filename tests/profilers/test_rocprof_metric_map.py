"""The AMD metric map validates, targets real canonical fields, and evaluates with the documented semantics."""

from __future__ import annotations

import pytest

from knowledge.rocprof_metric_map import RocprofMetricMap, parse_formula, rocprof_metric_map
from profilers.model import Metrics
from profilers.rocprof.metrics import evaluate, lookup_counter, split_targets
from profilers.rocprof.passes import block_of


def test_map_loads_and_is_versioned() -> None:
    mmap = rocprof_metric_map()
    assert mmap.schema_version == 1 and mmap.map_version
    assert {"gfx90a", "gfx942", "gfx950"} <= set(mmap.collect)


def test_every_target_is_a_canonical_field() -> None:
    fields = set(Metrics.model_fields)
    for item in rocprof_metric_map().derived:
        if item.target is None or item.target == "occupancy.achieved_pct":
            continue
        parts = item.target.split(".")
        assert parts[1] in fields, item.target
        if len(parts) == 3:
            assert parts[1] in {"flops", "pipe_utilization_pct"}


def test_collect_lists_fit_known_blocks() -> None:
    mmap = rocprof_metric_map()
    for counters in mmap.collect.values():
        assert {block_of(c) for c in counters} <= set(mmap.block_limits)


@pytest.mark.parametrize(
    "bad",
    ["__import__('os')", "a.b", "x if y else z", "lambda: 1", "f(1)", "pct0(1)", "'text'", "a[0]", "a ** 2"],
)
def test_formula_language_rejects(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_formula(bad)


def test_map_rejects_use_before_definition() -> None:
    raw = rocprof_metric_map().model_dump()
    raw["derived"] = [
        {"name": "a", "unit": "x", "doc": "", "formula": [{"expr": "b + 1"}]},
        {"name": "b", "unit": "x", "doc": "", "formula": [{"expr": "SQ_WAVES"}]},
    ]
    raw["collect"] = {}
    with pytest.raises(ValueError, match="used before it is defined"):
        RocprofMetricMap(**raw)


def test_bank_conflict_normalisation() -> None:
    # Measured: conflict cycles as % of LDS active cycles.
    ev = evaluate({"SQ_LDS_BANK_CONFLICT": 31.0, "SQ_LDS_IDX_ACTIVE": 32.0, "SQ_INSTS_LDS": 1.0}, {})
    assert ev.values["shared_bank_conflict_pct"] == pytest.approx(100 * 31 / 32)
    assert "shared_bank_conflict_pct" not in ev.estimates
    # Without SQ_LDS_IDX_ACTIVE: estimated, and flagged as such.
    ev = evaluate({"SQ_LDS_BANK_CONFLICT": 60.0, "SQ_INSTS_LDS": 1.0}, {})
    assert ev.values["shared_bank_conflict_pct"] == pytest.approx(100 * 60 / 62)
    assert "SQ_LDS_IDX_ACTIVE" in ev.estimates["shared_bank_conflict_pct"]
    # Zero conflict cycles are 0 % even with no LDS activity at all, and not an estimate.
    ev = evaluate({"SQ_LDS_BANK_CONFLICT": 0.0, "SQ_INSTS_LDS": 0.0}, {})
    assert ev.values["shared_bank_conflict_pct"] == 0.0 and not ev.estimates
    # Nothing measured: absent, never 0.
    assert "shared_bank_conflict_pct" not in evaluate({"SQ_WAVES": 1.0}, {}).values


def test_sum_twin_and_alias_lookup() -> None:
    aliases = rocprof_metric_map().aliases
    assert lookup_counter({"TCC_HIT": 5.0}, "TCC_HIT_sum", aliases) == 5.0
    assert lookup_counter({"SQ_WAVES_sum": 2.0}, "SQ_WAVES", aliases) == 2.0
    assert lookup_counter({"TCC_EA_WRREQ_sum": 3.0}, "TCC_EA0_WRREQ_sum", aliases) == 3.0
    assert lookup_counter({}, "TCC_HIT_sum", aliases) is None


def test_arch_selects_hbm_read_formula() -> None:
    # MI200 names: only the gfx90a alternative can apply; 32 B and 64 B requests.
    mi200 = {
        "TCC_EA_RDREQ_sum": 10.0,
        "TCC_EA_RDREQ_32B_sum": 2.0,
        "TCC_EA_WRREQ_sum": 4.0,
        "TCC_EA_WRREQ_64B_sum": 4.0,
    }
    ev = evaluate(mi200, {}, arch="gfx90a")
    assert ev.values["hbm_read_bytes"] == 32 * 2 + 64 * 8
    assert ev.values["dram_bytes"] == 32 * 2 + 64 * 8 + 64 * 4
    # The MI300 BUBBLE formula is not used on gfx90a even if the names were present.
    mixed = {**mi200, "TCC_BUBBLE_sum": 1.0, "TCC_EA0_RDREQ_sum": 10.0, "TCC_EA0_RDREQ_32B_sum": 0.0}
    assert evaluate(mixed, {}, arch="gfx90a").values["hbm_read_bytes"] == 32 * 2 + 64 * 8
    assert evaluate(mixed, {}, arch="gfx942").values["hbm_read_bytes"] == 128 + 64 * 9


def test_negative_terms_clamped() -> None:
    # rocprofiler-compute #833: the 64 B term can go negative on MI300.
    ev = evaluate(
        {"TCC_BUBBLE_sum": 10.0, "TCC_EA0_RDREQ_sum": 8.0, "TCC_EA0_RDREQ_32B_sum": 0.0}, {}, arch="gfx942"
    )
    assert ev.values["hbm_read_bytes"] == 128 * 10


def test_elapsed_cycles_prefer_timestamps_over_grbm() -> None:
    ctx = {"duration_ns": 1000.0, "sclk_mhz": 2000.0, "num_xcd": 8.0}
    ev = evaluate({"GRBM_GUI_ACTIVE": 80000.0}, ctx)
    assert ev.values["elapsed_cycles"] == 2000.0 and "elapsed_cycles" not in ev.estimates
    ev = evaluate({"GRBM_GUI_ACTIVE": 80000.0}, {"num_xcd": 8.0})
    assert ev.values["elapsed_cycles"] == 10000.0 and "elapsed_cycles" in ev.estimates


def test_atomic_latency_not_on_mi200() -> None:
    counters = {"TCC_EA0_ATOMIC_LEVEL_sum": 5000.0, "TCC_EA0_ATOMIC_sum": 2.0}
    assert evaluate(counters, {}, arch="gfx942").values["atomic_latency_cycles"] == 2500.0
    assert "atomic_latency_cycles" not in evaluate(counters, {}, arch="gfx90a").values


def test_flops_per_precision() -> None:
    counters = {
        "SQ_INSTS_VALU_ADD_F32": 1.0,
        "SQ_INSTS_VALU_MUL_F32": 0.0,
        "SQ_INSTS_VALU_TRANS_F32": 0.0,
        "SQ_INSTS_VALU_FMA_F32": 2.0,
        "SQ_INSTS_VALU_MFMA_MOPS_F32": 1.0,
        "SQ_INSTS_VALU_MFMA_MOPS_F16": 3.0,
        "SQ_INSTS_VALU_MFMA_MOPS_BF16": 1.0,
    }
    metrics, _ = split_targets(evaluate(counters, {}).targets)
    assert metrics["flops"] == {"fp32": 64 * (1 + 2 * 2) + 512, "tensor": 512 * 4}


def test_split_targets() -> None:
    metrics, achieved = split_targets(
        {
            "metrics.dram_bytes": 1.0,
            "metrics.flops.fp64": 2.0,
            "metrics.pipe_utilization_pct.valu": 3.0,
            "occupancy.achieved_pct": 4.0,
        }
    )
    assert metrics == {"dram_bytes": 1.0, "flops": {"fp64": 2.0}, "pipe_utilization_pct": {"valu": 3.0}}
    assert achieved == 4.0
    Metrics(**metrics)  # type: ignore[arg-type]
