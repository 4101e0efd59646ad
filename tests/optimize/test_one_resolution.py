"""One optimize run resolves its target once, and a file changed under it is bad input (exit 2, one line).

The resolution is the ``describe`` of the run's ``Services``: a counting spy handed in sees every
resolution the run makes, without replacing a module attribute.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import perfagent
from perfagent.cli import main
from perfagent.optimize.phases import evaluate, propose
from perfagent.optimize.services import Services, using
from perfagent.target import TargetDescription
from perfagent.workloads.describe import describe_target
from tests.optimize.helpers import REPORTS, TRANSPOSE, copy_example

RECIPE = ["--backend", "recipes", "--transform", "smem-padding"]


class CountingDescribe:
    """``describe_target``, counting its calls and the targets it was given."""

    def __init__(self) -> None:
        self.targets: list[str] = []

    def __call__(self, target: str | Path, **options: Any) -> TargetDescription:
        self.targets.append(str(target))
        return describe_target(target, **options)


def test_one_optimize_run_resolves_its_target_once(tmp_path: Path, simulated_gpu: dict[str, Any]) -> None:
    target = copy_example(TRANSPOSE, tmp_path) / "slow.cu"
    spy = CountingDescribe()
    services = dataclasses.replace(simulated_gpu["services"], describe=spy)
    record = perfagent.optimize(
        target, services=services, backend="recipes", transform="smem-padding", out=tmp_path / "run"
    )
    assert record.best == "c1"  # the run went through baseline, loop and result
    assert spy.targets == [str(target)]


def _editing_on(services: Services, stage: str, target: Path) -> Services:
    """``services`` with its ``stage`` call editing ``target`` first (the user saves the file mid-run)."""
    real: Callable[..., Any] = getattr(services, stage)

    def edit_then_call(*args: Any, **kwargs: Any) -> Any:
        with target.open("a") as fh:
            fh.write("// edited while perfagent ran\n")
        return real(*args, **kwargs)

    return dataclasses.replace(services, **{stage: edit_then_call})


@pytest.mark.parametrize("stage", ["time", "verify_and_time"])
def test_a_target_changed_during_the_run_exits_2_in_one_line(
    tmp_path: Path, simulated_gpu: dict[str, Any], capsys: pytest.CaptureFixture[str], stage: str
) -> None:
    """Changed while the original was timed, or while a candidate was measured: the run stops with exit 2
    (what was measured no longer describes the file, and --apply would overwrite the user's edit)."""
    target = copy_example(TRANSPOSE, tmp_path) / "slow.cu"
    with using(_editing_on(simulated_gpu["services"], stage, target)):
        code = main(["optimize", str(target), *RECIPE, "--out", str(tmp_path / "run"), "--apply"])
    err = capsys.readouterr().err
    assert code == 2
    cause = [line for line in err.splitlines() if "changed while perfagent was working on it" in line]
    assert len(cause) == 1 and cause[0].split()[-1] != "" and "slow.cu changed" in cause[0]
    assert "Traceback" not in err
    assert "edited while perfagent ran" in target.read_text()  # the user's edit was not overwritten
    assert not (target.parent / "slow.cu.orig").exists()
    saved = json.loads((tmp_path / "run" / "record.json").read_text())
    assert "changed while perfagent was working on it" in json.dumps(saved)  # the record says why it stopped


def test_each_round_of_a_two_machine_run_resolves_its_target_once(
    tmp_path: Path, simulated_gpu: dict[str, Any]
) -> None:
    """``--propose-only``, ``--evaluate RUN`` and ``--propose-only --from RUN``: one resolution each (the
    later rounds find the target through the record, then describe it)."""
    target = copy_example(TRANSPOSE, tmp_path) / "slow.cu"
    spy = CountingDescribe()
    services = dataclasses.replace(simulated_gpu["services"], describe=spy)
    run = tmp_path / "run"
    propose(
        target,
        report=REPORTS / "02_transpose_bank_conflicts.ncu-rep",
        backend="recipes",
        out=run,
        services=services,
    )
    assert len(spy.targets) == 1
    assert evaluate(run, device="cuda", services=services).best == "c1"
    assert len(spy.targets) == 2
    propose(from_run=run, backend="recipes", transform="loop-unroll", services=services)
    assert [Path(t).name for t in spy.targets] == ["slow.cu"] * 3


def test_a_proposal_round_reads_the_recorded_report_through_its_services(tmp_path: Path) -> None:
    """``--propose-only --report``: the report is diagnosed by the run's ``Services.diagnose`` (handed in, not
    the module's), once, and the target is described once."""
    target = copy_example(TRANSPOSE, tmp_path) / "slow.cu"
    report = REPORTS / "02_transpose_bank_conflicts.ncu-rep"
    spy, read = CountingDescribe(), []

    def counting_diagnose(path: str | Path, **options: Any) -> perfagent.RunRecord:
        read.append(str(path))
        return perfagent.diagnose(path, **options)

    services = Services(describe=spy, diagnose=counting_diagnose)
    record = propose(target, report=report, backend="recipes", out=tmp_path / "run", services=services)
    assert record.optimize is not None and record.kernels  # the diagnosis came from the report
    assert read == [str(report)] and spy.targets == [str(target)]
