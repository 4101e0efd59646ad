"""``verify_many``: the candidates of one batch verified in one worker (``sandbox.sequence``), each with
the whole protocol, a crash charged to the candidate that crashed and the rest verified in a new worker.

CPU: KernelBench problems with Triton ``ModelNew``s through the interpreter, really run.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from perfagent.verify import verify
from perfagent.verify.batch import verify_many
from perfagent.workloads.detect import detect_candidate, detect_reference

CANDIDATES = Path(__file__).parent / "candidates"
PROBLEM = CANDIDATES / "problem_add.py"


def _failed(result: object) -> list[str]:
    return sorted(c.name for c in result.checks if not c.passed)  # type: ignore[attr-defined]


def test_one_worker_gives_each_candidate_the_verdict_it_gets_alone(tmp_path: Path) -> None:
    ref = detect_reference(PROBLEM)
    files = [CANDIDATES / "honest_add_block256.py", CANDIDATES / "cheat_constant.py"]
    batch = verify_many(ref, [detect_candidate(f, ref) for f in files], device="cpu", seeds=2, seed=7)
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
    batch = verify_many(ref, [detect_candidate(f, ref) for f in files], device="cpu", seeds=2)
    assert [r.verdict for r in batch.results] == ["pass", "fail", "pass"]
    crashed = next(c for c in batch.results[1].checks if not c.passed)
    assert crashed.name == "candidate-runs" and "died" in crashed.detail
    assert batch.workers == 2  # the candidate after the crash was verified in a fresh process
