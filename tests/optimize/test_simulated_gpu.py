"""The GPU half of the loop with the GPU simulated: timing and verification are stubbed (this machine
has no GPU), the profiles are real ncu data (examples/reports/02_transpose_bank_conflicts.ncu-rep holds
the conflicting kernel and its padded fix, recorded on an H100). Checks the wiring: accept when correct,
faster beyond noise and the targeted metric moved; accept "by another route" when it did not; the best, the
before/after table, re-planning, --apply, and the run folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import perfagent
from perfagent.optimize.render import render_text
from tests.optimize.conftest import PADDED, SIMULATED_SANDBOX, recorded_kernels
from tests.optimize.helpers import TRANSPOSE, copy_example


def test_padding_accepted_with_metric_moved_and_applied(
    tmp_path: Path, simulated_gpu: dict[str, Any]
) -> None:
    folder = copy_example(TRANSPOSE, tmp_path)
    target = folder / "slow.cu"
    original = target.read_text()
    record = perfagent.optimize(
        target, backend="recipes", iterations=2, max_candidates=1, out=tmp_path / "run", apply=True
    )
    result = record.optimize
    assert result is not None and result.gpu and result.baseline.time_s == pytest.approx(1e-3)
    assert (
        result.plan[0].transform == "smem-padding"
        and result.plan[0].origin == "diagnosis"
        and result.plan[0].tried
    )
    c1 = record.candidates[0]
    assert c1.transform == "smem-padding" and c1.accepted and c1.verdict == "accepted"
    assert c1.metric == "metrics.shared_bank_conflict_pct" and c1.metric_moved is True
    assert c1.metric_before is not None and c1.metric_after is not None and c1.metric_after < c1.metric_before
    assert (
        c1.speedup == pytest.approx(1.6) and record.best == "c1" and result.best_speedup == pytest.approx(1.6)
    )
    # Only a candidate faster beyond noise is re-profiled.
    assert ("profile", "source.cu") in simulated_gpu["calls"]
    # The user's original is profiled as it is; a candidate's re-profile is confined, and its record says so.
    assert ("slow.cu", False) in simulated_gpu["profiled"] and ("slow.cu", True) not in simulated_gpu[
        "profiled"
    ]
    assert ("source.cu", True) in simulated_gpu["profiled"] and ("source.cu", False) not in simulated_gpu[
        "profiled"
    ]
    assert SIMULATED_SANDBOX in c1.notes
    # Later candidates are proposed from the accepted source and must beat it.
    for later in record.candidates[1:]:
        assert later.parent == "c1" and not later.accepted
    rows = {r.quantity: r for r in result.table}
    assert rows["time (median)"].after == pytest.approx(1e-3 / 1.6)
    assert (
        rows["% of roofline"].before == 35.0
        and rows["metrics.shared_bank_conflict_pct"].after == c1.metric_after
    )
    # --apply: the original kept as .orig, the best written over the user's file.
    assert result.applied is not None and result.applied.candidate == "c1"
    assert (folder / "slow.cu.orig").read_text() == original
    assert PADDED in target.read_text() and target.read_text() == Path(c1.source_path or "").read_text()
    # Where the time went: the original's stages, each candidate's, and the whole run's wall time.
    assert set(result.baseline.stage_s) == {"profile", "time"}
    assert result.wall_s is not None
    spent = sum(result.baseline.stage_s.values()) + sum(sum(c.stage_s.values()) for c in record.candidates)
    assert result.wall_s > 0 and spent <= result.wall_s
    # Run folder layout.
    run = tmp_path / "run"
    for name in ("record.json", "summary.md", "original/slow.cu", "baseline"):
        assert (run / name).exists(), name
    cand = run / "candidates" / "01_smem-padding"
    for name in (
        "source.cu",
        "diff.patch",
        "verification.json",
        "profile.json",
        "launch.toml",
        "outcome.json",
    ):
        assert (cand / name).is_file(), name
    assert json.loads((cand / "profile.json").read_text())["tool"] == "ncu"
    summary = (run / "summary.md").read_text()
    assert (
        "| time (median) |" in summary
        and "| metrics.shared_bank_conflict_pct |" in summary
        and "| c1 | smem-padding |" in summary
    )


def test_faster_but_metric_unmoved_is_won_by_another_route(
    tmp_path: Path, simulated_gpu: dict[str, Any]
) -> None:
    simulated_gpu["padded_profile"] = recorded_kernels()[
        "transpose_smem_conflicts"
    ]  # the padded rewrite "still conflicts"
    folder = copy_example(TRANSPOSE, tmp_path)
    record = perfagent.optimize(
        folder / "slow.cu",
        backend="recipes",
        transform="smem-padding",
        iterations=1,
        out=tmp_path / "run",
        profile_best=True,  # the route is read from the final winner's profile
    )
    [c1] = record.candidates
    assert c1.verdict == "accepted" and c1.accepted and c1.route == "another" and record.best == "c1"
    assert "won by another route: metrics.shared_bank_conflict_pct unmoved" in c1.reason
    assert c1.improved[0].startswith("kernel time 1.6x faster") and c1.speedup == pytest.approx(1.6)
    summary = (tmp_path / "run" / "summary.md").read_text()
    assert "accepted (another route)" in summary and "won by another route" in summary
    assert record.optimize is not None
    text = render_text(record.optimize)
    assert "accepted (another route)" in text and "; won by another route (" in text
    saved = json.loads((tmp_path / "run" / "candidates" / "01_smem-padding" / "outcome.json").read_text())
    assert saved["route"] == "another"


def test_not_faster_is_rejected_and_never_reprofiled(tmp_path: Path, simulated_gpu: dict[str, Any]) -> None:
    simulated_gpu["speedup"] = 1.01
    folder = copy_example(TRANSPOSE, tmp_path)
    record = perfagent.optimize(
        folder / "slow.cu", backend="recipes", transform="smem-padding", iterations=1, out=tmp_path / "run"
    )
    [c1] = record.candidates
    assert c1.verdict == "not-faster" and "not faster beyond noise" in c1.reason
    assert ("profile", "source.cu") not in simulated_gpu["calls"]
    why = json.loads((tmp_path / "run" / "candidates" / "01_smem-padding" / "profile.json").read_text())
    assert why["profiled"] is False and "faster beyond noise" in why["reason"]
