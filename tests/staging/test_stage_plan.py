"""Stage 2's pass accounting (perfagent.staging.plan): when tier B is folded into tier A's run, on the stage-1
figures recorded on an H200 (tests/gpu/h200x4_2026-11-26d/profcost/: the transformer block and the unseen
long tail, their kernel shares, launch counts and stage 1's wall time) and on the suite's recorded report."""

from __future__ import annotations

import re
from itertools import count
from pathlib import Path

import pytest
from test_staged_profile import NEEDS_B, SUITE, TOP_90, RecordedNcu

from perfagent.classifier import classify
from perfagent.staging.plan import TIER_PASSES, plan_stage2
from perfagent.staging.run import FOLDED_NOT_NEEDED, staged_profile
from perfagent.staging.select import select_kernels
from profilers.base import ProfileRequest
from profilers.model import KernelProfile, LaunchConfig, Metrics, Profile
from profilers.ncu.report_reader import read_ncu_rep

PROFCOST = Path(__file__).resolve().parents[1] / "gpu" / "h200x4_2026-11-26d" / "profcost"
ROW = re.compile(r"^\| (\S+) \| ([\d.]+) % \| duration")
TIMED = re.compile(r"stage 1 timed (\d+) launch\(es\) of (\d+) kernel configuration")
STAGE1_ALONE = re.compile(r"^\| stage 1 alone[^|]*\| \d+ \| ([\d.]+) \|")
GPU_TIME_S = 0.01
"""The programs' summed kernel time, s: not in the summaries; both run in under 0.5 s alone, and the plan
reads it only as a correction to stage 1's wall time (8.09 s and 4.72 s)."""


def recorded_stage1(summary: str, section: str) -> tuple[Profile, float]:
    """Stage 1's table (shares from the staged kernel table, launch counts from its note) and its wall
    time, as the summary of one workload records them."""
    text = (PROFCOST / summary).read_text().split(f"### {section} ")[1].split("### ")[0]
    rows = [(m.group(1), float(m.group(2)) / 100) for m in map(ROW.match, text.splitlines()) if m]
    launches, configs = map(int, TIMED.search(text).groups())  # type: ignore[union-attr]
    wall = float(next(m.group(1) for m in map(STAGE1_ALONE.match, text.splitlines()) if m))
    assert len(rows) == configs
    extra = launches - configs  # the repeated launches, given to the largest configuration
    grid = count(1)
    kernels = [
        KernelProfile(
            name=name,
            base_name=name,
            invocations=1 + (extra if i == 0 else 0),
            total_duration_s=share * GPU_TIME_S,
            launch=LaunchConfig(grid=(next(grid), 1, 1), block=(128, 1, 1)),
            metrics=Metrics(duration_s=share * GPU_TIME_S),
            tiers=["duration"],
        )
        for i, (name, share) in enumerate(rows)
    ]
    return Profile(tool="ncu", source=section, kernels=kernels), wall


def test_a_pytorch_script_folds_tier_b_into_tier_as_run() -> None:
    times, wall = recorded_stage1("suite_torch_summary.md", "torch")
    plan = plan_stage2(select_kernels(times), wall)
    assert plan.chosen == 6 and plan.stage1_launches == 22
    assert plan.start_s > 7.0  # 8.09 s of stage 1 is nearly all the program's start under ncu
    assert plan.fold_tier_b and plan.tier_a_run() == ("A", "B")
    # the recorded run: 3 program runs, tier B on 5 of the 6; folded: 2 runs, 8 more passes in all
    assert plan.passes(5) == (2, 22 + 6 * (TIER_PASSES["A"] + TIER_PASSES["B"]))
    separate = plan_stage2(select_kernels(times), 0.0)
    assert not separate.fold_tier_b
    assert separate.passes(5) == (3, 22 + 6 * TIER_PASSES["A"] + 5 * TIER_PASSES["B"])
    assert "tier B collected in tier A's run" in plan.why()


def test_hundreds_of_kernels_in_depth_keep_tier_b_in_its_own_run() -> None:
    times, wall = recorded_stage1("longtail_unseen_summary.md", "unseen")
    default = plan_stage2(select_kernels(times), wall)
    everything = plan_stage2(select_kernels(times, all_kernels=True), wall)
    assert default.stage1_launches == 107 and 1.0 < default.start_s < 1.6
    assert default.chosen == 6 and default.fold_tier_b  # 6 x 8 passes ~0.7 s < one start ~1.4 s
    assert everything.chosen == 56 and not everything.fold_tier_b  # 56 x 8 passes ~6.7 s
    assert everything.passes(None)[0] == 3


def test_a_long_kernel_makes_the_fold_cost_its_replays() -> None:
    suite = read_ncu_rep(SUITE)
    selection = select_kernels(suite)
    replays = sum(TIER_PASSES["B"] * t.time_s for t in selection.in_depth)  # sgemm_naive: 35 ms x 8
    plan = plan_stage2(selection, 2.0)
    assert plan.fold_extra_s == pytest.approx(replays + 5 * TIER_PASSES["B"] * 0.015)
    assert plan.fold_extra_s > 0.6 and plan.start_s == pytest.approx(2.0 - 20 * 0.03 - selection.total_s)


class Clock:
    """A clock whose every reading advances by ``step`` seconds: stage 1 'takes' ``step``."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_a_folded_stage_2_is_one_run_and_keeps_the_classification(tmp_path: Path) -> None:
    suite = read_ncu_rep(SUITE)
    ncu = RecordedNcu(suite)
    request = ProfileRequest(workdir=tmp_path, command=["./prog"])
    staged = staged_profile(ncu, request, progress=lambda _: None, clock=Clock(8.09))
    stage1, folded = ncu.requests  # no third (tier-B) run
    assert stage1 == request and folded.metric_tiers == ("A", "B") and folded.launch_count == 1
    tiers = {k.base_name: (k.tiers, k.tier_reason or "") for k in staged.kernels}
    assert all(tiers[n][0] == ["duration", "A", "B"] for n in TOP_90)
    assert all("latency-bound" in tiers[n][1] or "compute-bound" in tiers[n][1] for n in NEEDS_B)
    assert all(FOLDED_NOT_NEEDED in tiers[n][1] for n in set(TOP_90) - set(NEEDS_B))
    shallow = [why for t, why in tiers.values() if t == ["duration"]]
    assert len(shallow) == 15 and all(
        re.fullmatch(r"not profiled in depth \(\d\.\d % of GPU time\)", w) for w in shallow
    )
    assert any(n.startswith("stage plan: tier B collected in tier A's run") for n in staged.notes)
    before = {d.profile.base_name: [f.category for f in d.findings] for d in classify(suite)}
    after = {d.profile.base_name: [f.category for f in d.findings] for d in classify(staged)}
    assert all(after[n] == before[n] for n in TOP_90)


def test_a_quick_stage_1_keeps_tier_b_in_its_own_run(tmp_path: Path) -> None:
    ncu = RecordedNcu(read_ncu_rep(SUITE))
    staged = staged_profile(
        ncu, ProfileRequest(workdir=tmp_path, command=["./prog"]), progress=lambda _: None, clock=Clock(0.6)
    )
    assert [r.metric_tiers for r in ncu.requests] == [("A", "B"), ("A",), ("B",)]  # stage 1's default, A, B
    assert any(n.startswith("stage plan: tier B in a second run") for n in staged.notes)
