"""The first-contact sweep (issue 26) as tests: every quick case of ``tests/first_contact_cases.py`` through
the real CLI (the documented exit code, one line on stderr, no traceback), and the helpers behind the fixes
(``-o`` checked before any work, ``--kernel`` errors across the isolated report reader, the CUDA toolkit
found where torch finds it). The full table, slow cases included, is ``tests/data/first_contact_sweep.md``.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from perfagent.commands.common import check_writable_file
from perfagent.workloads.cuda_toolkit import find_cuda_home
from profilers.core_errors import BadInput, ExitCode
from profilers.errors import KernelFilterUnmatched
from tests.first_contact_cases import CASES, Case, expand, make_workspace

REPO = Path(__file__).resolve().parents[1]
REPORT = REPO / "examples" / "reports" / "01_transpose_naive.ncu-rep"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    w = tmp_path_factory.mktemp("first-contact") / "w"
    make_workspace(w, REPO)
    return w


@pytest.mark.parametrize("case", [c for c in CASES if c.quick], ids=lambda c: c.id)
def test_case(case: Case, workspace: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PERFAGENT_", "OPENAI_"))}
    env |= dict(case.env) | {"PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "perfagent", *expand(case.args, workspace, REPO)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == case.expected, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    if case.expected not in (ExitCode.OK,):
        assert done.stderr.strip(), "a failure must say why"
    assert (workspace / "exists.txt").read_text(encoding="utf-8") == "keep me\n"  # never overwritten


def test_o_under_a_folder_that_cannot_be_created_is_refused_before_any_work() -> None:
    # /proc refuses new folders even to root (os.access says yes to root: it was what let this through)
    with pytest.raises(BadInput, match="cannot write -o"):
        check_writable_file(Path("/proc/nope/x.json"), force=False, option="-o")


def test_o_in_a_missing_folder_under_a_writable_one_is_accepted_and_nothing_is_left(tmp_path: Path) -> None:
    check_writable_file(tmp_path / "new" / "deeper" / "x.json", force=False, option="-o")
    assert list(tmp_path.iterdir()) == []


def test_o_under_a_read_only_folder_is_refused(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(stat.S_IRUSR | stat.S_IXUSR)
    with pytest.raises(BadInput):
        check_writable_file(ro / "sub" / "x.json", force=False, option="-o")


def test_a_kernel_filter_matching_nothing_keeps_exit_2_across_the_isolated_reader() -> None:
    pytest.importorskip("ncu_report")
    from profilers.ncu.isolated import read_ncu_rep_isolated

    with pytest.raises(KernelFilterUnmatched) as caught:
        read_ncu_rep_isolated(REPORT, kernel_regex="zzz")
    assert caught.value.exit_code == ExitCode.USAGE and "transpose_naive" in caught.value.hint


def test_cuda_home_is_derived_from_nvcc_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nvcc = tmp_path / "cuda-13" / "bin" / "nvcc"
    nvcc.parent.mkdir(parents=True)
    nvcc.write_text("#!/bin/sh\n", encoding="utf-8")
    nvcc.chmod(0o755)
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setenv("PATH", str(nvcc.parent))
    home = find_cuda_home()
    assert home.path == str(tmp_path / "cuda-13") and "nvcc on PATH" in home.how


def test_cuda_home_without_a_bin_folder_is_not_a_toolkit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    home = find_cuda_home()
    assert home.path is None and "no bin/" in home.how


def test_doctor_names_what_load_inline_needs() -> None:
    from perfagent.doctor import run_probes

    probe = next(p for p in run_probes().probes if p.name.startswith("load_inline"))
    assert "CUDA toolkit" in probe.detail
