"""One way the recipes' GPU tests time a raw kernel launch: CUDA events around ``reps`` launches after one
warm-up, in µs per launch (data for BENCHMARKS.md, never asserted on)."""

from __future__ import annotations


def time_launches(cp: object, fn: object, reps: int = 20) -> float:
    start, stop = cp.cuda.Event(), cp.cuda.Event()  # type: ignore[attr-defined]
    fn()  # type: ignore[operator]
    start.record()
    for _ in range(reps):
        fn()  # type: ignore[operator]
    stop.record()
    stop.synchronize()
    return float(cp.cuda.get_elapsed_time(start, stop)) * 1000 / reps  # type: ignore[attr-defined]
