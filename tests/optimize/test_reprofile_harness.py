"""``reprofile`` through the harness the workload chose: the profile's notes and the record's
``cost.profiles`` say which harness ran; a torch-free profile that fails is made again through the torch
harness, with the reason; a candidate's profile keeps its confinement whichever harness runs.

ncu itself stands in here (``reprofile.profile``, the one call that starts it): what is checked is which
command it is given and what is done with the answer. The real profiles through both harnesses are
``tests/gpu/test_torch_free_harness_gpu.py``.
"""

from __future__ import annotations

import json
import runpy
from pathlib import Path
from typing import Any

import pytest

from perfagent.optimize import reprofile
from perfagent.optimize.cost import ProfileLog, StageClock, run_cost
from perfagent.optimize.render import cost_line, render_markdown
from perfagent.records import RunCost, RunRecord
from perfagent.sandbox.profiled import CANDIDATE_CODE
from perfagent.workloads.detect import resolve
from perfagent.workloads.harness_choice import HARNESS_ENV, TORCH_FREE_HARNESS, TORCH_HARNESS
from profilers.errors import ProfilerError
from profilers.model import Profile
from tests.workloads.cuda_stub import cuda_installed
from tests.workloads.test_torch_free_harness import KERNEL, SPEC

__all__ = ["cuda_installed"]  # the fixture, used by name


class Ncu:
    """Answers ``perfagent.profile``: fails for the torch-free harness when told to, records each call."""

    def __init__(self, fail_torch_free: bool) -> None:
        self.fail_torch_free = fail_torch_free
        self.calls: list[dict[str, Any]] = []

    def __call__(self, target: None, **kwargs: Any) -> Profile:
        self.calls.append(kwargs)
        if self.fail_torch_free and TORCH_FREE_HARNESS in kwargs["command"]:
            raise ProfilerError("the application exited with code 1")
        return Profile(tool="ncu", source=" ".join(kwargs["command"]), notes=["sandbox: as given"])


@pytest.fixture
def kernel(tmp_path: Path) -> Path:
    (tmp_path / "k.cu").write_text(KERNEL)
    (tmp_path / "k.launch.toml").write_text(SPEC)
    return tmp_path / "k.cu"


def _reprofile(kernel: Path, candidate: bool) -> reprofile.Reprofile:
    wl = resolve(kernel)
    folder = kernel.parent / "candidates" / "03_fast-math"
    return reprofile.reprofile(
        wl,
        kernel,
        kernel.parent / "k.launch.toml",
        workdir=folder / "profile",
        target_kernel=None,
        arch="sm_90",
        timeout_s=60,
        candidate=candidate,
        tiers=("A",),
    )


def test_a_profile_through_the_torch_free_harness_says_so(
    kernel: Path, cuda_installed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    ncu = Ncu(fail_torch_free=False)
    monkeypatch.setattr(reprofile, "profile", ncu)
    log = ProfileLog()
    rp = _reprofile(kernel, candidate=True)
    assert len(ncu.calls) == 1 and ncu.calls[0]["command"][3:5] == ["-m", TORCH_FREE_HARNESS]
    assert ncu.calls[0]["launcher"] is CANDIDATE_CODE  # the candidate stays confined
    assert rp.profile is not None and rp.profile.notes[-1] == f"harness: torch-free ({TORCH_FREE_HARNESS})"
    assert rp.sandbox == "sandbox: as given"
    (run,) = log.since()
    assert (run.of, run.harness, run.harness_reason, run.ncu_runs, run.profiled) == (
        "03_fast-math",
        "torch-free",
        "",
        1,
        True,
    )


def test_a_failed_torch_free_profile_is_made_again_through_torch(
    kernel: Path, cuda_installed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    ncu = Ncu(fail_torch_free=True)
    monkeypatch.setattr(reprofile, "profile", ncu)
    log = ProfileLog()
    rp = _reprofile(kernel, candidate=False)
    assert [c["command"][4] for c in ncu.calls] == [TORCH_FREE_HARNESS, TORCH_HARNESS]
    assert all(c["launcher"] is None for c in ncu.calls)  # the user's original runs as it is
    reason = "the torch-free harness failed (the application exited with code 1)"
    assert rp.profile is not None and rp.profile.notes[-1] == f"harness: torch ({TORCH_HARNESS}): {reason}"
    (run,) = log.since()
    assert (run.of, run.harness, run.harness_reason, run.ncu_runs) == ("original", "torch", reason, 2)


def test_a_torch_profile_that_fails_is_not_repeated(
    kernel: Path, cuda_installed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HARNESS_ENV, "torch")
    ncu = Ncu(fail_torch_free=False)
    monkeypatch.setattr(reprofile, "profile", lambda target, **kw: ncu.calls.append(kw) or ncu_fail())
    log = ProfileLog()
    rp = _reprofile(kernel, candidate=True)
    assert len(ncu.calls) == 1 and rp.profile is None and rp.note == "not re-profiled: ncu failed"
    (run,) = log.since()
    assert (run.harness, run.harness_reason, run.profiled) == ("torch", f"{HARNESS_ENV}=torch", False)


def ncu_fail() -> Profile:
    raise ProfilerError("ncu failed")


RECORD = Path(__file__).resolve().parents[1] / "data" / "llm_relay" / "u03_dot_double_atomic_each" / "run"


def test_the_record_lists_each_profile_and_its_harness(
    kernel: Path, tmp_path: Path, cuda_installed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    ncu = Ncu(fail_torch_free=True)
    monkeypatch.setattr(reprofile, "profile", ncu)
    log = ProfileLog()
    _reprofile(kernel, candidate=False)
    ncu.fail_torch_free = False
    _reprofile(kernel, candidate=True)
    cost = run_cost(StageClock(), [], {"profile": 2.0}, 3.0, None, log.since())
    assert [(p.of, p.harness) for p in cost.profiles] == [
        ("original", "torch"),
        ("03_fast-math", "torch-free"),
    ]
    # a record from before the field loads with no profiles
    assert RunCost.model_validate(cost.model_dump(exclude={"profiles"})).profiles == []
    old = RunRecord.model_validate_json((RECORD / "record.json").read_text()).optimize
    assert old is not None and old.cost is None and cost_line(old) is None
    now = old.model_copy(update={"cost": cost, "wall_s": 3.0})
    line = cost_line(now)
    assert line is not None and line.endswith("; 2 ncu profile(s), 1 through the torch-free harness")
    summary = render_markdown(now)
    assert f"| 03_fast-math | torch-free | {cost.profiles[1].wall_s:.1f} | 1 |  |" in summary
    run = tmp_path / "entry" / "run"
    run.mkdir(parents=True)
    (run / "record.json").write_text(
        json.dumps({"optimize": {"wall_s": 3.0, "cost": cost.model_dump()}}), encoding="utf-8"
    )
    script = runpy.run_path(str(Path(__file__).resolve().parents[2] / "scripts" / "optimize_cost_table.py"))
    text = script["table"]([run])
    reason = "the torch-free harness failed (the application exited with code 1)"
    assert f"| entry | original | torch | {cost.profiles[0].wall_s:.1f} | 2 | yes | {reason} |" in text
    assert f"| entry | 03_fast-math | torch-free | {cost.profiles[1].wall_s:.1f} | 1 | yes |  |" in text
