"""The accept rule, step by step, and the targeted-metric check on real before/after profiles."""

from __future__ import annotations

import pytest

import perfagent
from knowledge.transforms import transform
from perfagent.optimize.measure import BuildOutcome, Timing, profile_timing, relative_to_start
from perfagent.optimize.outcome import MetricCheck, check_metric, decide
from perfagent.records import NOT_TIMED, CandidateOutcome, VerificationSummary
from tests.optimize.helpers import REPORTS

BUILT = BuildOutcome(True, "nvcc -cubin")
PASS = VerificationSummary(verdict="pass", reason="every check passed", device="cuda:0 (H100)")


def faster(speedup: float = 1.5, **kw: object) -> Timing:
    fields: dict[str, object] = {
        "time_s": 1e-3 / speedup,
        "time_s_before": 1e-3,
        "speedup": speedup,
        "noise_threshold": 0.02,
        "significant": True,
        "verdict": "faster",
        "timer": "cuda-events",
    }
    fields.update(kw)
    return Timing(**fields)  # type: ignore[arg-type]


MOVED = MetricCheck("metrics.shared_bank_conflict_pct", "down", 94.0, 0.0, True)


def test_accepted_when_correct_faster_and_metric_moved() -> None:
    d = decide(build=BUILT, verification=PASS, timing=faster(), metric=MOVED)
    assert d.accepted and d.verdict == "accepted" and d.route == "targeted" and not d.improved
    assert "another route" not in d.reason
    assert "1.5x faster" in d.reason and "metrics.shared_bank_conflict_pct 94 -> 0" in d.reason
    assert [c.name for c in d.checks] == ["build", "correctness", "speed-up", "targeted-metric"]


@pytest.mark.parametrize(
    ("kwargs", "verdict", "fragment"),
    [
        (
            {"build": BuildOutcome(False, "error: identifier x is undefined")},
            "build-failed",
            "build failed: error: identifier",
        ),
        (
            {"verification": VerificationSummary(verdict="fail", reason="correctness: 12 elements differ")},
            "incorrect",
            "incorrect: correctness: 12 elements differ",
        ),
        (
            {"verification": VerificationSummary(verdict="inconclusive", reason="degenerate reference")},
            "inconclusive",
            "inconclusive",
        ),
        (
            {
                "verification": VerificationSummary(
                    verdict="not-verified", reason="compiles, but not verified (no GPU)"
                )
            },
            "not-verified",
            "speed-up not measured",
        ),
        ({"timing": None}, "not-timed", NOT_TIMED),
        ({"timing": Timing(error="the worker crashed")}, "error", "timing failed: the worker crashed"),
        ({"timing": faster(12.0, flags=["below-speed-of-light"])}, "implausible", "needs a human look"),
        (
            {"timing": faster(1.01, significant=False, verdict="no-change")},
            "not-faster",
            "not faster beyond noise",
        ),
        ({"timing": faster(0.8, verdict="slower")}, "not-faster", "slower"),
    ],
)
def test_every_rejection_says_why(kwargs: dict[str, object], verdict: str, fragment: str) -> None:
    args: dict[str, object] = {"build": BUILT, "verification": PASS, "timing": faster(), "metric": MOVED}
    args.update(kwargs)
    d = decide(**args)  # type: ignore[arg-type]
    assert not d.accepted and d.verdict == verdict and fragment in d.reason


UNMOVED = MetricCheck(
    "launch.waves_per_sm",
    "up",
    0.06061,
    0.06061,
    False,
    improved=["metrics.dram_throughput_pct 9.1 -> 15.2"],
)


def test_faster_with_metric_unmoved_is_won_by_another_route() -> None:
    """Found on a GEMV: 1.67x faster, verified, launch.waves_per_sm unchanged — an engineer keeps it."""
    d = decide(build=BUILT, verification=PASS, timing=faster(1.67), metric=UNMOVED)
    assert d.accepted and d.verdict == "accepted" and d.route == "another"
    assert "won by another route: launch.waves_per_sm unmoved (0.06061 -> 0.06061" in d.reason
    assert d.improved == ["kernel time 1.67x faster (cuda-events)", "metrics.dram_throughput_pct 9.1 -> 15.2"]
    assert "improved: kernel time 1.67x faster" in d.reason and "did not confirm" in d.reason
    by = {c.name: c for c in d.checks}
    assert by["targeted-metric"].severity == "warning" and not by["targeted-metric"].passed
    assert by["bottleneck-evidence"].passed


def test_metric_moved_the_wrong_way_is_kept_and_says_so() -> None:
    wrong = MetricCheck("metrics.dram_throughput_pct", "up", 85.06, 76.29, False)
    d = decide(build=BUILT, verification=PASS, timing=faster(1.68), metric=wrong)
    assert d.accepted and d.route == "another"
    assert "metrics.dram_throughput_pct moved the wrong way (85.06 -> 76.29, expected up)" in d.reason


@pytest.mark.parametrize(
    "timing",
    [faster(1.01, significant=False, verdict="no-change"), faster(1.03, significant=False)],
)
def test_win_within_noise_is_still_rejected_whatever_the_metric(timing: Timing) -> None:
    d = decide(build=BUILT, verification=PASS, timing=timing, metric=UNMOVED)
    assert not d.accepted and d.verdict == "not-faster" and d.route is None


def test_records_without_a_route_still_load() -> None:
    """A candidate saved before routes existed (verdict 'metric-unmoved', no route/improved keys)."""
    old = {
        "id": "c1",
        "rewrite_id": "launch-config/recipes/abc",
        "backend": "recipes",
        "transform": "launch-config",
        "iteration": 1,
        "verification": {"verdict": "pass", "reason": "ok"},
        "verdict": "metric-unmoved",
        "accepted": False,
        "reason": "correct and 1.37x faster, but the targeted metric did not move",
        "file": "k.cu",
    }
    c = CandidateOutcome.model_validate(old)
    assert c.route is None and c.improved == [] and c.verdict == "metric-unmoved"


def test_not_timed_is_the_exact_sentence() -> None:
    assert NOT_TIMED == "correct but not timed (no GPU): speed-up not measured"
    assert decide(build=BUILT, verification=PASS, timing=None, metric=None).reason == NOT_TIMED


def test_must_beat_the_best_so_far_beyond_noise() -> None:
    d = decide(
        build=BUILT, verification=PASS, timing=faster(1.5), metric=MOVED, best_speedup=1.49, best_id="c2"
    )
    assert not d.accepted and "the best so far (c2, 1.49x) beyond noise" in d.reason
    assert decide(
        build=BUILT, verification=PASS, timing=faster(1.8), metric=MOVED, best_speedup=1.49
    ).accepted


def test_metric_not_measurable_accepts_and_says_so() -> None:
    d = decide(
        build=BUILT,
        verification=PASS,
        timing=faster(),
        metric=MetricCheck("occupancy.achieved_pct", "up", note="ncu cannot run here"),
    )
    assert d.accepted and "occupancy.achieved_pct not checked: ncu cannot run here" in d.reason
    assert d.route == "unchecked"


def test_metric_check_on_recorded_slow_and_fixed_kernels() -> None:
    record = perfagent.diagnose(REPORTS / "02_transpose_bank_conflicts.ncu-rep")
    by = {k.profile.base_name: k.profile for k in record.kernels}
    slow, fixed = by["transpose_smem_conflicts"], by["transpose_smem_padded"]
    moved = check_metric(transform("smem-padding"), slow, fixed)
    assert moved.metric == "metrics.shared_bank_conflict_pct" and moved.direction == "down"
    assert moved.before is not None and moved.after is not None and moved.before > 50 > moved.after
    assert moved.moved is True
    assert check_metric(transform("smem-padding"), fixed, slow).moved is False
    missing = check_metric(transform("smem-padding"), slow, None, unavailable="no GPU")
    assert missing.moved is None and missing.note == "no GPU"


def test_unmoved_metric_names_the_bottleneck_evidence_that_improved() -> None:
    """launch-config's proxy on the recorded transpose pair: the launch is the same, the conflicts fell."""
    record = perfagent.diagnose(REPORTS / "02_transpose_bank_conflicts.ncu-rep")
    by = {k.profile.base_name: k.profile for k in record.kernels}
    slow, fixed = by["transpose_smem_conflicts"], by["transpose_smem_padded"]
    check = check_metric(transform("launch-config"), slow, fixed, category="shared-bank-conflicts")
    assert check.moved is False
    names = [line.split()[0] for line in check.improved]
    assert "metrics.shared_bank_conflict_pct" in names and "metrics.duration_s" in names
    assert check.metric not in names
    # The reverse pair got worse on every count: nothing to name.
    assert not check_metric(
        transform("launch-config"), fixed, slow, category="shared-bank-conflicts"
    ).improved


def test_profile_timing_noise_from_repeated_baseline() -> None:
    t = profile_timing([1.00e-3, 1.02e-3], 0.5e-3)
    assert t.significant and t.verdict == "faster" and t.timer == "ncu"
    assert t.noise_threshold == pytest.approx(2 * abs(1.00 / 1.02 - 1))
    assert profile_timing([1.00e-3, 1.00e-3], 0.995e-3).verdict == "no-change"


def test_excessive_speedup_is_accepted_but_flagged_for_review() -> None:
    """Found on the H200: a Triton config sweep made a 16x16x16 matmul 21x faster — real, verified, kept."""
    d = decide(
        build=BuildOutcome(ok=True, detail="ok"),
        verification=VerificationSummary(verdict="pass", reason="pass"),
        timing=faster(21.2, flags=["excessive-speedup"]),
        metric=None,
    )
    assert d.accepted and "FLAGGED FOR REVIEW" in d.reason
    assert any(c.name == "plausibility" and c.severity == "warning" for c in d.checks)


def test_a_kernelbench_candidate_is_judged_against_the_starting_modelnew() -> None:
    """Seen on an H100 (tests/gpu/smem_tiling_h100.md): a tiled matmul ModelNew 1.69x faster than the slow
    solution it came from, but still 0.1x of PyTorch's cuBLAS Model, was rejected as "slower" — the verdict
    was the comparison with Model while the speed-up had been divided by the start's."""
    against_model = Timing(
        time_s=1.0e-3,
        time_s_before=0.1e-3,
        speedup=0.1,
        noise_threshold=0.02,
        significant=True,
        verdict="slower",
    )
    t = relative_to_start(against_model, start_speedup=0.1 / 1.69, start_time_s=1.69e-3)
    assert t.speedup == pytest.approx(1.69) and t.significant and t.verdict == "faster"
    assert t.time_s_before == pytest.approx(1.69e-3)
    d = decide(build=BUILT, verification=PASS, timing=t, metric=None)
    assert d.accepted, d.reason
    within_noise = Timing(
        time_s=1e-3, speedup=0.101, noise_threshold=0.02, significant=True, verdict="slower"
    )
    assert relative_to_start(within_noise, start_speedup=0.1, start_time_s=1e-3).verdict == "no-change"
    slower = Timing(time_s=1e-3, speedup=0.05, noise_threshold=0.02, significant=True, verdict="slower")
    assert relative_to_start(slower, start_speedup=0.1, start_time_s=1e-3).verdict == "slower"
