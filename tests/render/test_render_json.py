"""JSON output is exactly the model's JSON."""

from __future__ import annotations

import json

from perfagent.records import RunRecord
from perfagent.render import OutputFormat, render


def test_json_is_model_dump(counters: RunRecord) -> None:
    assert render(counters, OutputFormat.JSON) == counters.model_dump_json(indent=2)


def test_json_round_trips(counters: RunRecord, static: RunRecord) -> None:
    for record in (counters, static):
        assert RunRecord.model_validate_json(render(record, OutputFormat.JSON)) == record


def _in_order(keys: list[str], wanted: list[str]) -> bool:
    positions = [keys.index(k) for k in wanted]
    return positions == sorted(positions)


def test_json_contract_keys_in_order(counters: RunRecord) -> None:
    data = json.loads(render(counters, OutputFormat.JSON))
    assert isinstance(data["kernels"], list)
    assert len(data["kernels"]) == 2
    kernel = data["kernels"][0]
    assert _in_order(list(kernel), ["name", "duration_s", "findings"])
    assert kernel["name"] == counters.kernels[0].name
    assert isinstance(kernel["duration_s"], float)
    finding = kernel["findings"][0]
    contract = ["category", "severity", "title", "evidence", "estimated_speedup", "transforms"]
    assert _in_order(list(finding), contract)
    assert finding["category"] == "global-coalescing"
    assert finding["estimated_speedup"] == 1.8
    assert finding["evidence"][0]["metric"] == "global_load_bytes_per_sector"
    assert finding["transforms"][0] == "coalesce-access"


def test_json_static_has_null_durations(static: RunRecord) -> None:
    data = json.loads(render(static, OutputFormat.JSON))
    assert data["mode"] == "static"
    assert data["kernels"][0]["duration_s"] is None
    assert data["kernels"][0]["findings"][0]["estimated_speedup"] is None
