"""``verify_many``: the candidates of one batch verified in one worker (``sandbox.sequence``), each with
the whole protocol, a crash charged to the candidate that crashed and the rest verified in a new worker.

CPU: KernelBench problems with Triton ``ModelNew``s through the interpreter, really run.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from perfagent.sandbox.sequence import SequenceRequest
from perfagent.timing.bench import batch_request, batch_results
from perfagent.verify import batch as batch_module
from perfagent.verify import verify
from perfagent.verify.batch import verify_many
from perfagent.workloads.detect import detect_candidate, detect_reference
from profilers.core_errors import BadInput

CANDIDATES = Path(__file__).parent / "candidates"
PROBLEM = CANDIDATES / "problem_add.py"


def _failed(result: object) -> list[str]:
    return sorted(c.name for c in result.checks if not c.passed)  # type: ignore[attr-defined]


def test_one_worker_gives_each_candidate_the_verdict_it_gets_alone(tmp_path: Path) -> None:
    ref = detect_reference(PROBLEM)
    files = [CANDIDATES / "honest_add_block256.py", CANDIDATES / "cheat_constant.py"]
    batch = verify_many([(ref, detect_candidate(f, ref)) for f in files], device="cpu", seeds=2, seed=7)
    assert batch.workers == 1 and batch.then is None
    alone = [verify(PROBLEM, f, device="cpu", seeds=2, seed=7) for f in files]
    assert [r.verdict for r in batch.results] == [r.verdict for r in alone] == ["pass", "fail"]
    assert [_failed(r) for r in batch.results] == [_failed(r) for r in alone]
    assert [r.input_sets for r in batch.results] == [r.input_sets for r in alone]
    assert all("verified in one worker" in " ".join(r.notes) for r in batch.results)


def test_a_crash_is_charged_to_its_candidate_and_the_rest_run_in_a_new_worker(tmp_path: Path) -> None:
    ref = detect_reference(PROBLEM)
    later = tmp_path / "honest_after_the_crash.py"
    shutil.copy(CANDIDATES / "honest_add_block256.py", later)
    files = [CANDIDATES / "honest_add_block256.py", CANDIDATES / "cheat_exit.py", later]
    batch = verify_many([(ref, detect_candidate(f, ref)) for f in files], device="cpu", seeds=2)
    assert [r.verdict for r in batch.results] == ["pass", "fail", "pass"]
    crashed = next(c for c in batch.results[1].checks if not c.passed)
    assert crashed.name == "candidate-runs" and "died" in crashed.detail
    assert batch.workers == 2  # the candidate after the crash was verified in a fresh process


def _timing_step(ref: object, cands: list[object]) -> tuple[object, str, float]:
    request, backstop = batch_request(ref, cands, device="cpu", runs=3, warmup=1)  # type: ignore[arg-type]
    return request, "perfagent.timing.jobs", backstop


def test_a_batch_that_all_passed_is_timed_in_the_same_worker() -> None:
    ref = detect_reference(PROBLEM)
    cands = [detect_candidate(CANDIDATES / "honest_add_block256.py", ref)] * 2
    step = _timing_step(ref, cands)
    batch = verify_many([(ref, c) for c in cands], device="cpu", seeds=1, then=step)  # type: ignore[arg-type]
    assert [r.verdict for r in batch.results] == ["pass", "pass"] and batch.workers == 1
    assert batch.then is not None and batch.then.timing is not None
    assert batch.then_s > 0 and all(seconds > 0 for seconds in batch.verify_s)  # each step's own wall time
    timed = batch_results(step[0], batch.then, [], "")  # type: ignore[arg-type]
    assert len(timed) == 2 and all(t.comparison is not None and t.candidate is not None for t in timed)
    assert all(len(t.candidate.timing.samples_s) == 3 for t in timed if t.candidate is not None)


def test_a_batch_with_a_failure_is_not_timed_in_its_worker() -> None:
    ref = detect_reference(PROBLEM)
    files = [CANDIDATES / "cheat_constant.py", CANDIDATES / "honest_add_block256.py"]
    cands = [detect_candidate(f, ref) for f in files]
    batch = verify_many([(ref, c) for c in cands], device="cpu", seeds=1, then=_timing_step(ref, cands))  # type: ignore[arg-type]
    assert [r.verdict for r in batch.results] == ["fail", "pass"]
    assert batch.then is None and batch.workers == 1  # a wrong result does not end the worker


def test_a_reference_failure_in_a_shared_worker_is_retried_with_each_candidate_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A reference that fails where candidates shared its process may have been spoiled by one of them:
    only a failure with one candidate alone is the reference's (bad input)."""
    ref = detect_reference(PROBLEM)
    cands = [detect_candidate(CANDIDATES / "honest_add_block256.py", ref)] * 2
    real, sizes = batch_module.run_sequence, []

    def spoiled_when_shared(request: SequenceRequest, **kw: object) -> object:
        sizes.append(len(request.steps))
        if len(request.steps) > 1:
            raise BadInput("the reference raised RuntimeError: spoiled during reference launch")
        return real(request, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(batch_module, "run_sequence", spoiled_when_shared)
    batch = verify_many([(ref, c) for c in cands], device="cpu", seeds=1)
    assert [r.verdict for r in batch.results] == ["pass", "pass"]
    assert sizes == [2, 1, 1] and batch.workers == 2
