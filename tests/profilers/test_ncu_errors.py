"""NcuProfiler.profile() against a fake ``ncu`` on PATH that prints ncu's real messages (ncu.md section 5).

The fake writes the documented message texts to the ``--log-file`` it is given and exits with the
documented code; for the success path it copies a real recorded report to the ``--export`` path.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
from pathlib import Path

import pytest

from profilers.base import ProfileRequest
from profilers.errors import (
    ApplicationFailed,
    CounterPermissionDenied,
    NoKernelsProfiled,
    ProfilerFailed,
    ProfilerUnavailable,
    ToolTimeout,
)
from profilers.ncu.argv import build_ncu_argv
from profilers.ncu.profiler import NcuProfiler
from profilers.ncu.run_errors import check_ncu_run, parse_available_kernels
from profilers.process import CompletedCommand

FIXTURES = Path(__file__).resolve().parents[2] / ".." / "shared" / "fixtures" / "ncu-public"
VEC_ADD = FIXTURES / "gtx1660s_vec_add_ncu2024.1.1_full.ncu-rep"

PERMISSION = (
    "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters "
    "on the target device 0"
)

FAKE_NCU = r"""#!{python}
import json, os, shutil, sys, time

args = sys.argv[1:]
scenario = os.environ["FAKE_NCU_SCENARIO"]
if args == ["--version"]:
    print("NVIDIA (R) Nsight Compute Command Line Profiler")
    print("Copyright (c) 2018-2025 NVIDIA Corporation")
    print("Version 2025.3.1.0 (build 36398880) (public-release)")
    sys.exit(0)
log = args[args.index("--log-file") + 1]
# stage 1 of staged profiling prints a CSV instead of exporting a report
export = args[args.index("--export") + 1].replace("%%", "%") if "--export" in args else None
with open(os.environ["FAKE_NCU_RECORD"], "w") as record:
    json.dump({{"argv": sys.argv, "LC_ALL": os.environ.get("LC_ALL"), "APP_VAR": os.environ.get("APP_VAR")}}, record)
messages = json.loads(os.environ["FAKE_NCU_LOG"])
with open(log, "w") as handle:
    handle.write("\n".join(messages) + "\n")
sys.stdout.write(os.environ.get("FAKE_APP_STDOUT", ""))
sys.stderr.write(os.environ.get("FAKE_APP_STDERR", ""))
if scenario == "success" and export:
    shutil.copyfile(os.environ["FAKE_NCU_REPORT"], export)
if scenario == "hang":
    time.sleep(30)
sys.exit(int(os.environ.get("FAKE_NCU_EXIT", "0")))
"""


@pytest.fixture
def fake_ncu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake ncu first on PATH; returns the file where it records its argv and environment."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "ncu"
    script.write_text(FAKE_NCU.format(python=sys.executable))
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    record = tmp_path / "record.json"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_NCU_RECORD", str(record))
    monkeypatch.setenv("FAKE_NCU_SCENARIO", "fail")
    monkeypatch.setenv("FAKE_NCU_LOG", "[]")
    return record


def scenario(
    monkeypatch: pytest.MonkeyPatch, name: str, log: list[str], exit_code: int = 0, **env: str
) -> None:
    monkeypatch.setenv("FAKE_NCU_SCENARIO", name)
    monkeypatch.setenv("FAKE_NCU_LOG", json.dumps(log))
    monkeypatch.setenv("FAKE_NCU_EXIT", str(exit_code))
    for key, value in env.items():
        monkeypatch.setenv(key, value)


def request(tmp_path: Path, **fields: object) -> ProfileRequest:
    return ProfileRequest(command=["./app", "--size", "1024"], workdir=tmp_path / "run", **fields)  # type: ignore[arg-type]


def test_version_and_availability(fake_ncu: Path) -> None:
    profiler = NcuProfiler()
    assert profiler.availability() is None
    assert profiler.executable() == shutil.which("ncu")
    assert profiler.version() == "2025.3.1.0 (build 36398880) (public-release)"


def test_no_kernels_profiled_lists_available(
    fake_ncu: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario(
        monkeypatch,
        "fail",
        [
            "==PROF== Connected to process 4242 (/w/app)",
            "==PROF== Disconnected from process 4242",
            "==WARNING== No kernels were profiled.",
            "Available Kernels:",
            "    1. vec_add",
            "    2. reduce_sum",
        ],
        exit_code=0,
    )
    with pytest.raises(NoKernelsProfiled) as info:
        NcuProfiler().profile(request(tmp_path, kernel_regex="matmul"))
    assert info.value.available == ["vec_add", "reduce_sum"]
    assert "'matmul' matched none of: vec_add, reduce_sum" in info.value.hint


def test_no_kernels_without_list(fake_ncu: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario(monkeypatch, "fail", ["==WARNING== No kernels were profiled."], exit_code=0)
    with pytest.raises(NoKernelsProfiled) as info:
        NcuProfiler().profile(request(tmp_path))
    assert info.value.available == []
    assert "launched no CUDA kernel" in info.value.hint


def test_counter_permission_denied(fake_ncu: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario(monkeypatch, "fail", ["==PROF== Connected to process 4242 (/w/app)", PERMISSION], exit_code=1)
    with pytest.raises(CounterPermissionDenied) as info:
        NcuProfiler().profile(request(tmp_path))
    assert "ERR_NVGPUCTRPERM" in info.value.message
    for fix in ("NVreg_RestrictProfilingToAdminUsers=0", "root", "CAP_PERFMON", "timing-only"):
        assert fix in info.value.hint


def test_application_error_code(fake_ncu: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario(
        monkeypatch,
        "fail",
        [
            "==PROF== Connected to process 4242 (/w/app)",
            "==ERROR== The application returned an error code (3).",
        ],
        exit_code=3,
        FAKE_APP_STDERR="CUDA error: out of memory\n",
        FAKE_APP_STDOUT="allocating 64 GiB\n",
    )
    with pytest.raises(ApplicationFailed) as info:
        NcuProfiler().profile(request(tmp_path))
    assert info.value.returncode == 3
    assert "code 3" in info.value.message
    assert "CUDA error: out of memory" in info.value.hint


def test_library_not_loaded(fake_ncu: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario(
        monkeypatch,
        "fail",
        [],
        exit_code=1,
        FAKE_APP_STDERR="Failed to initialize the profiler: LibraryNotLoaded\n",
    )
    with pytest.raises(ProfilerUnavailable, match="LibraryNotLoaded"):
        NcuProfiler().profile(request(tmp_path))


def test_other_error_is_profiler_failed(
    fake_ncu: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario(
        monkeypatch,
        "fail",
        [
            "==ERROR== Could not open report file '/w/x.ncu-rep'.",
            "==ERROR== The file does not exist or is not a regular file.",
        ],
        exit_code=1,
    )
    with pytest.raises(ProfilerFailed) as info:
        NcuProfiler().profile(request(tmp_path))
    assert "Could not open report file" in info.value.message
    assert "not a regular file" in info.value.hint


def test_silent_nonzero_exit_is_profiler_failed(
    fake_ncu: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario(monkeypatch, "fail", [], exit_code=139)
    with pytest.raises(ProfilerFailed, match="exit code 139"):
        NcuProfiler().profile(request(tmp_path))


def test_exit_zero_without_report_is_profiler_failed(
    fake_ncu: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario(monkeypatch, "fail", ["==PROF== Connected to process 4242 (/w/app)"], exit_code=0)
    with pytest.raises(ProfilerFailed, match="without writing a report"):
        NcuProfiler().profile(request(tmp_path))


def test_timeout(fake_ncu: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario(monkeypatch, "hang", [])
    with pytest.raises(ToolTimeout):
        NcuProfiler().profile(request(tmp_path, timeout_s=1.0))


def test_success_reads_the_exported_report(
    fake_ncu: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("ncu_report")
    if not VEC_ADD.is_file():
        pytest.skip(f"shared ncu fixtures not found at {FIXTURES}")
    scenario(
        monkeypatch,
        "success",
        [
            "==PROF== Connected to process 4242 (/w/app)",
            '==PROF== Profiling "vec_add" - 0 (1/1): 0%....50%....100% - 10 passes',
            "==WARNING== Unable to access the following 1 metrics: sm__ops_path_tensor_src_fp8.sum",
            "==PROF== Disconnected from process 4242",
        ],
        FAKE_NCU_REPORT=str(VEC_ADD),
        FAKE_APP_STDOUT="==PROF== lookalike line from the app\nresult: 42\n",
    )
    req = request(tmp_path, kernel_regex="vec", env={"APP_VAR": "1"})
    profile = NcuProfiler().profile(req)
    assert [k.base_name for k in profile.kernels] == ["vec_add"]
    assert profile.kernels[0].metrics.duration_s == pytest.approx(41.696e-6)
    assert profile.source.endswith(".ncu-rep") and Path(profile.source).parent == tmp_path / "run"
    assert "ncu: Unable to access the following 1 metrics: sm__ops_path_tensor_src_fp8.sum" in profile.notes
    recorded = json.loads(fake_ncu.read_text())
    assert recorded["LC_ALL"] == "C" and recorded["APP_VAR"] == "1"
    argv = recorded["argv"]
    expected = build_ncu_argv(
        req, ncu=argv[0], report_path=Path(profile.source), log_path=Path(profile.source).with_suffix(".log")
    )
    assert argv == expected


def test_ncu_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    profiler = NcuProfiler(search_globs=())
    reason = profiler.availability()
    assert reason is not None and "ncu" in reason and "not found" in reason
    assert profiler.version() is None
    with pytest.raises(ProfilerUnavailable, match="not found"):
        profiler.profile(request(tmp_path))


def test_empty_command_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="empty"):
        NcuProfiler().profile(ProfileRequest(workdir=tmp_path))


def test_parse_available_kernels() -> None:
    text = "==WARNING== No kernels were profiled.\nAvailable Kernels:\n  1. vec_add\n  2. void gemm<128>(float *)\n\n==PROF== x"
    assert parse_available_kernels(text) == ["vec_add", "void gemm<128>(float *)"]
    assert parse_available_kernels("==WARNING== No kernels were profiled.") == []


def test_no_kernels_without_a_filter_names_the_kernels_seen_and_cuts_a_long_list() -> None:
    listed = "\n".join(f"    {i}. kernel_{i}" for i in range(1, 26))
    log = f"==WARNING== No kernels were profiled.\nAvailable Kernels:\n{listed}\n"
    done = CompletedCommand(argv=("ncu",), returncode=0, stdout="", stderr="", elapsed_s=0.1)
    with pytest.raises(NoKernelsProfiled) as info:
        check_ncu_run(done, log)
    assert len(info.value.available) == 25
    assert info.value.hint.startswith("kernels seen: kernel_1, kernel_2")
    assert info.value.hint.endswith("kernel_20 ...")  # the first 20, then an ellipsis
