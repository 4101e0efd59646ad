"""Rules declare the metrics they read; each is collected by the tier that triggers it; a tier not
collected is "not collected", never zero. Checked on the recorded example reports (real H100/H200 data)."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.classifier import RULES, classify
from perfagent.classifier.context import RuleContext
from perfagent.classifier.execution_rules import latency_bound, no_dominant_limiter
from perfagent.classifier.needs import RULE_NEEDS, TIER_B_KEYS, tier_b_reason
from perfagent.roofline import roofline
from profilers.model import KernelProfile, Metrics, Profile
from profilers.ncu.report_reader import read_ncu_rep
from profilers.ncu.tiers import fields_provided

REPORTS = Path(__file__).resolve().parents[2] / "examples" / "reports"
TIER_A = fields_provided(("A",))
TIER_AB = fields_provided(("A", "B"))
ONLY_B = TIER_AB - TIER_A


def provided(key: str, keys: frozenset[str]) -> bool:
    """A plain key is in ``keys``; a dict field (``metrics.warp_stalls``) has at least one key there."""
    return key in keys or any(k.startswith(key + ".") for k in keys)


def without_tier_b(kernel: KernelProfile) -> KernelProfile:
    """The kernel as a tier-A-only run records it: every key only tier B fills is absent."""
    metrics = kernel.metrics.model_dump()
    for key in ONLY_B:
        parts = key.split(".")
        if parts[0] != "metrics":
            continue
        if len(parts) == 2:
            metrics[parts[1]] = None
        else:
            metrics[parts[1]].pop(parts[2], None)
    return kernel.model_copy(update={"metrics": Metrics.model_validate(metrics), "tiers": ["duration", "A"]})


def categories(profile: Profile) -> dict[tuple[str, object], list[str]]:
    return {(d.name, d.profile.launch.grid): [f.category for f in d.findings] for d in classify(profile)}


@pytest.fixture(scope="module")
def reports() -> dict[str, Profile]:
    return {p.name: read_ncu_rep(p) for p in sorted(REPORTS.glob("*.ncu-rep"))}


def test_every_rule_declares_its_needs() -> None:
    assert {rule.__name__ for rule in RULES} | {no_dominant_limiter.__name__} == set(RULE_NEEDS)


@pytest.mark.parametrize("rule", sorted(RULE_NEEDS))
def test_each_rules_needs_are_collected_by_the_tier_that_triggers_it(rule: str) -> None:
    needs = RULE_NEEDS[rule]
    assert [k for k in needs.always if not provided(k, TIER_A)] == []
    assert [k for k in needs.tier_b if not provided(k, TIER_AB)] == []
    # tier-B needs are keys tier A cannot fill: otherwise they belong in `always`
    assert [k for k in needs.tier_b if provided(k, TIER_A) and not provided(k, ONLY_B)] == []


def test_tier_b_keys_are_the_stalls_and_scheduler_state() -> None:
    assert {"metrics.warp_stalls", "metrics.issue_slot_utilization_pct"} <= TIER_B_KEYS
    assert "metrics.flops.tensor" not in TIER_B_KEYS  # the roofline's: tier A
    assert all(provided(k, ONLY_B) for k in TIER_B_KEYS)


def test_dropping_tier_b_where_tier_a_does_not_call_for_it_changes_no_classification(
    reports: dict[str, Profile],
) -> None:
    asked = 0
    for name, profile in reports.items():
        staged = []
        for kernel in profile.kernels:
            reason = tier_b_reason(kernel)
            asked += reason is not None
            staged.append(kernel if reason else without_tier_b(kernel))
        assert categories(profile.model_copy(update={"kernels": staged})) == categories(profile), name
    assert asked >= 6  # the latency- and compute-bound kernels of the suite kept tier B


def test_tier_b_reasons_on_the_suite(reports: dict[str, Profile]) -> None:
    reasons = {k.base_name: tier_b_reason(k) for k in reports["suite.ncu-rep"].kernels}
    assert reasons["sgemm_naive"] is None  # memory-bound (L1 at 96 %): tier A names it
    assert reasons["fma_chains_compute_bound"] is None  # at its FP32 roof
    assert (reasons["histogram_global_atomics"] or "").startswith("latency-bound")
    assert (reasons["smooth_ring_nospill"] or "").startswith("compute-bound")


def test_a_missing_tier_is_not_collected_never_zero(reports: dict[str, Profile]) -> None:
    kernel = next(k for k in reports["suite.ncu-rep"].kernels if k.base_name == "histogram_global_atomics")
    full = latency_bound(RuleContext(kernel=kernel, roofline=roofline(kernel), static=False))
    assert full is not None and getattr(full, "category", None) == "latency-bound"
    shallow = without_tier_b(kernel).model_copy(update={"tier_reason": "tier B not needed"})
    skip = latency_bound(RuleContext(kernel=shallow, roofline=roofline(shallow), static=False))
    assert getattr(skip, "reason", "").startswith("not collected: tier B")
    diagnosis = next(d for d in classify(Profile(tool="ncu", source="t", kernels=[shallow])))
    assert any(s.rule == "latency_bound" and "not collected" in s.reason for s in diagnosis.skipped)


def test_a_kernel_timed_only_is_listed_with_its_reason_not_diagnosed(reports: dict[str, Profile]) -> None:
    kernel = reports["suite.ncu-rep"].kernels[0]
    timed = KernelProfile(
        name=kernel.name,
        base_name=kernel.base_name,
        launch=kernel.launch,
        metrics=Metrics(duration_s=kernel.metrics.duration_s),
        tiers=["duration"],
        tier_reason="not profiled in depth (1.8 % of GPU time)",
    )
    (d,) = classify(Profile(tool="ncu", source="t", kernels=[timed]))
    assert d.findings == []
    assert [(s.rule, s.reason) for s in d.skipped] == [
        ("all rules", "not profiled in depth (1.8 % of GPU time)")
    ]
