"""Longest-expected-first order of suite entries (perfagent/suite/schedule.py)."""

from __future__ import annotations

from pathlib import Path

from perfagent.suite.manifest import discover
from perfagent.suite.models import EntryResult, SuiteSettings
from perfagent.suite.schedule import COSTS_FILE, guess_cost, longest_first, read_costs, write_costs

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_inline_extension_entry_goes_first_without_history() -> None:
    entries = discover(EXAMPLES)
    ordered = longest_first(entries)
    assert ordered[0].name == "kernelbench/01_vector_add_cuda.py"  # its ModelNew calls load_inline
    assert sorted(e.name for e in ordered) == sorted(e.name for e in entries)
    costs = [guess_cost(e) for e in ordered]
    assert costs == sorted(costs, reverse=True)
    # entries without a candidate (nothing to build twice) come last
    assert all(e.candidate is None for e in ordered if guess_cost(e) == min(costs))


def test_equal_costs_keep_the_manifest_order() -> None:
    pairs = [e for e in discover(EXAMPLES / "cuda") if e.candidate is not None]
    assert [e.name for e in longest_first(pairs)] == [e.name for e in pairs]


def test_history_of_the_same_jobs_overrides_the_guess(tmp_path: Path) -> None:
    pairs = [e for e in discover(EXAMPLES / "cuda") if e.candidate is not None][:3]
    settings = SuiteSettings(jobs=["verify", "bench"])
    rows = [
        EntryResult(name=e.name, kind=e.kind, target=str(e.target), elapsed_s=s)
        for e, s in zip(pairs, [5.0, 40.0, 9.0], strict=True)
    ]
    write_costs(tmp_path, settings, rows)
    assert (tmp_path / COSTS_FILE).is_file()
    known = read_costs(tmp_path, settings)
    assert [e.name for e in longest_first(pairs, known)] == [pairs[1].name, pairs[2].name, pairs[0].name]
    # another job list has no history yet
    assert read_costs(tmp_path, SuiteSettings(jobs=["optimize"])) == {}
    # a later run adds to the history instead of replacing it
    write_costs(tmp_path, SuiteSettings(jobs=["optimize"]), rows[:1])
    assert read_costs(tmp_path, settings) == known


def test_a_damaged_costs_file_means_no_history(tmp_path: Path) -> None:
    (tmp_path / COSTS_FILE).write_text("{not json", encoding="utf-8")
    assert read_costs(tmp_path, SuiteSettings(jobs=["verify"])) == {}
