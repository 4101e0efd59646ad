"""Longest-expected-first order of suite entries (perfagent/suite/schedule.py)."""

from __future__ import annotations

from pathlib import Path

from perfagent.suite.manifest import discover
from perfagent.suite.models import EntryResult, SuiteSettings
from perfagent.suite.schedule import (
    COSTS_FILE,
    entry_kind,
    guess_cost,
    longest_first,
    read_costs,
    write_costs,
)

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


def test_the_guesses_follow_the_jobs() -> None:
    """With optimize, a Triton script without a candidate is one of the longest entries (it is optimized
    through ncu-timed runs: 73-79 s on an H200) though it has nothing to verify; without optimize it is
    among the shortest. Before, the guess ignored the jobs: both scripts came last and were the tail
    of the 4-GPU optimize run (tests/gpu/h200x4_2026-11-26b/suite_optimize/local-4.log)."""
    entries = discover(EXAMPLES)
    kinds = {e.name: entry_kind(e) for e in entries}
    assert kinds["triton/01_matmul_bad_config.py"] == "triton-script"
    assert kinds["kernelbench/03_degenerate_gemm_max_sub_gelu.py"] == "python-problem"
    assert kinds["kernelbench/01_vector_add_cuda.py"] == "inline-extension"
    assert kinds["kernelbench/01_vector_add_triton.py"] == "python-pair"
    assert kinds["cuda/01_transpose_naive/slow.cu"] == "kernel-pair"
    assert kinds["cuda/07_compute_bound_fma/slow.cu"] == "kernel"
    all_jobs = ("verify", "bench", "optimize")
    first = [e.name for e in longest_first(entries, jobs=all_jobs)]
    builds = sum(1 for k in kinds.values() if k == "inline-extension")  # the load_inline entries lead
    assert {kinds[n] for n in first[:builds]} == {"inline-extension"}
    assert set(first[builds : builds + 2]) == {
        "triton/01_matmul_bad_config.py",
        "triton/02_softmax_small_block.py",
    }
    last = [e.name for e in longest_first(entries, jobs=("verify", "bench"))]
    assert set(last[-2:]) == {"triton/01_matmul_bad_config.py", "triton/02_softmax_small_block.py"}
