"""CLI contract: exit codes, one-line errors, JSON-only stdout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from perfagent.cli import main
from tests.conftest import ncu_fixture

REPO = Path(__file__).resolve().parents[2]


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "perfagent", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd or REPO,
    )


def test_help_lists_every_command() -> None:
    out = _run("--help")
    assert out.returncode == 0
    for name in ("diagnose", "profile", "report", "doctor", "verify", "bench", "optimize", "tui"):
        assert name in out.stdout


def test_every_subcommand_help_renders() -> None:
    for name in ("diagnose", "profile", "report", "doctor", "verify", "bench", "optimize", "tui"):
        assert _run(name, "--help").returncode == 0, name


def test_no_command_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2


def test_missing_target_is_bad_input_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", "/no/such/file.ncu-rep"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("perfagent: ") and "—" in err[0]
    assert "Traceback" not in "\n".join(err)


def test_non_report_file_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake = tmp_path / "x.ncu-rep"
    fake.write_text("hello\n")
    assert main(["diagnose", str(fake)]) == 2
    assert "not an Nsight Compute report" in capsys.readouterr().err


def test_unsupported_suffix_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "notes.txt"
    f.write_text("x")
    assert main(["diagnose", str(f)]) == 2
    assert "don't know how to profile" in capsys.readouterr().err


def test_command_without_ncu_is_profiler_error(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "perfagent", "diagnose", "--profiler", "ncu", "--no-save", "--", "true"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": str(tmp_path), "PYTHONPATH": str(REPO)},
    )
    assert out.returncode == 3
    assert "ncu" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_json_stdout_is_pure_json_and_progress_goes_to_stderr() -> None:
    path = ncu_fixture("gtx1660s_vec_add_ncu2024.1.1_full.ncu-rep")
    out = _run("diagnose", str(path), "--format", "json")
    assert out.returncode == 0
    record = json.loads(out.stdout)
    assert list(record["kernels"][0])[:2] == ["name", "duration_s"]
    assert {"category", "severity", "title", "evidence", "estimated_speedup", "transforms"} <= set(
        record["kernels"][0]["findings"][0]
    )
    assert "perfagent:" in out.stderr


def test_output_file_not_overwritten_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = ncu_fixture("gtx1660s_vec_add_ncu2024.1.1_full.ncu-rep")
    dest = tmp_path / "out.md"
    dest.write_text("keep me")
    assert main(["diagnose", str(path), "--format", "md", "-o", str(dest)]) == 2
    assert dest.read_text() == "keep me"
    assert main(["diagnose", str(path), "--format", "md", "-o", str(dest), "--force"]) == 0
    assert "data:image/png;base64," in dest.read_text()


def test_report_rerenders_a_saved_run_without_gpu(tmp_path: Path) -> None:
    path = ncu_fixture("a10g_sgemm_4kernels_ncu2023.1.1_roofline.ncu-rep")
    assert (
        main(
            [
                "diagnose",
                str(path),
                "--run-dir",
                str(tmp_path / "run"),
                "--format",
                "json",
                "-o",
                str(tmp_path / "a.json"),
            ]
        )
        == 0
    )
    assert (tmp_path / "run" / "record.json").is_file()
    assert main(["report", str(tmp_path / "run"), "--format", "json", "-o", str(tmp_path / "b.json")]) == 0
    a, b = json.loads((tmp_path / "a.json").read_text()), json.loads((tmp_path / "b.json").read_text())
    assert a["kernels"] == b["kernels"]


def test_static_diagnose_of_example_has_same_json_shape() -> None:
    out = _run(
        "diagnose",
        "examples/cuda/06_register_spills/main.cu",
        "--profiler",
        "static",
        "--no-save",
        "--format",
        "json",
    )
    if out.returncode == 3:
        pytest.skip("nvcc not available")
    assert out.returncode == 0, out.stderr
    record = json.loads(out.stdout)
    assert record["mode"] == "static"
    spill = next(k for k in record["kernels"] if k["profile"]["base_name"] == "smooth_ring_spill")
    assert spill["duration_s"] is None
    assert spill["findings"][0]["category"] == "register-spills"


def test_doctor_json() -> None:
    out = _run("doctor", "--format", "json")
    assert out.returncode == 0
    report = json.loads(out.stdout)
    assert any(p["name"] == "profiler static" for p in report["probes"]) and report["will_use"]
