"""Staged profiling on recorded data: which kernels get which tiers, the ncu requests of each stage, the
assembled profile and its record fields. The stage results are cut from the suite example's recorded
report (examples/reports/suite.ncu-rep: 20 kernels, H200, ncu 2025.3.1), as each stage's run records them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from perfagent.classifier import classify
from perfagent.records import RunRecord
from perfagent.staging.run import can_stage, staged_profile
from perfagent.staging.select import select_kernels
from profilers.base import ProfileRequest
from profilers.errors import BadReport, NoKernelsProfiled
from profilers.model import KernelProfile, Metrics, Profile
from profilers.ncu.profiler import NcuProfiler
from profilers.ncu.report_reader import read_ncu_rep
from profilers.ncu.tiers import fields_provided

SUITE = Path(__file__).resolve().parents[2] / "examples" / "reports" / "suite.ncu-rep"
TOP_90 = [
    "sgemm_naive",
    "histogram_global_atomics",
    "smooth_ring_spill",
    "sgemm_smem_tiled",
    "saxpy_gridstride_small_grid",
]
NEEDS_B = ["histogram_global_atomics", "sgemm_smem_tiled"]


def keep(kernel: KernelProfile, tiers: tuple[str, ...]) -> KernelProfile:
    """The kernel as a run collecting only ``tiers`` records it (other tiers' keys absent)."""
    wanted = fields_provided(tiers)  # type: ignore[arg-type]
    metrics = kernel.metrics.model_dump()
    for name, value in list(metrics.items()):
        if isinstance(value, dict):
            metrics[name] = {k: v for k, v in value.items() if f"metrics.{name}.{k}" in wanted}
        elif f"metrics.{name}" not in wanted:
            metrics[name] = None
    return kernel.model_copy(update={"metrics": Metrics.model_validate(metrics)})


class RecordedNcu(NcuProfiler):
    """ncu whose runs return the recorded suite report's launches, cut to what each stage collects."""

    def __init__(self, recorded: Profile) -> None:
        super().__init__(ncu="/nonexistent/ncu")
        self.recorded = recorded
        self.requests: list[ProfileRequest] = []

    def time_launches(self, request: ProfileRequest) -> Profile:
        self.requests.append(request)
        kernels = [keep(k, ("duration",)) for k in self.recorded.kernels]
        return self.recorded.model_copy(update={"kernels": kernels, "notes": []})

    def profile(self, request: ProfileRequest) -> Profile:
        self.requests.append(request)
        pattern = re.compile(request.kernel_regex or "")
        kernels = [
            keep(k, request.metric_tiers) for k in self.recorded.kernels if pattern.search(k.base_name)
        ]
        return self.recorded.model_copy(update={"kernels": kernels, "notes": []})


@pytest.fixture(scope="module")
def suite() -> Profile:
    return read_ncu_rep(SUITE)


def test_the_kernels_making_90_percent_of_gpu_time_are_chosen(suite: Profile) -> None:
    selection = select_kernels(suite)
    assert [t.kernel.base_name for t in selection.in_depth] == TOP_90
    assert 0.90 <= selection.share_in_depth < 0.91  # 64.3 + 12.2 + 7.5 + 3.5 + 3.2 %
    assert len(selection.shallow) == 15
    assert selection.launch_skip == 0  # each kernel ran once: its only launch is the representative one
    assert selection.kernel_regex() == "(^|[: ])(" + "|".join(sorted(TOP_90)) + ")(<|\\(|$)"
    assert len(select_kernels(suite, all_kernels=True).in_depth) == 20
    assert [t.kernel.base_name for t in select_kernels(suite, share=0.5).in_depth] == ["sgemm_naive"]


def test_staged_run_requests_tier_a_for_the_top_kernels_and_tier_b_where_needed(
    suite: Profile, tmp_path: Path
) -> None:
    ncu = RecordedNcu(suite)
    request = ProfileRequest(workdir=tmp_path, command=["./prog"])
    assert can_stage(request)
    staged = staged_profile(ncu, request, progress=lambda _: None)
    stage1, tier_a, tier_b = ncu.requests
    assert stage1 == request
    assert (tier_a.kernel_regex, tier_a.metric_tiers, tier_a.per_launch_config, tier_a.launch_count) == (
        "(^|[: ])(" + "|".join(sorted(TOP_90)) + ")(<|\\(|$)",
        ("A",),
        True,
        1,
    )
    assert (tier_b.kernel_regex, tier_b.metric_tiers) == (
        "(^|[: ])(" + "|".join(NEEDS_B) + ")(<|\\(|$)",
        ("B",),
    )
    tiers = {k.base_name: k.tiers for k in staged.kernels}
    assert len(tiers) == 20
    assert {n for n, t in tiers.items() if t == ["duration", "A", "B"]} == set(NEEDS_B)
    assert {n for n, t in tiers.items() if t == ["duration", "A"]} == set(TOP_90) - set(NEEDS_B)
    assert sum(t == ["duration"] for t in tiers.values()) == 15
    assert staged.notes[0].startswith(
        "staged profiling: stage 1 timed 20 launch(es) of 20 kernel configuration(s)"
    )


def test_staged_classification_of_the_kernels_that_matter_is_unchanged(
    suite: Profile, tmp_path: Path
) -> None:
    staged = staged_profile(
        RecordedNcu(suite), ProfileRequest(workdir=tmp_path, command=["./prog"]), progress=lambda _: None
    )
    before = {d.profile.base_name: [f.category for f in d.findings] for d in classify(suite)}
    after = {d.profile.base_name: d for d in classify(staged)}
    for name in TOP_90:
        assert [f.category for f in after[name].findings] == before[name], name
    tail = after["particles_advance_soa"]
    assert tail.findings == []
    assert re.fullmatch(
        r"not profiled in depth \(0\.\d %% of GPU time\)".replace("%%", "%"), tail.skipped[0].reason
    )
    assert after["sgemm_naive"].share_of_total == pytest.approx(
        0.643, abs=0.001
    )  # of the whole program's time


def test_record_says_per_kernel_which_tier_and_why(suite: Profile, tmp_path: Path) -> None:
    staged = staged_profile(
        RecordedNcu(suite), ProfileRequest(workdir=tmp_path, command=["./prog"]), progress=lambda _: None
    )
    record = RunRecord(id="t", perfagent_version="0", target="prog", tool="ncu", kernels=classify(staged))
    saved = json.loads(record.model_dump_json())
    by_name = {k["profile"]["base_name"]: k["profile"] for k in saved["kernels"]}
    assert by_name["histogram_global_atomics"]["tiers"] == ["duration", "A", "B"]
    assert "latency-bound in tier A" in by_name["histogram_global_atomics"]["tier_reason"]
    assert by_name["sgemm_naive"]["tiers"] == ["duration", "A"]
    assert "tier B not needed" in by_name["sgemm_naive"]["tier_reason"]
    assert by_name["particles_advance_soa"]["tier_reason"].startswith("not profiled in depth")
    assert RunRecord.model_validate(saved) == record


def test_launches_the_user_chose_are_profiled_in_one_run(tmp_path: Path) -> None:
    for fields in ({"launch_count": 3}, {"launch_skip": 2}, {"full_set": True}, {"metric_tiers": ("A",)}):
        assert not can_stage(ProfileRequest(workdir=tmp_path, command=["./prog"], **fields))  # type: ignore[arg-type]


def test_reports_show_each_kernels_tiers_and_the_timed_only_kernels(suite: Profile, tmp_path: Path) -> None:
    from perfagent.render import OutputFormat, render

    staged = staged_profile(
        RecordedNcu(suite), ProfileRequest(workdir=tmp_path, command=["./prog"]), progress=lambda _: None
    )
    record = RunRecord(id="t", perfagent_version="0", target="prog", tool="ncu", kernels=classify(staged))
    text = render(record, OutputFormat.TEXT, width=200)
    assert (
        "Profiled   tiers A+B — tier A: one of the kernels making 90.7 % of GPU time (12.2 % itself)" in text
    )
    assert text.count("Not diagnosed: not profiled in depth (") == 15
    assert "not profiled in depth (0.1 % of GPU time)" in render(record, OutputFormat.MARKDOWN)


class QuirkyNcu(RecordedNcu):
    """A stage that fails the way ncu does (an unreadable stage-1 table, a stage-2 filter matching nothing)."""

    def __init__(self, recorded: Profile, failing: str) -> None:
        super().__init__(recorded)
        self.failing = failing

    def time_launches(self, request: ProfileRequest) -> Profile:
        if self.failing == "stage 1":
            raise BadReport("stage 1 printed no launch table")
        return super().time_launches(request)

    def profile(self, request: ProfileRequest) -> Profile:
        if request.metric_tiers == (self.failing,):
            raise NoKernelsProfiled("ncu profiled no kernel")
        return super().profile(request)


@pytest.mark.parametrize("failing", ["stage 1", "A"])
def test_a_failed_stage_falls_back_to_one_targeted_run(suite: Profile, tmp_path: Path, failing: str) -> None:
    ncu = QuirkyNcu(suite, failing)
    request = ProfileRequest(workdir=tmp_path, command=["./prog"])
    said: list[str] = []
    profile = staged_profile(ncu, request, progress=said.append)
    assert ncu.requests[-1] == request  # the one targeted run over every launch
    assert len(profile.kernels) == 20 and all(k.tiers == [] for k in profile.kernels)
    assert "one targeted run instead" in said[-1]


def test_a_tier_b_run_matching_nothing_leaves_stalls_not_collected(suite: Profile, tmp_path: Path) -> None:
    staged = staged_profile(
        QuirkyNcu(suite, "B"), ProfileRequest(workdir=tmp_path, command=["./prog"]), progress=lambda _: None
    )
    histogram = next(k for k in staged.kernels if k.base_name == "histogram_global_atomics")
    assert histogram.tiers == ["duration", "A"] and "stalls are not collected" in (
        histogram.tier_reason or ""
    )
    (d,) = [d for d in classify(staged) if d.profile.base_name == "histogram_global_atomics"]
    assert any(s.rule == "latency_bound" and s.reason.startswith("not collected") for s in d.skipped)
