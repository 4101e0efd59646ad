"""``diagnose`` classifies its target once and hands the result to ``profile`` (it classified it twice before)."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

import perfagent
from perfagent.workloads.targets import ProfileTarget, resolve_target

REPO = Path(__file__).resolve().parents[2]
REPORT = REPO / "examples" / "reports" / "02_transpose_bank_conflicts.ncu-rep"
KERNEL = REPO / "examples" / "cuda" / "02_transpose_bank_conflicts" / "slow.cu"


class CountingResolve:
    """``resolve_target``, counting the calls that classify something (a resolved target is handed back)."""

    def __init__(self) -> None:
        self.classified: list[str] = []

    def __call__(self, target: str | Path | ProfileTarget | None, command: Sequence[str]) -> ProfileTarget:
        if not isinstance(target, ProfileTarget):
            self.classified.append(str(target))
        return resolve_target(target, command)


def test_diagnosing_a_report_classifies_it_once() -> None:
    spy = CountingResolve()
    record = perfagent.diagnose(REPORT, save=False, resolve=spy)
    assert record.kernels and spy.classified == [str(REPORT)]


def test_diagnosing_a_source_that_is_run_and_saved_classifies_it_once(tmp_path: Path) -> None:
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed (static analysis of the .cu)")
    spy = CountingResolve()
    record = perfagent.diagnose(KERNEL, run_dir=tmp_path / "run", profiler="static", resolve=spy)
    assert record.kernels and (tmp_path / "run" / "record.json").is_file()
    assert spy.classified == [str(KERNEL)]
