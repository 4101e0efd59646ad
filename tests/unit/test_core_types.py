"""perfagent's core types have one home at the bottom of the layers, and records saved before still load.

Issue 28 moved ``Frozen``, ``Profile`` (and the profile models), ``PerfAgentError`` and ``ExitCode`` out of
``profilers`` into ``profilers.model`` / ``profilers.core_errors``; the profilers now import them from there.
"""

from __future__ import annotations

import ast
import importlib
import json
from pathlib import Path

import pytest

import perfagent
from perfagent.records import RunRecord
from profilers.core_errors import ExitCode, PerfAgentError
from profilers.errors import BadReport, ProfilerError
from profilers.model import Frozen, KernelProfile, Profile

SAVED_RECORDS = sorted(
    (Path(__file__).resolve().parents[1] / "data" / "kb_records_h200").glob("*.record.json")
)
"""record.json files perfagent wrote on an H200 on 2026-11-26, before the core types moved."""


HOME = {
    **dict.fromkeys(
        ("Frozen", "Profile", "KernelProfile", "Metrics", "DeviceInfo", "DevicePeaks"), "profilers.model"
    ),
    **dict.fromkeys(
        ("LaunchConfig", "Occupancy", "SourceLine", "ToolFinding", "MetricTier"), "profilers.model"
    ),
    **dict.fromkeys(("PerfAgentError", "ExitCode"), "profilers.core_errors"),
}
"""Each core type and the one module that defines it (and that every importer names)."""
REPO = Path(__file__).resolve().parents[2]


def test_each_core_type_is_defined_once_at_the_bottom() -> None:
    assert {Frozen.__module__, Profile.__module__, KernelProfile.__module__} == {"profilers.model"}
    assert {PerfAgentError.__module__, ExitCode.__module__} == {"profilers.core_errors"}
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("perfagent.models")  # the old second spelling is gone, not aliased


def test_every_importer_spells_a_core_type_one_way() -> None:
    elsewhere = []
    for path in sorted(
        p
        for pkg in ("perfagent", "profilers", "tui", "knowledge", "tests")
        for p in (REPO / pkg).rglob("*.py")
    ):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                elsewhere += [
                    f"{path.relative_to(REPO)}:{node.lineno} {node.module}.{a.name}"
                    for a in node.names
                    if a.name in HOME
                    and node.module != HOME[a.name]
                    and node.module.startswith(("perfagent", "profilers"))
                ]
            elif isinstance(node, ast.ClassDef) and node.name in HOME:
                module = ".".join(path.relative_to(REPO).with_suffix("").parts)
                if module != HOME[node.name]:
                    elsewhere.append(f"{path.relative_to(REPO)}:{node.lineno} class {node.name}")
    assert elsewhere == []


def test_profiler_errors_sit_under_the_one_root() -> None:
    error = BadReport("not a report", hint="pass a .ncu-rep")
    assert isinstance(error, ProfilerError) and isinstance(error, PerfAgentError)
    assert error.exit_code is ExitCode.USAGE


def _contained(saved: object, loaded: object, where: str = "$") -> list[str]:
    """Where ``loaded`` differs from ``saved`` (fields added since, with their defaults, are allowed)."""
    if isinstance(saved, dict):
        if not isinstance(loaded, dict):
            return [where]
        return [
            d for key, value in saved.items() for d in _contained(value, loaded.get(key), f"{where}.{key}")
        ]
    if isinstance(saved, list):
        if not isinstance(loaded, list) or len(saved) != len(loaded):
            return [where]
        return [
            d
            for i, (s, x) in enumerate(zip(saved, loaded, strict=True))
            for d in _contained(s, x, f"{where}[{i}]")
        ]
    return [] if saved == loaded else [where]


@pytest.mark.parametrize("path", SAVED_RECORDS, ids=lambda p: p.name)
def test_a_record_saved_before_loads_with_every_value_unchanged(path: Path) -> None:
    saved = json.loads(path.read_text(encoding="utf-8"))
    record = perfagent.load(path)
    assert isinstance(record, RunRecord)
    assert record.kernels and isinstance(record.kernels[0].profile, KernelProfile)
    assert _contained(saved, record.model_dump(mode="json")) == []


def test_the_saved_records_are_there() -> None:
    assert len(SAVED_RECORDS) >= 5
