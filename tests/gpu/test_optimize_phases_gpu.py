"""GPU test for two-machine runs (``python -m pytest -m gpu tests/gpu/test_optimize_phases_gpu.py -s``).

Proposals made with ``--propose-only`` from the bundled report (recorded on an H200) and measured with
``--evaluate`` on this GPU get the verdicts a one-machine run gives on the same candidates (the bank-conflict
transpose: smem-padding verified, timed, faster, the bank-conflict metric moved); a second round starts from
the accepted candidate and must beat it. Every run is printed (``-s``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import perfagent
from perfagent.optimize.phases import evaluate, propose
from perfagent.optimize.render import render_text
from perfagent.records import RunRecord

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_torch_and_core")]

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "cuda" / "02_transpose_bank_conflicts"
REPORT = REPO / "examples" / "reports" / "02_transpose_bank_conflicts.ncu-rep"
FAST = {"seeds": 2, "runs": 30, "warmup": 5, "timeout_s": 60.0, "profile_timeout_s": 300.0}


def _ncu_usable() -> bool:
    from profilers import get_profiler

    return get_profiler("ncu").availability() is None


def _show(title: str, record: RunRecord) -> None:
    assert record.optimize is not None
    print(f"\n[{title}]\n" + render_text(record.optimize))


def _verdicts(record: RunRecord) -> list[tuple[str, str, bool, str]]:
    return [(c.transform, c.rewrite_id, c.accepted, c.verdict) for c in record.candidates]


def test_evaluate_of_proposals_gives_the_one_machine_verdicts(tmp_path: Path) -> None:
    folder = tmp_path / "02"
    shutil.copytree(EXAMPLE, folder)
    one = perfagent.optimize(
        folder / "slow.cu",
        backend="recipes",
        transform="smem-padding",
        iterations=1,
        device="cuda",
        out=tmp_path / "one",
        **FAST,  # type: ignore[arg-type]
    )
    _show("one machine", one)
    proposed = propose(
        folder / "slow.cu",
        report=REPORT,
        backend="recipes",
        transform="smem-padding",
        iterations=1,
        out=tmp_path / "two",
        **FAST,  # type: ignore[arg-type]
    )
    assert [c.verdict for c in proposed.candidates] == ["proposed"]
    assert not (tmp_path / "two" / "candidates").exists()
    two = evaluate(tmp_path / "two", device="cuda")
    _show("--evaluate", two)

    assert _verdicts(two) == _verdicts(one)
    [cand] = two.candidates
    assert cand.proposal == "p1" and cand.verification.verdict == "pass"
    assert cand.time_s is not None and cand.speedup is not None and cand.speedup > 1.0
    if not _ncu_usable():
        return
    assert cand.accepted and cand.metric_moved is True and two.best == "c1", cand.reason

    # the next round starts from the accepted candidate, and must beat it
    second = propose(from_run=tmp_path / "two", backend="recipes", transform="loop-unroll")
    [p] = [c for c in second.candidates if c.verdict == "proposed"]
    assert p.parent == "c1"
    third = evaluate(tmp_path / "two", device="cuda")
    _show("second round", third)
    c2 = third.candidates[-1]
    assert (c2.id, c2.proposal, c2.parent) == ("c2", p.id, "c1")
    assert c2.verification.verdict == "pass" and c2.time_s is not None
    assert third.best in ("c1", "c2")
