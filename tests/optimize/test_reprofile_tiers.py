"""A candidate's re-profile collects only the tiers the accept rule and the next plan need (issue 27).
Kernels are the recorded suite example's (examples/reports/suite.ncu-rep, H200, ncu 2025.3.1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledge.transforms import catalog
from perfagent.optimize.reprofile_tiers import (
    REPROFILE_START_S,
    fold_pays,
    metric_in_tier_a,
    needs_second_run,
    tier_b_extra_s,
    tiers_for_candidate,
    tiers_needing_b,
    with_tier_b_merged,
)
from profilers.model import KernelProfile, Metrics, Profile
from profilers.ncu.report_reader import read_ncu_rep
from profilers.ncu.tiers import fields_provided

SUITE = Path(__file__).resolve().parents[2] / "examples" / "reports" / "suite.ncu-rep"


def only(kernel: KernelProfile, tiers: tuple[str, ...]) -> KernelProfile:
    """The kernel as a run collecting ``tiers`` records it."""
    wanted = fields_provided(tiers)  # type: ignore[arg-type]
    metrics = kernel.metrics.model_dump()
    for name, value in list(metrics.items()):
        if isinstance(value, dict):
            metrics[name] = {k: v for k, v in value.items() if f"metrics.{name}.{k}" in wanted}
        elif f"metrics.{name}" not in wanted:
            metrics[name] = None
    return kernel.model_copy(update={"metrics": Metrics.model_validate(metrics)})


@pytest.fixture(scope="module")
def kernels() -> dict[str, KernelProfile]:
    return {k.base_name: k for k in read_ncu_rep(SUITE).kernels}


def test_a_kernel_tier_a_explains_is_reprofiled_with_tier_a_only(kernels: dict[str, KernelProfile]) -> None:
    naive = kernels["sgemm_naive"]  # memory-bound (L1 96 %)
    # start_s=0: never fold, so only the evidence decides
    assert tiers_for_candidate(naive, "metrics.global_load_bytes_per_sector", 0.0) == ("A",)
    assert tiers_for_candidate(naive, "metrics.warp_stalls.long_scoreboard", 0.0) == ("A", "B")
    atomics = kernels["histogram_global_atomics"]
    assert tiers_for_candidate(atomics, "metrics.atomic_instructions", 0.0) == ("A", "B")
    assert tiers_for_candidate(None, "metrics.duration_s", 0.0) == ("A", "B")


def test_tier_b_is_folded_into_the_first_run_when_its_passes_cost_less_than_a_start(
    kernels: dict[str, KernelProfile],
) -> None:
    naive = kernels["sgemm_naive"]
    extra = tier_b_extra_s(naive)
    assert extra is not None and 8 * 0.015 < extra < 3.0  # a short kernel: 8 passes are cheap
    assert tiers_for_candidate(naive, "metrics.global_load_bytes_per_sector") == ("A", "B")
    assert tiers_for_candidate(naive, "metrics.global_load_bytes_per_sector", extra * 0.99) == ("A",)
    # a kernel whose 8 passes cost more than a start keeps the separate run where needed
    slow = naive.model_copy(update={"metrics": naive.metrics.model_copy(update={"duration_s": 0.5})})
    assert not fold_pays(slow, REPROFILE_START_S)
    assert tiers_for_candidate(slow, "metrics.global_load_bytes_per_sector") == ("A",)
    unknown = naive.model_copy(update={"metrics": naive.metrics.model_copy(update={"duration_s": None})})
    assert not fold_pays(unknown, REPROFILE_START_S)


def test_the_catalogs_tier_b_effects_are_the_stall_and_issue_metrics() -> None:
    effects = {e.metric for t in catalog().values() for e in t.expected_effect}
    assert sorted(m for m in effects if not metric_in_tier_a(m)) == [
        "metrics.issue_slot_utilization_pct",
        "metrics.warp_stalls.barrier",
        "metrics.warp_stalls.long_scoreboard",
    ]


def test_a_candidate_that_turns_latency_bound_gets_tier_b_in_a_second_run(
    kernels: dict[str, KernelProfile],
) -> None:
    full = kernels["histogram_global_atomics"]
    tier_a = only(full, ("A",))
    assert needs_second_run(("A",), tier_a) and not needs_second_run(("A", "B"), tier_a)
    assert not needs_second_run(("A",), only(kernels["sgemm_naive"], ("A",)))
    profile_a = Profile(tool="ncu", source="t", kernels=[tier_a])
    assert tiers_needing_b(("A",), profile_a)
    merged = with_tier_b_merged(profile_a, Profile(tool="ncu", source="t", kernels=[only(full, ("B",))]))
    assert merged.kernels[0].metrics.warp_stalls == full.metrics.warp_stalls
    assert merged.kernels[0].metrics.dram_bytes == full.metrics.dram_bytes
