"""GPU: timing rounds from a time budget (r23-cost2) on a real device.

``python -m pytest -m gpu tests/gpu/test_timing_budget_gpu.py -s``. unseen2/28's original takes ~22 ms a
launch (its round, the original twice and the fix, ~45 ms): the 0.5 s budget stops it after ~11 of the 50
rounds asked for, and the fix is still significantly faster; a copy kernel of a fraction of a millisecond
keeps all 50.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.timing import bench
from perfagent.timing.render import render_text
from profilers.settings import TIMING

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_torch_and_core")]

REPO = Path(__file__).resolve().parents[2]
CROSS_ENTROPY = REPO / "benchmarks" / "unseen2" / "28_crossentropy_fused_row_per_thread"
COPY = REPO / "examples" / "cuda" / "08_vector_copy_near_peak"


def test_a_slow_original_is_timed_in_fewer_rounds_and_the_fix_still_wins() -> None:
    result = bench(CROSS_ENTROPY / "slow.cu", CROSS_ENTROPY / "fixed.cu", device="cuda", runs=50, warmup=3)
    print("\n[bench unseen2/28 slow vs fixed, 0.5 s budget]\n" + render_text(result))
    assert TIMING.min_runs <= result.runs < 50 and result.runs_asked == 50
    assert result.comparison is not None and result.comparison.significant
    assert result.comparison.speedup > 10


def test_a_fast_kernel_keeps_every_round() -> None:
    result = bench(COPY / "slow.cu", device="cuda", runs=50, warmup=5)
    print("\n[bench 08_vector_copy_near_peak, 0.5 s budget]\n" + render_text(result))
    assert result.runs == 50 and result.runs_asked == 50
