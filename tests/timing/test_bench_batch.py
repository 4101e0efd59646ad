"""``bench_batch``: several candidates timed in one worker, one ``BenchResult`` each, in their order.

Real worker subprocesses on the CPU (perf_counter timing); the optimize loop's use of it is in
``tests/optimize/test_batch_timing.py`` and the GPU check in ``tests/gpu/test_bench_batch_gpu.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.timing import bench, bench_batch
from profilers.core_errors import BadInput, VerificationFailed

CANDIDATES = Path(__file__).resolve().parents[1] / "verify" / "candidates"
ADD = CANDIDATES / "problem_add.py"

SAME = """import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        return a + b
"""

SLOW = """import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        out = a + b
        for _ in range(400):  # the same sum, recomputed: several hundred times the work
            out = a + b
        return out
"""

RAISES = """import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        raise RuntimeError("boom")
"""


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_each_candidate_gets_its_own_result_in_order(tmp_path: Path) -> None:
    same, slow = _write(tmp_path, "same.py", SAME), _write(tmp_path, "slow.py", SLOW)
    results = bench_batch(ADD, [slow, same, slow], device="cpu", runs=9, warmup=1)
    assert len(results) == 3
    named = [r.candidate.workload if r.candidate else "" for r in results]
    assert ["slow.py" in named[0], "same.py" in named[1], "slow.py" in named[2]] == [True] * 3, named
    speedups = [r.comparison.speedup for r in results if r.comparison]
    assert len(speedups) == 3
    assert speedups[0] < 0.2 and speedups[2] < 0.2  # the slow one, twice
    assert speedups[1] > 0.3  # the same sum: about the baseline's time
    # one shared baseline: every result reads the same baseline series
    base = {tuple(r.baseline.timing.samples_s) for r in results}
    assert len(base) == 1
    assert all(r.timer == "perf_counter" and r.runs == 9 for r in results)
    assert all(r.candidate is not None and r.candidate.timing.n == 9 for r in results)


def test_one_candidate_reads_as_bench(tmp_path: Path) -> None:
    same = _write(tmp_path, "same.py", SAME)
    [batched] = bench_batch(ADD, [same], device="cpu", runs=5, warmup=1)
    alone = bench(ADD, same, device="cpu", runs=5, warmup=1)
    assert batched.candidate is not None and alone.candidate is not None
    assert batched.candidate.workload == alone.candidate.workload
    assert batched.baseline_repeat is not None and batched.baseline_repeat.n == 5


def test_a_failing_candidate_fails_the_batch(tmp_path: Path) -> None:
    same, raises = _write(tmp_path, "same.py", SAME), _write(tmp_path, "raises.py", RAISES)
    with pytest.raises(VerificationFailed, match="boom"):
        bench_batch(ADD, [same, raises], device="cpu", runs=3, warmup=0)


def test_no_candidates_is_bad_input() -> None:
    with pytest.raises(BadInput, match="at least one candidate"):
        bench_batch(ADD, [], device="cpu", runs=3)
