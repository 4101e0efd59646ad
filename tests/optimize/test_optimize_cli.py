"""`perfagent optimize` through ``perfagent.cli.main``: exit codes, JSON keys, --apply, --out, the LLM flags."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from rewrite.llm_server import MODEL, ReplayServer, Reply, fenced

from perfagent.cli import main
from tests.optimize.helpers import KB, TRANSPOSE, copy_example

KEY = "sk-cli-SECRET-13579"


@pytest.fixture(autouse=True)
def _no_llm_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("PERFAGENT_LLM_BASE_URL", "PERFAGENT_LLM_MODEL", "PERFAGENT_LLM_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PERFAGENT_RUNS_DIR", str(tmp_path / "runs"))


def _nvcc() -> None:
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed")


def test_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["optimize", str(tmp_path / "missing.cu")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert (
        main(["optimize", str(TRANSPOSE / "slow.cu"), "--transform", "tile-everything", "--device", "cpu"])
        == 2
    )
    assert "unknown transform 'tile-everything'" in capsys.readouterr().err
    assert main(["optimize", str(TRANSPOSE / "main.cu"), "--device", "cpu"]) == 2
    assert "main()" in capsys.readouterr().err
    assert main(["optimize", str(KB / "01_vector_add_triton.py"), "--device", "cpu"]) == 2
    assert "--problem" in capsys.readouterr().err


def test_llm_backend_without_an_endpoint_exits_5(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["optimize", str(TRANSPOSE / "slow.cu"), "--backend", "llm", "--device", "cpu"]) == 5
    assert "PERFAGENT_LLM_BASE_URL" in capsys.readouterr().err


def test_json_keys_require_win_and_no_write_without_apply(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _nvcc()
    folder = copy_example(TRANSPOSE, tmp_path)
    before = (folder / "slow.cu").read_text()
    argv = [
        "optimize",
        str(folder / "slow.cu"),
        "--backend",
        "recipes",
        "--transform",
        "smem-padding",
        "--device",
        "cpu",
        "--format",
        "json",
        "--out",
        str(tmp_path / "run"),
    ]
    assert main([*argv, "--require-win"]) == 4
    out = capsys.readouterr()
    data = json.loads(out.out)  # stdout holds nothing but the JSON record
    assert data["kind"] == "optimize" and data["best"] is None
    assert {"time_s", "pct_of_roofline", "profile"} <= set(data["baseline"])
    [cand] = data["candidates"]
    assert {"id", "backend", "transform", "verification", "accepted", "reason", "time_s"} <= set(cand)
    assert {"verdict", "checks"} <= set(cand["verification"])
    assert cand["accepted"] is False and cand["time_s"] is None and "not verified (no GPU)" in cand["reason"]
    assert data["optimize"]["candidates"] == data["candidates"] and data["optimize"]["table"]
    assert "no candidate was accepted (no GPU" in out.err
    assert (folder / "slow.cu").read_text() == before and not (folder / "slow.cu.orig").exists()
    # The run folder is not reused without --force; with it, the same run is written again (exit 0).
    assert main(argv) == 2
    assert "already holds a run" in capsys.readouterr().err
    assert main([*argv, "--force", "--apply"]) == 0
    assert (folder / "slow.cu").read_text() == before and not (folder / "slow.cu.orig").exists()
    assert "--apply: nothing was accepted" in json.loads(capsys.readouterr().out)["optimize"]["notes"][-1]


def test_text_output_and_default_run_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _nvcc()
    assert (
        main(
            [
                "optimize",
                str(TRANSPOSE / "slow.cu"),
                "--backend",
                "recipes",
                "--transform",
                "smem-padding",
                "--device",
                "cpu",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert (
        "before / after (original → best):" in text and "c1   smem-padding" in text and "not-verified" in text
    )
    [run] = list((tmp_path / "runs").iterdir())
    assert (run / "record.json").is_file() and (run / "summary.md").is_file()


def test_apply_writes_orig_and_the_best_only_with_the_flag(
    tmp_path: Path, simulated_gpu: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    folder = copy_example(TRANSPOSE, tmp_path)
    target = folder / "slow.cu"
    original = target.read_text()
    base = [
        "optimize",
        str(target),
        "--backend",
        "recipes",
        "--transform",
        "smem-padding",
        "--format",
        "json",
    ]
    assert main([*base, "--out", str(tmp_path / "r1")]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["best"] == "c1" and record["candidates"][0]["accepted"] is True
    assert target.read_text() == original and not (folder / "slow.cu.orig").exists()  # no --apply, no write
    assert main([*base, "--out", str(tmp_path / "r2"), "--apply"]) == 0
    applied = json.loads(capsys.readouterr().out)["optimize"]["applied"]
    assert (
        applied["backup"] == str(folder / "slow.cu.orig")
        and (folder / "slow.cu.orig").read_text() == original
    )
    assert "TILE_DIM + 1" in target.read_text()
    # A second --apply never overwrites the first backup: it makes its own, and says so.
    target.write_text(original + "// edited by hand after the first apply\n")
    second = target.read_text()
    assert main([*base, "--out", str(tmp_path / "r3"), "--apply"]) == 0
    applied = json.loads(capsys.readouterr().out)["optimize"]["applied"]
    assert applied["backup"] == str(folder / "slow.cu.orig.1")
    assert (folder / "slow.cu.orig.1").read_text() == second and (
        folder / "slow.cu.orig"
    ).read_text() == original
    assert any("slow.cu.orig already held an earlier original" in n for n in applied["notes"])
    assert "TILE_DIM + 1" in target.read_text()


def test_llm_flags_and_a_failing_endpoint_exit_5(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PERFAGENT_LLM_API_KEY", KEY)
    good = (KB / "01_vector_add_triton.py").read_text().replace("block = 1024", "block = 2048")
    with ReplayServer() as server:
        server.enqueue(Reply(content=fenced(good, "python"), held=True))
        code = main(
            [
                "optimize",
                str(KB / "01_vector_add_triton.py"),
                "--problem",
                str(KB / "01_vector_add.py"),
                "--backend",
                "llm",
                "--llm-base-url",
                server.base_url,
                "--llm-model",
                MODEL,
                "--llm-timeout",
                "0.5",
                "--transform",
                "launch-config",
                "--device",
                "cpu",
                "--out",
                str(tmp_path / "run"),
            ]
        )
        auth = server.completions[0].headers["authorization"]
    out = capsys.readouterr()
    assert code == 5 and "the LLM produced no candidate" in out.err
    assert auth == f"Bearer {KEY}"  # the key comes from the environment only
    assert KEY not in out.out + out.err and KEY not in (tmp_path / "run" / "record.json").read_text()
