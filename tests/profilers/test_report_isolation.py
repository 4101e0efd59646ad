"""A report read in a child interpreter (profilers.ncu.report_isolation): NVIDIA's ncu_report crashed with
SIGSEGV in processes that had imported torch on the GPU host (tests/gpu/x4_2026-11-27c/
probe_report_reader.md), so with torch loaded the report is read in a fresh child. These run real children
on real recorded reports."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from profilers.errors import BadReport, KernelFilterUnmatched, ProfilerFailed
from profilers.ncu import report_isolation
from profilers.ncu.report_reader import read_ncu_rep
from tests.conftest import EXAMPLE_REPORTS

pytest.importorskip("ncu_report", reason="the ncu-report package reads .ncu-rep files")

REPORT = EXAMPLE_REPORTS / "01_transpose_naive.ncu-rep"


def test_a_report_read_in_a_child_is_the_report_read_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(report_isolation.CHILD_ENV, "1")  # read in this process, whatever it has loaded
    here = read_ncu_rep(REPORT)
    monkeypatch.delenv(report_isolation.CHILD_ENV)
    child = report_isolation.read_in_child(REPORT)
    assert child == here
    assert len(child.kernels) == 2


def test_with_torch_loaded_the_read_goes_to_a_child() -> None:
    pytest.importorskip("torch")
    assert report_isolation.needs_isolation()
    assert read_ncu_rep(REPORT, kernel_regex="transpose").kernels


def test_the_readers_errors_come_back_as_their_own_class(tmp_path: Path) -> None:
    not_a_report = tmp_path / "notes.ncu-rep"
    not_a_report.write_text("not a report\n")
    with pytest.raises(BadReport) as here:
        read_ncu_rep(not_a_report)
    with pytest.raises(BadReport) as child:
        report_isolation.read_in_child(not_a_report)
    assert child.value.message == here.value.message
    with pytest.raises(KernelFilterUnmatched, match="no_such_kernel"):
        report_isolation.read_in_child(REPORT, kernel_regex="no_such_kernel")


def test_a_child_that_dies_without_answering_is_a_profiler_failure(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    report = tmp_path / REPORT.name  # bytes no earlier read answered for (reads are kept by content)
    report.write_bytes(REPORT.read_bytes() + b"\0")
    false = shutil.which("false")
    assert false is not None
    monkeypatch.setattr(sys, "executable", false)  # the child exits 1 and prints nothing
    with pytest.raises(ProfilerFailed, match="died reading"):
        report_isolation.read_in_child(report)


def test_a_file_read_once_is_not_read_again_until_it_changes(tmp_path: Path) -> None:
    report = Path(shutil.copy(REPORT, tmp_path / REPORT.name))
    first = report_isolation.read_in_child(report)
    assert report_isolation.read_in_child(report) is first
    report.write_bytes(b"not a report any more")
    with pytest.raises(BadReport):
        report_isolation.read_in_child(report)


def test_a_copy_of_a_report_read_before_is_not_read_again_and_names_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = report_isolation.read_in_child(REPORT)
    copy = Path(shutil.copy(REPORT, tmp_path / "copy.ncu-rep"))
    monkeypatch.setattr(sys, "executable", shutil.which("false"))  # a child started now could not answer
    again = report_isolation.read_in_child(copy)
    assert again.source == str(copy) and first.source == str(REPORT)
    assert again.model_copy(update={"source": first.source}) == first
