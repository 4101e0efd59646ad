"""First contact (issue 10): what a new user hits in the first hour, end to end through the real CLI.

Every case runs ``python -m perfagent ...`` in a subprocess, in a folder of the user's files, on the CPU,
and checks: the documented exit code, one error line on stderr (no traceback), and that no user file was
touched (mtimes and hashes of every file the user had) and no empty run folder was left behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from tests.conftest import as_from_a_terminal
from tests.rewrite.llm_server import ReplayServer, Reply

REPO = Path(__file__).resolve().parents[1]
KB = REPO / "examples" / "kernelbench"
REPORT = REPO / "examples" / "reports" / "01_transpose_naive.ncu-rep"
OPTIMIZE_KB = [
    "optimize",
    "01_vector_add_triton.py",
    "--problem",
    "01_vector_add.py",
    "--device",
    "cpu",
    "--iterations",
    "1",
    "--candidates",
    "1",
    "--seeds",
    "1",
]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PERFAGENT_", "OPENAI_"))}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (extra.pop("PREPEND", ""), str(REPO)) if p)
    return {**env, **extra}


def cli(
    args: Sequence[str], cwd: Path, *, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "perfagent", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env=env or _env(),
        stdin=subprocess.DEVNULL,
    )


def error_line(stderr: str, *, progress: int = 2) -> str:
    """The one error line: the last line on stderr; at most ``progress`` progress lines come before it."""
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    assert lines, "nothing on stderr"
    assert "Traceback" not in stderr and all(ln.startswith("perfagent") for ln in lines), stderr
    assert len(lines) <= progress + 1, f"more than {progress} progress lines before the error:\n{stderr}"
    return lines[-1]


def snapshot(folder: Path) -> dict[str, tuple[int, str]]:
    """(mtime, sha256) of every file the user has (perfagent's own run folders excluded)."""
    return {
        str(p.relative_to(folder)): (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".perfagent" not in p.parts
    }


@pytest.fixture(scope="module")
def user_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's folder holding every kind of bad input, and two good KernelBench files."""
    d = tmp_path_factory.mktemp("user")
    (d / "dir.cu").mkdir()
    (d / "dir.py").mkdir()
    (d / "outdir").mkdir()
    for name in ("empty.cu", "empty.py", "empty.ncu-rep", "empty.json"):
        (d / name).write_bytes(b"")
    binary = bytes(range(256)) * 8
    for name in ("bin.cu", "bin.py", "bin.ncu-rep", "bin.json"):
        (d / name).write_bytes(binary)
    (d / "notes.txt").write_text("hello\n")
    (d / "nokernel.cu").write_text("int add(int a, int b) { return a + b; }\n")
    (d / "nospec.cu").write_text("__global__ void k(float* x) { x[0] = 1.0f; }\n")
    (d / "trunc.ncu-rep").write_bytes(REPORT.read_bytes()[:60_000])
    (d / "plain.py").write_text("print('hello')\n")
    (d / "existing.txt").write_text("keep me\n")
    (d / "record.json").write_text('{"kind": "diagnose"}\n')
    for name in ("01_vector_add.py", "01_vector_add_triton.py"):
        shutil.copy(KB / name, d / name)
    return d


BAD_INPUT: list[tuple[list[str], str]] = [
    # diagnose / profile: the wrong thing, in every shape
    (["diagnose", "missing.cu"], "missing.cu does not exist"),
    (["diagnose", "dir.cu"], "is a folder"),
    (["diagnose", "empty.cu"], "empty.cu is empty"),
    (["diagnose", "empty.py"], "empty.py is empty"),
    (["diagnose", "bin.cu"], "not a source file (binary content)"),
    (["diagnose", "bin.py"], "not a source file (binary content)"),
    (["diagnose", "notes.txt"], "don't know how to profile"),
    (["diagnose", "nokernel.cu"], "defines no __global__ kernel"),
    (["diagnose", "empty.ncu-rep"], "is not an Nsight Compute report"),
    (["diagnose", "bin.ncu-rep"], "is not an Nsight Compute report"),
    (["diagnose", "trunc.ncu-rep"], "trunc.ncu-rep is a damaged or truncated report"),
    (["profile", "trunc.ncu-rep"], "trunc.ncu-rep is a damaged or truncated report"),
    (["profile", "nokernel.cu", "--profiler", "static"], "defines no __global__ kernel"),
    (["profile", "bin.cu"], "binary content"),
    # report: a report is not a saved run; anything else is not one either
    (["report", "trunc.ncu-rep"], "is a profiler report, not a saved run — use `perfagent diagnose"),
    (["report", "bin.ncu-rep"], "is a profiler report, not a saved run"),
    (["report", "missing"], "cannot read run record"),
    (["report", "dir.cu"], "cannot read run record"),
    (["report", "bin.json"], "is not a perfagent run record (binary"),
    (["report", "empty.json"], "is not a perfagent run record"),
    (["report", "notes.txt"], "is not a perfagent run record"),
    (["report", "record.json"], "is not a perfagent run record"),
    # verify / bench / optimize
    (["verify", "missing.py", "01_vector_add_triton.py", "--device", "cpu"], "does not exist"),
    (["verify", "dir.py", "01_vector_add_triton.py", "--device", "cpu"], "is a folder"),
    (
        ["verify", "bin.py", "01_vector_add_triton.py", "--device", "cpu"],
        "not a source file (binary content)",
    ),
    (["verify", "notes.txt", "notes.txt"], "don't know how to verify"),
    (["verify", "01_vector_add.py", "bin.py", "--device", "cpu"], "not a text file"),
    (["bench", "empty.cu"], "empty.cu is empty"),
    (["bench", "nospec.cu"], "nospec.cu is a kernel file without a launch spec"),
    (["verify", "nospec.cu", "nospec.cu"], "nospec.cu is a kernel file without a launch spec"),
    (["bench", "plain.py"], "cannot time a python-script"),
    (["optimize", "missing.cu"], "does not exist"),
    (["optimize", "dir.py"], "is not a file"),
    (["optimize", "bin.py"], "not a source file (binary content)"),
    (["optimize", "notes.txt"], "cannot optimize notes.txt"),
    (["optimize", "plain.py"], "no Triton kernel and no KernelBench interface"),
    (["optimize", "trunc.ncu-rep"], "cannot optimize"),
    # output paths: checked before any work
    (["diagnose", str(REPORT), "-o", "outdir", "--force"], "-o outdir is a folder"),
    (["diagnose", str(REPORT), "-o", "existing.txt"], "existing.txt already exists"),
    (["diagnose", str(REPORT), "-o", "/proc/perfagent-out.txt"], "cannot write -o /proc/perfagent-out.txt"),
    (["diagnose", str(REPORT), "-o", "notes.txt/out.md"], "notes.txt is not a folder"),
    (["report", "record.json", "-o", "outdir", "--force"], "-o outdir is a folder"),
    ([*OPTIMIZE_KB, "--backend", "recipes", "-o", "outdir", "--force"], "-o outdir is a folder"),
    ([*OPTIMIZE_KB, "--backend", "recipes", "--out", "notes.txt"], "is a file, not a folder"),
    (["profile", str(REPORT), "--save-report", "outdir"], "--save-report outdir is a folder"),
    (["doctor", "-o", "outdir", "--force"], "-o outdir is a folder"),
    # tui: bad input fails before the screen is taken over
    (["tui", "missing.cu"], "does not exist"),
    (["tui", "bin.cu"], "binary content"),
    (["tui", "notes.txt"], "don't know how to profile"),
]


@pytest.mark.parametrize(("args", "says"), BAD_INPUT, ids=[" ".join(a)[:60] for a, _ in BAD_INPUT])
def test_bad_input_is_exit_2_with_one_line_and_touches_nothing(
    user_dir: Path, args: list[str], says: str
) -> None:
    before = snapshot(user_dir)
    done = cli(args, user_dir)
    line = error_line(done.stderr)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert says in line and " — " in line, line  # cause — next step
    assert "pydantic" not in line and "errors.pydantic.dev" not in line and "codec can't decode" not in line
    assert done.stdout == ""
    assert snapshot(user_dir) == before
    assert not (user_dir / ".perfagent").exists(), "a failed command left a run folder behind"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file: an unreadable file cannot be made")
def test_an_unreadable_file_is_bad_input(tmp_path: Path) -> None:
    secret = tmp_path / "secret.cu"
    secret.write_text("__global__ void k() {}\n")
    secret.chmod(0)
    done = cli(["diagnose", "secret.cu"], tmp_path)
    assert done.returncode == 2 and "cannot read" in error_line(done.stderr)


def test_relative_paths_cross_process_boundaries_and_correct_candidates_pass(
    user_dir: Path, tmp_path: Path
) -> None:
    """The default run folder is relative to the user's folder; the verify worker runs in a temporary one."""
    work = tmp_path / "w"
    shutil.copytree(user_dir, work, ignore=shutil.ignore_patterns(".perfagent"))
    done = cli([*OPTIMIZE_KB, "--backend", "recipes", "--format", "json"], work)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    [c1] = record["candidates"]
    assert c1["verification"]["verdict"] == "pass" and c1["verdict"] == "not-timed", c1["reason"]
    assert "worker" not in c1["reason"]


def test_an_internal_error_is_exit_1_never_a_candidates_failure(user_dir: Path, tmp_path: Path) -> None:
    """A worker that cannot import torch is perfagent's problem: exit 1, 'perfagent failed', nothing judged."""
    shadow = tmp_path / "shadow" / "torch"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('simulated broken torch install')\n")
    work = tmp_path / "w"
    shutil.copytree(user_dir, work, ignore=shutil.ignore_patterns(".perfagent"))
    done = cli([*OPTIMIZE_KB, "--backend", "recipes"], work, env=_env(PREPEND=str(shadow.parent)))
    line = error_line(done.stderr, progress=99)
    assert done.returncode == 1 and line.startswith("perfagent failed: ") and "was not judged" in line
    [record_file] = (work / ".perfagent" / "runs").glob("*/record.json")
    record = json.loads(record_file.read_text())
    assert record["candidates"] == [] and record["optimize"]["stopped"].startswith("stopped by an error")
    assert "incorrect" not in done.stderr


@pytest.fixture
def llm_server() -> Iterator[ReplayServer]:
    with ReplayServer() as srv:
        yield srv


def test_an_endpoint_answering_invalid_json_is_exit_5_with_a_complete_run_folder(
    user_dir: Path, tmp_path: Path, llm_server: ReplayServer
) -> None:
    llm_server.enqueue(*[Reply(raw_body=b"<html>502 bad gateway</html>")] * 8)
    work = tmp_path / "w"
    shutil.copytree(user_dir, work, ignore=shutil.ignore_patterns(".perfagent"))
    env = _env(
        PERFAGENT_LLM_BASE_URL=llm_server.base_url, PERFAGENT_LLM_MODEL="m", PERFAGENT_LLM_MAX_RETRIES="0"
    )
    done = cli([*OPTIMIZE_KB, "--backend", "llm"], work, env=env)
    line = error_line(done.stderr, progress=99)
    assert done.returncode == 5, done.stderr
    assert "did not answer with an OpenAI chat-completions response" in line and "JSONDecodeError" in line
    [run] = (work / ".perfagent" / "runs").iterdir()
    record = json.loads((run / "record.json").read_text())
    assert record["optimize"]["llm_errors"] and (run / "summary.md").is_file()


def test_an_interrupted_optimize_keeps_what_it_measured(user_dir: Path, tmp_path: Path) -> None:
    work = tmp_path / "w"
    shutil.copytree(user_dir, work, ignore=shutil.ignore_patterns(".perfagent"))
    args = [a if a != "1" else "3" for a in OPTIMIZE_KB]  # room for more candidates than we let finish
    proc = subprocess.Popen(
        [sys.executable, "-m", "perfagent", *args, "--backend", "recipes"],
        cwd=work,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=as_from_a_terminal,
    )
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if line.startswith("perfagent: c1 "):  # c1's verdict: interrupt while c2 runs
            proc.send_signal(signal.SIGINT)
            break
    _, rest = proc.communicate(timeout=120)
    assert proc.returncode == 130, "".join(seen) + rest
    assert rest.strip().splitlines()[-1].startswith("perfagent: interrupted (")
    assert "Traceback" not in rest
    [run] = (work / ".perfagent" / "runs").iterdir()
    record = json.loads((run / "record.json").read_text())
    assert [c["id"] for c in record["candidates"]][:1] == ["c1"]
    assert record["optimize"]["stopped"].startswith("interrupted")
    shown = cli(["report", str(run)], work)
    assert shown.returncode == 0 and "c1 " in shown.stdout and "stopped: interrupted" in shown.stdout


def test_a_plain_pytorch_problem_says_why_nothing_is_tried_and_what_next(
    user_dir: Path, tmp_path: Path
) -> None:
    work = tmp_path / "w"
    shutil.copytree(user_dir, work, ignore=shutil.ignore_patterns(".perfagent"))
    done = cli(["optimize", "01_vector_add.py", "--backend", "recipes", "--device", "cpu"], work)
    assert done.returncode == 0, done.stderr
    assert "01_vector_add.py is plain PyTorch" in done.stderr and "no kernel" in done.stderr
    assert "next step: write a ModelNew" in done.stderr
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith("perfagent: no candidate was produced (nothing to try:")
    )


def test_report_of_a_report_is_not_an_internal_error(user_dir: Path) -> None:
    done = cli(["report", str(REPORT)], user_dir)
    assert done.returncode == 2 and "use `perfagent diagnose" in error_line(done.stderr)
