"""The GPU half of the loop with the GPU simulated: timing and verification are stubbed (this machine
has no GPU), the profiles are real ncu data (examples/reports/02_transpose_bank_conflicts.ncu-rep holds
the conflicting kernel and its padded fix, recorded on an H100). Checks the wiring: accept when correct,
faster beyond noise and the targeted metric moved; reject when the metric did not move; the best, the
before/after table, re-planning, --apply, and the run folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import perfagent
import profilers
from perfagent.models import KernelProfile, Profile
from perfagent.optimize import measure
from perfagent.optimize.measure import Reprofile, Timing
from perfagent.verify.models import Check, VerificationResult

from .helpers import REPORTS, TRANSPOSE, copy_example

PADDED = "TILE_DIM + 1"


def _recorded() -> dict[str, KernelProfile]:
    record = perfagent.diagnose(REPORTS / "02_transpose_bank_conflicts.ncu-rep")
    return {k.profile.base_name: k.profile for k in record.kernels}


class _Ncu:
    name = "ncu"

    def availability(self) -> str | None:
        return None


@pytest.fixture
def simulated_gpu(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Stub the GPU: probe, verification verdicts, CUDA-event timings; profiles come from the recording."""
    kernels = _recorded()
    slow, fixed = kernels["transpose_smem_conflicts"], kernels["transpose_smem_padded"]
    knobs: dict[str, Any] = {"speedup": 1.6, "padded_profile": fixed, "calls": []}

    def probe(device: str) -> tuple[bool, str]:
        return True, "cuda:0 (simulated)"

    def verify(wl: Any, source: Path, spec: Any, **_: Any) -> VerificationResult:
        knobs["calls"].append(("verify", source.name))
        return VerificationResult(
            verdict="pass", reason="every check passed", checks=[Check(name="correctness", passed=True, detail="simulated")],
            reference=wl.file.name, candidate=source.name, kind="cuda-kernel", device="cuda:0 (simulated)",
        )

    def bench(wl: Any, candidate: Path | None, spec: Any, **_: Any) -> Timing:
        knobs["calls"].append(("bench", candidate.name if candidate else None))
        if candidate is None:
            return Timing(time_s=1e-3, time_s_before=1e-3, timer="cuda-events", pct_of_roofline=35.0, pct_of_dram_peak=34.0)
        s = knobs["speedup"] if PADDED in candidate.read_text() else 1.0
        return Timing(
            time_s=1e-3 / s, time_s_before=1e-3, speedup=s, noise_threshold=0.02, significant=s > 1.02,
            verdict="faster" if s > 1.02 else "no-change", timer="cuda-events", pct_of_roofline=35.0 * s, pct_of_dram_peak=34.0 * s,
        )

    def reprofile(wl: Any, file: Path, spec: Any, **_: Any) -> Reprofile:
        knobs["calls"].append(("profile", file.name))
        kernel = knobs["padded_profile"] if PADDED in file.read_text() else slow
        return Reprofile(profile=Profile(tool="ncu", source=str(file), kernels=[kernel]), kernel=kernel)

    monkeypatch.setattr(measure, "probe_gpu", probe)
    monkeypatch.setattr(measure, "verify_candidate", verify)
    monkeypatch.setattr(measure, "bench_timing", bench)
    monkeypatch.setattr(measure, "reprofile", reprofile)
    real_get = profilers.get_profiler
    monkeypatch.setattr(profilers, "get_profiler", lambda name: _Ncu() if name == "ncu" else real_get(name))
    return knobs


def test_padding_accepted_with_metric_moved_and_applied(tmp_path: Path, simulated_gpu: dict[str, Any]) -> None:
    folder = copy_example(TRANSPOSE, tmp_path)
    target = folder / "slow.cu"
    original = target.read_text()
    record = perfagent.optimize(target, backend="recipes", iterations=2, max_candidates=1, out=tmp_path / "run", apply=True)
    result = record.optimize
    assert result is not None and result.gpu and result.baseline.time_s == pytest.approx(1e-3)
    assert result.plan[0].transform == "smem-padding" and result.plan[0].origin == "diagnosis" and result.plan[0].tried
    c1 = record.candidates[0]
    assert c1.transform == "smem-padding" and c1.accepted and c1.verdict == "accepted"
    assert c1.metric == "metrics.shared_bank_conflict_pct" and c1.metric_moved is True
    assert c1.metric_before is not None and c1.metric_after is not None and c1.metric_after < c1.metric_before
    assert c1.speedup == pytest.approx(1.6) and record.best == "c1" and result.best_speedup == pytest.approx(1.6)
    # Only a candidate faster beyond noise is re-profiled.
    assert ("profile", "source.cu") in simulated_gpu["calls"]
    # Later candidates are proposed from the accepted source and must beat it.
    for later in record.candidates[1:]:
        assert later.parent == "c1" and not later.accepted
    rows = {r.quantity: r for r in result.table}
    assert rows["time (median)"].after == pytest.approx(1e-3 / 1.6)
    assert rows["% of roofline"].before == 35.0 and rows["metrics.shared_bank_conflict_pct"].after == c1.metric_after
    # --apply: the original kept as .orig, the best written over the user's file.
    assert result.applied is not None and result.applied.candidate == "c1"
    assert (folder / "slow.cu.orig").read_text() == original
    assert PADDED in target.read_text() and target.read_text() == Path(c1.source_path or "").read_text()
    # Run folder layout.
    run = tmp_path / "run"
    for name in ("record.json", "summary.md", "original/slow.cu", "baseline"):
        assert (run / name).exists(), name
    cand = run / "candidates" / "01_smem-padding"
    for name in ("source.cu", "diff.patch", "verification.json", "profile.json", "launch.toml", "outcome.json"):
        assert (cand / name).is_file(), name
    assert json.loads((cand / "profile.json").read_text())["tool"] == "ncu"
    summary = (run / "summary.md").read_text()
    assert "| time (median) |" in summary and "| metrics.shared_bank_conflict_pct |" in summary and "| c1 | smem-padding |" in summary


def test_faster_but_metric_unmoved_is_rejected(tmp_path: Path, simulated_gpu: dict[str, Any]) -> None:
    simulated_gpu["padded_profile"] = _recorded()["transpose_smem_conflicts"]  # the padded rewrite "still conflicts"
    folder = copy_example(TRANSPOSE, tmp_path)
    record = perfagent.optimize(folder / "slow.cu", backend="recipes", transform="smem-padding", iterations=1, out=tmp_path / "run")
    [c1] = record.candidates
    assert c1.verdict == "metric-unmoved" and not c1.accepted and record.best is None
    assert "did not move" in c1.reason and c1.speedup == pytest.approx(1.6)


def test_not_faster_is_rejected_and_never_reprofiled(tmp_path: Path, simulated_gpu: dict[str, Any]) -> None:
    simulated_gpu["speedup"] = 1.01
    folder = copy_example(TRANSPOSE, tmp_path)
    record = perfagent.optimize(folder / "slow.cu", backend="recipes", transform="smem-padding", iterations=1, out=tmp_path / "run")
    [c1] = record.candidates
    assert c1.verdict == "not-faster" and "not faster beyond noise" in c1.reason
    assert ("profile", "source.cu") not in simulated_gpu["calls"]
    why = json.loads((tmp_path / "run" / "candidates" / "01_smem-padding" / "profile.json").read_text())
    assert why["profiled"] is False and "faster beyond noise" in why["reason"]
