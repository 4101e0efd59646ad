"""Fixtures for the optimize tests: a simulated GPU (stubbed timing and verification verdicts, real
recorded ncu profiles) for the parts of the loop that only run on a GPU, handed to the loop as its
``Services`` (``services.using``: also for runs started from the CLI)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import perfagent
from perfagent.optimize import measure, together
from perfagent.optimize.measure import Timing
from perfagent.optimize.reprofile import Reprofile
from perfagent.optimize.services import Services, using
from perfagent.verify.models import Check, VerificationResult
from profilers.model import KernelProfile, Profile
from tests.optimize.helpers import REPORTS

PADDED = "TILE_DIM + 1"
SIMULATED_SANDBOX = "sandbox: confined by bubblewrap (simulated re-profile)"
"""What the simulated re-profile of a candidate says of its confinement (none for the original)."""


def recorded_kernels() -> dict[str, KernelProfile]:
    record = perfagent.diagnose(REPORTS / "02_transpose_bank_conflicts.ncu-rep")
    return {k.profile.base_name: k.profile for k in record.kernels}


@pytest.fixture
def simulated_gpu() -> Iterator[dict[str, Any]]:
    """Stub the GPU: probe, verification verdicts, CUDA-event timings (alone and batched); profiles come from
    the recording. ``knobs["services"]`` is the simulated ``Services`` (``dataclasses.replace`` one field
    of it to substitute another stand-in)."""
    kernels = recorded_kernels()
    slow, fixed = kernels["transpose_smem_conflicts"], kernels["transpose_smem_padded"]
    knobs: dict[str, Any] = {"speedup": 1.6, "padded_profile": fixed, "calls": [], "profiled": []}

    def probe(device: str) -> tuple[bool, str]:
        return True, "cuda:0 (simulated)"

    def verify(wl: Any, source: Path, spec: Any, **_: Any) -> VerificationResult:
        knobs["calls"].append(("verify", source.name))
        return VerificationResult(
            verdict="pass",
            reason="every check passed",
            checks=[Check(name="correctness", passed=True, detail="simulated")],
            reference=wl.file.name,
            candidate=source.name,
            kind="cuda-kernel",
            device="cuda:0 (simulated)",
        )

    def bench(wl: Any, candidate: Path | None, spec: Any, **_: Any) -> Timing:
        knobs["calls"].append(("bench", candidate.name if candidate else None))
        return timing(candidate)

    def bench_many(wl: Any, candidates: list[tuple[Path, Any]], **_: Any) -> list[Timing]:
        knobs["calls"].append(("bench-batch", [c.parent.name for c, _ in candidates]))
        return [timing(c) for c, _ in candidates]

    def timing(candidate: Path | None) -> Timing:
        if candidate is None:
            return Timing(
                time_s=1e-3,
                time_s_before=1e-3,
                timer="cuda-events",
                pct_of_roofline=35.0,
                pct_of_dram_peak=34.0,
            )
        s = knobs["speedup"] if PADDED in candidate.read_text() else 1.0
        return Timing(
            time_s=1e-3 / s,
            time_s_before=1e-3,
            speedup=s,
            noise_threshold=0.02,
            significant=s > 1.02,
            verdict="faster" if s > 1.02 else "no-change",
            timer="cuda-events",
            pct_of_roofline=35.0 * s,
            pct_of_dram_peak=34.0 * s,
        )

    def reprofile(wl: Any, file: Path, spec: Any, *, candidate: bool, **_: Any) -> Reprofile:
        knobs["calls"].append(("profile", file.name))
        knobs["profiled"].append((file.name, candidate))
        kernel = knobs["padded_profile"] if PADDED in file.read_text() else slow
        profile = Profile(tool="ncu", source=str(file), kernels=[kernel])
        return Reprofile(profile=profile, kernel=kernel, sandbox=SIMULATED_SANDBOX if candidate else None)

    def verify_and_time(wl: Any, pairs: list[tuple[Path, Any]], **_: Any) -> together.Together:
        """The iteration's one worker: each candidate verified as alone, all timed when all passed."""
        knobs["calls"].append(("verify-and-time", [c.parent.name for c, _ in pairs]))
        verdicts = [verify(wl, c, spec) for c, spec in pairs]
        timed = [timing(c) for c, _ in pairs] if all(v.verdict == "pass" for v in verdicts) else None
        return together.Together(verdicts, timed, [0.0] * len(pairs), 0.0, 1)

    services = Services(
        probe_gpu=probe,
        ncu_availability=lambda: None,
        build_check=measure.build_check,
        verify=verify,
        time=bench,
        time_batch=bench_many,
        reprofile=reprofile,
        verify_and_time=verify_and_time,
    )
    knobs["services"] = services
    with using(services):
        yield knobs
