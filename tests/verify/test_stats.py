"""Timing statistics, noise threshold, significance and plausibility on synthetic samples."""

from __future__ import annotations

import random

import pytest

from perfagent.timing.bench import build_result
from perfagent.timing.models import TimingSamples
from perfagent.timing.plausibility import flags_for, peak_flops, roofline, speedup_flags
from perfagent.timing.stats import compare, noise_threshold, percentile, summarize
from perfagent.workloads.model import KernelBenchModel
from profilers.model import DevicePeaks

H100ISH = DevicePeaks(
    dram_bytes_per_s=3.35e12, flops_per_s={"fp32": 67e12, "tensor": 989e12, "fp64": 34e12}, source="test"
)


def noisy(center: float, spread: float, n: int = 100, seed: int = 0) -> list[float]:
    rng = random.Random(seed)
    return [center * (1 + rng.uniform(-spread, spread)) for _ in range(n)]


def test_percentile_and_summary() -> None:
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([5], 75) == 5
    s = summarize("baseline", [1.0, 2.0, 3.0, 4.0, 100.0])
    assert (s.median_s, s.p25_s, s.p75_s, s.iqr_s, s.min_s, s.max_s, s.n) == (
        3.0,
        2.0,
        4.0,
        2.0,
        1.0,
        100.0,
        5,
    )
    with pytest.raises(ValueError):
        summarize("empty", [])


def test_noise_threshold_from_repeated_baseline() -> None:
    base, repeat = noisy(1e-3, 0.01, seed=1), noisy(1e-3, 0.01, seed=2)
    threshold, drift = noise_threshold(base, repeat)
    assert drift < 0.01
    assert 0.01 <= threshold < 0.03
    # a drifting machine: the second baseline series runs 10 % slower -> the threshold grows
    threshold2, drift2 = noise_threshold(base, noisy(1.1e-3, 0.01, seed=3))
    assert drift2 == pytest.approx(0.09, abs=0.01) and threshold2 >= 2 * drift2
    # no repeat: the halves of the baseline stand in
    t3, _ = noise_threshold(base, [])
    assert t3 >= 0.01


def test_real_speedup_is_significant() -> None:
    c = compare(noisy(1e-3, 0.02, seed=1), noisy(1e-3, 0.02, seed=2), noisy(0.5e-3, 0.02, seed=3))
    assert c.speedup == pytest.approx(2.0, rel=0.03)
    assert c.significant and c.verdict == "faster"


def test_slowdown_is_significant_too() -> None:
    c = compare(noisy(1e-3, 0.02, seed=1), noisy(1e-3, 0.02, seed=2), noisy(5e-3, 0.02, seed=3))
    assert c.speedup == pytest.approx(0.2, rel=0.05) and c.significant and c.verdict == "slower"


def test_change_within_noise_is_not_significant() -> None:
    # 3 % "faster" on a machine whose two baseline runs differ by 5 %
    c = compare(noisy(1e-3, 0.05, seed=1), noisy(1.05e-3, 0.05, seed=2), noisy(0.995e-3, 0.05, seed=3))
    assert not c.significant and c.verdict == "no-change"
    assert c.noise_threshold >= 0.05


def test_same_code_is_no_change() -> None:
    samples = noisy(2e-3, 0.03, n=300, seed=7)
    c = compare(samples[:100], samples[100:200], samples[200:])
    assert not c.significant and abs(c.speedup - 1) < 0.02


def test_roofline_and_plausibility() -> None:
    # 1 GiB moved in 0.5 ms would be 2 TB/s on a 3.35 TB/s part: 64 % of the roofline, plausible
    nbytes = 2**30
    est = roofline(0.0, float(nbytes), 0.5e-3 * 1.0737, H100ISH)
    assert est.bound == "memory" and est.sol_time_s == pytest.approx(nbytes / 3.35e12)
    assert 50 < (est.pct_of_roofline or 0) < 100
    assert flags_for(est, 0.5e-3 * 1.0737) == []
    fast = roofline(0.0, float(nbytes), 0.1e-3, H100ISH)
    assert set(flags_for(fast, 0.1e-3)) == {"below-speed-of-light", "above-peak-bandwidth"}
    compute = roofline(2e12, 1e6, 0.01, H100ISH, "fp32")
    assert compute.bound == "compute" and compute.peak_flops_per_s == 989e12
    assert peak_flops(H100ISH, "fp64") == 34e12
    assert speedup_flags(12.0) == ["excessive-speedup"] and speedup_flags(3.0) == []
    assert roofline(1.0, 1.0, 1.0, None).sol_time_s is None


def test_build_result_flags_excessive_and_cpu() -> None:
    ref = KernelBenchModel(path="/x/p.py", class_name="Model")
    cand = KernelBenchModel(path="/x/c.py", class_name="ModelNew")
    gpu = TimingSamples(
        baseline=noisy(1e-3, 0.01, seed=1),
        baseline_repeat=noisy(1e-3, 0.01, seed=2),
        candidate=noisy(0.05e-3, 0.01, seed=3),
        timer="cuda-events",
        device="cuda",
        device_name="NVIDIA H100 80GB HBM3",
        baseline_bytes=1e9,
        candidate_bytes=1e9,
    )
    r = build_result(gpu, ref, cand, runs=100, warmup=10, peaks=H100ISH)
    assert r.comparison is not None and r.comparison.speedup == pytest.approx(20, rel=0.05)
    assert "excessive-speedup" in r.comparison.plausibility
    assert "below-speed-of-light" in r.comparison.plausibility  # 1 GB in 50 us is 20 TB/s
    # faster than the hardware allows: the timing fails (not only flagged); > 10x alone is only flagged
    assert "below-speed-of-light" in r.implausible and "excessive-speedup" not in r.implausible
    assert any(n.startswith("FAIL implausible: below-speed-of-light") for n in r.notes)
    # a flag that does not fail the result is left for review, after the failure's note
    review = [n for n in r.notes if n.startswith("flagged for review:")]
    assert len(review) == 1 and "excessive-speedup" in review[0] and "below-speed-of-light" not in review[0]
    assert r.flags == list(dict.fromkeys(r.flags))  # each flag once
    honest = build_result(
        gpu.model_copy(update={"candidate": noisy(0.9e-3, 0.01, seed=3)}),
        ref,
        cand,
        runs=100,
        warmup=10,
        peaks=H100ISH,
    )
    assert honest.implausible == []
    assert r.baseline.roofline is not None and r.baseline.roofline.pct_of_roofline is not None
    cpu = gpu.model_copy(update={"timer": "perf_counter", "device": "cpu"})
    r2 = build_result(cpu, ref, cand, runs=100, warmup=10, peaks=H100ISH)
    assert (
        "cpu-timing" in r2.flags
        and r2.baseline.roofline is not None
        and r2.baseline.roofline.sol_time_s is None
    )
    alone = gpu.model_copy(update={"candidate": None})
    no_peaks = build_result(alone, ref, None, runs=100, warmup=10, peaks=None)
    assert "no-roofline" in no_peaks.flags and no_peaks.comparison is None


def test_overhang_check_flags_work_after_the_end_event() -> None:
    from perfagent.timing.bench_job import overhang_check

    base_overhang = noisy(12e-6, 0.2, seed=1)  # host sync latency only
    # honest candidate: same latency, its own time inside the interval
    assert overhang_check(base_overhang, noisy(13e-6, 0.2, seed=2), noisy(150e-6, 0.05)) is None
    # side stream: ~0 s inside the interval, 200 µs of work after it
    failed = overhang_check(base_overhang, noisy(212e-6, 0.05, seed=3), noisy(3e-6, 0.1))
    assert failed is not None and failed.name == "runtime:work-after-end-event" and not failed.passed
    assert "after the candidate's end event" in failed.detail
    assert overhang_check([], [1.0], [1.0]) is None
