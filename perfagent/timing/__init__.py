"""Timing: CUDA-event benchmarks with warm-up, L2 flush, interleaving, medians, IQR and a noise threshold.

``bench(target, candidate=None, ...)`` → ``BenchResult`` (``bench``), ``bench_batch(target, candidates)``
→ one per candidate from one worker; the worker side is the
``bench_job`` (run in ``perfagent.sandbox``'s worker) with its ``runners``; ``stats`` holds the
statistics and ``plausibility`` the speed-of-light checks.
Importing this package does not import torch.
"""

from __future__ import annotations

from perfagent.timing.bench import bench, bench_batch
from perfagent.timing.models import BenchEntry, BenchResult, Comparison, RooflineEstimate, TimingStats

__all__ = [
    "BenchEntry",
    "BenchResult",
    "Comparison",
    "RooflineEstimate",
    "TimingStats",
    "bench",
    "bench_batch",
]
