"""GPU: an iteration's launch-spec candidates verified and timed in one worker (``optimize.together``).

``python -m pytest -m gpu tests/gpu/test_iteration_worker_gpu.py -s``. A candidate that writes to an
illegal address (a sticky CUDA error: the context is unusable after it) is charged with it and the
candidate after it is verified in a new worker; a batch that all passes is timed in the same worker.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from perfagent.optimize import measure, together
from perfagent.workloads.detect import resolve

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_torch_and_core")]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cuda" / "08_vector_copy_near_peak"
ILLEGAL = "    if (tid == 0) { ((float *)16)[0] = 1.0f; }  // an illegal address: a sticky CUDA error\n"
SCALAR = """extern "C" __global__ void scale_copy_float4(const float *__restrict__ in, float *__restrict__ out, int n, float a)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (size_t)n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = a * in[i];
}
"""


def _candidates(tmp_path: Path, texts: list[str]) -> tuple[object, list[tuple[Path, Path | None]]]:
    wl = resolve(EXAMPLE / "slow.cu")
    pairs = []
    for i, text in enumerate(texts, 1):
        folder = tmp_path / f"c{i}"
        folder.mkdir()
        source = folder / measure.CANDIDATE_CU
        source.write_text(text)
        pairs.append((source, measure.candidate_spec(wl, folder, {})))
    return wl, pairs


def _run(wl: object, pairs: list[tuple[Path, Path | None]]) -> together.Together:
    started = time.monotonic()
    got = together.verify_and_time(
        wl,  # type: ignore[arg-type]
        pairs,
        seeds=2,
        seed=11,
        runs=20,
        warmup=5,
        timeout_s=60.0,
        compile_timeout_s=120.0,
    )
    print(
        f"{len(pairs)} candidates: {got.workers} worker(s), verify {got.verify_s} s, time {got.time_s} s, "
        f"wall {time.monotonic() - started:.1f} s"
    )
    return got


def test_a_batch_that_passes_is_verified_and_timed_in_one_worker(tmp_path: Path) -> None:
    original = (EXAMPLE / "slow.cu").read_text()
    wl, pairs = _candidates(tmp_path, [original, SCALAR])
    got = _run(wl, pairs)
    assert [v.verdict for v in got.verifications] == ["pass", "pass"] and got.workers == 1
    assert got.timings is not None and all(t.speedup and t.speedup > 0 for t in got.timings)
    assert got.time_s > 0 and all(s > 0 for s in got.verify_s)
    print("speed-ups:", [round(t.speedup or 0, 3) for t in got.timings])


def test_an_illegal_address_is_charged_to_its_candidate_and_the_next_runs_in_a_new_worker(
    tmp_path: Path,
) -> None:
    original = (EXAMPLE / "slow.cu").read_text()
    bad = original.replace("    const size_t n4", ILLEGAL + "    const size_t n4", 1)
    assert bad != original
    wl, pairs = _candidates(tmp_path, [original, bad, SCALAR])
    got = _run(wl, pairs)
    assert [v.verdict for v in got.verifications] == ["pass", "fail", "pass"]
    failed = [c for c in got.verifications[1].checks if not c.passed]
    print("the illegal candidate:", [(c.name, c.detail[:120]) for c in failed])
    assert failed and failed[0].name in ("cuda-errors", "candidate-runs")
    assert got.workers == 2 and got.timings is None  # not timed where a candidate failed
