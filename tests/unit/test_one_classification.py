"""Every entry point classifies its target once, through ``describe_target``, and hands the result down.

Each test passes a counting ``describe`` in (no monkeypatching) and checks both the answer and the count:
``diagnose`` used to classify twice (once itself, once in ``profile``), the MCP ``diagnose`` tools twice
(``is_recorded``, then ``diagnose_target``) and ``perfagent tui`` twice (the command, then the app).
"""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

import perfagent
from perfagent.commands.report import ReportCommand
from perfagent.commands.tui import TuiCommand
from perfagent.mcp_server import tools
from perfagent.mcp_server.boundary import ProjectRoot
from perfagent.records import RunRecord
from perfagent.target import TargetDescription, TargetKind
from perfagent.timing.bench import bench
from perfagent.verify.api import verify
from perfagent.workloads.describe import describe_target
from profilers.core_errors import BadInput, ExitCode
from profilers.model import Profile

REPO = Path(__file__).resolve().parents[2]
REPORT = REPO / "examples" / "reports" / "02_transpose_bank_conflicts.ncu-rep"
ADD = REPO / "tests" / "verify" / "candidates" / "problem_add.py"
HONEST = ADD.with_name("honest_add_block256.py")
KERNEL = REPO / "examples" / "cuda" / "02_transpose_bank_conflicts" / "slow.cu"


class CountingDescribe:
    """``describe_target``, recording what it was asked to classify."""

    def __init__(self) -> None:
        self.classified: list[str] = []

    def __call__(
        self, target: str | Path | None, command: Sequence[str] = (), **options: str | Path | None
    ) -> TargetDescription:
        self.classified.append(str(target))
        return describe_target(target, command, **options)


@pytest.fixture
def saved_run(tmp_path: Path) -> Path:
    """A run folder whose record was written by ``diagnose`` (reading a report saves a real record)."""
    run = tmp_path / "run"
    perfagent.diagnose(REPORT, run_dir=run)
    return run


def test_diagnosing_a_report_classifies_it_once() -> None:
    spy = CountingDescribe()
    record = perfagent.diagnose(REPORT, save=False, describe=spy)
    assert record.kernels and spy.classified == [str(REPORT)]
    assert record.target == str(REPORT)  # the path as the user gave it, as before


def test_diagnosing_a_source_that_is_run_and_saved_classifies_it_once(tmp_path: Path) -> None:
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed (static analysis of the .cu)")
    spy = CountingDescribe()
    record = perfagent.diagnose(KERNEL, run_dir=tmp_path / "run", profiler="static", describe=spy)
    assert record.kernels and (tmp_path / "run" / "record.json").is_file()
    assert spy.classified == [str(KERNEL)]


def test_profile_and_load_classify_once_and_take_a_described_target(saved_run: Path) -> None:
    spy = CountingDescribe()
    prof = perfagent.profile(REPORT, describe=spy)
    assert isinstance(prof, Profile) and prof.kernels and spy.classified == [str(REPORT)]
    loaded = perfagent.load(saved_run, describe=spy)
    assert isinstance(loaded, RunRecord) and loaded.kernels
    assert spy.classified == [str(REPORT), str(saved_run)]


def test_profile_takes_a_description_without_classifying_it_again(tmp_path: Path) -> None:
    """The optimize baseline's static analysis hands ``perfagent.profile`` the run's one description."""
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed (static analysis of the .cu)")
    description = describe_target(KERNEL)
    spy = CountingDescribe()
    prof = perfagent.profile(description, profiler="static", workdir=tmp_path / "work", describe=spy)
    assert prof.mode == "static" and prof.kernels and spy.classified == []
    by_path = perfagent.profile(KERNEL, profiler="static", workdir=tmp_path / "again", describe=spy)
    assert [k.name for k in by_path.kernels] == [k.name for k in prof.kernels]
    assert spy.classified == [str(KERNEL)]


def test_the_report_command_classifies_once_and_refuses_a_profiler_report(
    saved_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spy = CountingDescribe()
    command = ReportCommand(describe=spy)
    parser = argparse.ArgumentParser()
    command.prepare_parser(parser)
    assert command.run(parser.parse_args([str(saved_run), "--format", "json"])) == ExitCode.OK
    assert RunRecord.model_validate_json(capsys.readouterr().out).kernels
    with pytest.raises(BadInput, match="is a profiler report, not a saved run"):
        command.run(parser.parse_args([str(REPORT)]))
    assert spy.classified == [str(saved_run), str(REPORT)]


def test_the_tui_command_refuses_bad_input_after_one_classification(tmp_path: Path) -> None:
    spy = CountingDescribe()
    command = TuiCommand(describe=spy)
    parser = argparse.ArgumentParser()
    command.prepare_parser(parser)
    notes = tmp_path / "notes.txt"
    notes.write_text("x\n")
    args = parser.parse_args([str(notes)])
    args.trailing_command = []  # what `perfagent.cli.main` sets: the argv after `--`
    with pytest.raises(BadInput, match="don't know how to profile 'notes.txt'"):
        command.run(args)
    assert spy.classified == [str(notes)]


def test_the_mcp_diagnose_tool_classifies_once_and_its_job_reads_the_description(tmp_path: Path) -> None:
    root = ProjectRoot(tmp_path)
    spy = CountingDescribe()
    report = tools.described(REPORT, spy)
    record, run = tools.diagnose_target(root, REPORT, report, kernel=None, profiler="auto", progress=print)
    assert report.is_recorded and run is None and record.kernels
    assert spy.classified == [str(REPORT)]
    if shutil.which("nvcc") is None:
        return  # the job's static analysis needs nvcc; the classification count is checked above
    source = tools.described(KERNEL, spy)
    assert source.kind is TargetKind.CUDA_KERNEL and not source.is_recorded
    job_record = tools.diagnose_job(
        print,
        description=source.description.model_dump(mode="json"),  # what crosses into the job worker
        kernel=None,
        profiler="static",
        run_dir=str(tmp_path / "job"),
    )
    assert job_record.kernels and job_record.target == str(KERNEL)
    assert spy.classified == [str(REPORT), str(KERNEL)]


def test_verify_and_bench_classify_their_reference_once() -> None:
    """Standalone ``verify`` and ``bench`` read the reference's description (its oracle and its ``can_verify``)."""
    spy = CountingDescribe()
    verdict = verify(ADD, HONEST, device="cpu", seeds=1, describe=spy)
    assert verdict.verdict == "pass" and spy.classified == [str(ADD)]
    timed = bench(ADD, device="cpu", runs=3, warmup=1, describe=spy)
    assert timed.baseline.timing.median_s > 0 and spy.classified == [str(ADD), str(ADD)]
    with pytest.raises(BadInput, match="don't know how to verify 02_transpose_bank_conflicts.ncu-rep"):
        verify(REPORT, HONEST, device="cpu", describe=spy)
    assert spy.classified[-1] == str(REPORT)
