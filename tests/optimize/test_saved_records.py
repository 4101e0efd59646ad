"""Optimize records written before the loop was recomposed (issue 28) load, render and continue as before.

Every optimize ``record.json`` under ``tests/data`` (H200 KernelBench runs of 2026-11-26, the llm-relay
runs) is loaded with every saved value unchanged, and the terminal and markdown reports (the renderers
were split into smaller functions) still show every candidate and plan step.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import perfagent
from perfagent.optimize.phase_files import load_optimize_run
from perfagent.optimize.render import render_markdown, render_text
from perfagent.records import RunRecord

DATA = Path(__file__).resolve().parents[1] / "data"
SAVED = sorted(
    p
    for p in DATA.rglob("*.json")
    if p.name.endswith("record.json") and '"kind": "optimize"' in p.read_text(encoding="utf-8")
)


def _unchanged(saved: Any, loaded: Any, where: str = "$") -> list[str]:
    """Where a saved value differs from the loaded record's (keys the model adds since are allowed)."""
    if isinstance(saved, dict):
        if not isinstance(loaded, dict):
            return [where]
        return [d for k, v in saved.items() for d in _unchanged(v, loaded.get(k), f"{where}.{k}")]
    if isinstance(saved, list):
        if not isinstance(loaded, list) or len(saved) != len(loaded):
            return [where]
        return [
            d
            for i, (s, x) in enumerate(zip(saved, loaded, strict=True))
            for d in _unchanged(s, x, f"{where}[{i}]")
        ]
    return [] if saved == loaded else [where]


@pytest.mark.parametrize("path", SAVED, ids=lambda p: str(p.relative_to(DATA)))
def test_a_saved_optimize_record_loads_and_renders(path: Path) -> None:
    saved = json.loads(path.read_text(encoding="utf-8"))
    record = perfagent.load(path)
    assert isinstance(record, RunRecord) and record.optimize is not None
    assert _unchanged(saved, record.model_dump(mode="json")) == []
    text, markdown = render_text(record.optimize), render_markdown(record.optimize)
    for c in record.optimize.candidates:
        assert f"| {c.id} | {c.transform} |" in markdown and c.id in text
    for step in record.optimize.plan:
        assert f"| {step.transform} |" in markdown
    if record.optimize.stopped:
        assert f"stopped: {record.optimize.stopped}" in text


def test_a_saved_run_folder_is_read_as_a_run_to_continue() -> None:
    """``--from RUN`` and ``--evaluate RUN`` read a run folder through ``load_optimize_run``."""
    runs = [p.parent for p in SAVED if p.name == "record.json"]
    assert runs
    for run in runs:
        record = load_optimize_run(run, "--from")
        assert record.optimize is not None and record.kind == "optimize"


def test_the_saved_records_are_there() -> None:
    assert len(SAVED) >= 15
