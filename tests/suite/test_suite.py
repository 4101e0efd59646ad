"""`perfagent suite` and `perfagent compare` on CPU: manifests, discovery, the summary's arithmetic, both
executors end to end (local worker processes, a local Ray instance), resume after a killed run, per-entry
timeouts, the report renderers and the regression gate."""

from __future__ import annotations

import json
import math
import os
import select
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from perfagent.suite.manifest import discover, load_suite
from perfagent.suite.models import EntryResult, JobOutcome
from perfagent.suite.results import ResultsLog, summarize
from profilers.core_errors import BadInput

REPO = Path(__file__).resolve().parents[2]
KB = REPO / "examples" / "kernelbench"


def cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-m", "perfagent", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def write_suite(tmp: Path, entries: str) -> Path:
    path = tmp / "suite.toml"
    path.write_text(entries, encoding="utf-8")
    return path


CPU_SUITE = f"""
[[entry]]
name = "vector_add_triton"
target = "{KB / "01_vector_add.py"}"
candidate = "{KB / "01_vector_add_triton.py"}"

[[entry]]
name = "matmul_relu_triton"
target = "{KB / "02_matmul_relu.py"}"
candidate = "{KB / "02_matmul_relu_triton.py"}"

[[entry]]
name = "degenerate_gemm"
target = "{KB / "03_degenerate_gemm_max_sub_gelu.py"}"
"""


# ---- manifests and discovery ------------------------------------------------------------------


def test_manifest_paths_are_relative_to_the_file(tmp_path: Path) -> None:
    (tmp_path / "k").mkdir()
    (tmp_path / "k" / "p.py").write_text((KB / "01_vector_add.py").read_text())
    suite = write_suite(tmp_path, '[[entry]]\nname = "a"\ntarget = "k/p.py"\noptions = { runs = 7 }\n')
    [entry] = load_suite(suite)
    assert entry.target == (tmp_path / "k" / "p.py").resolve()
    assert entry.kind == "kernelbench" and entry.options.runs == 7


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('[[entry]]\nname = "a"\n', "target"),
        ('[[entry]]\nname = "a"\ntarget = "missing.py"\n', "does not exist"),
        ("[[entry]\n", "not valid TOML"),
        ("", "no suite entries"),
        ('[[entry]]\nname = "a"\ntarget = "x.py"\nbogus = 1\n', "bogus"),
    ],
)
def test_bad_manifests_are_bad_input(tmp_path: Path, text: str, needle: str) -> None:
    (tmp_path / "x.py").write_text("class Model: pass\n")
    with pytest.raises(BadInput, match=needle):
        load_suite(write_suite(tmp_path, text))


def test_duplicate_names_are_refused(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text("class Model: pass\n")
    text = '[[entry]]\nname = "a"\ntarget = "x.py"\n' * 2
    with pytest.raises(BadInput, match="twice"):
        load_suite(write_suite(tmp_path, text))


def test_discovery_finds_pairs_specs_and_triton_scripts() -> None:
    names = {e.name: e for e in discover(REPO / "examples")}
    pair = names["kernelbench/01_vector_add_triton.py"]
    assert pair.target.name == "01_vector_add.py" and pair.kind == "kernelbench"
    transpose = names["cuda/01_transpose_naive/slow.cu"]
    assert transpose.candidate is not None and transpose.candidate.name == "fixed.cu"
    assert names["triton/01_matmul_bad_config.py"].kind == "triton-script"
    assert not any(n.endswith("__init__.py") for n in names)
    # `NN_name_problem.py` pairs with `NN_name_solution.py` (the unseen KernelBench set's naming)
    solution = names["unseen/kernelbench/03_matvec_solution.py"]
    assert (
        solution.target.name == "03_matvec_problem.py"
        and solution.candidate == solution.target.parent / "03_matvec_solution.py"
    )
    assert "unseen/kernelbench/03_matvec_problem.py" not in names


def test_jobs_that_do_not_apply_are_skipped_with_a_reason() -> None:
    from perfagent.suite.entry_runner import _plan

    assert _plan(["verify", "bench", "optimize"], "triton-script", False) == ["optimize"]
    assert _plan(["verify", "bench"], "kernelbench", False) == ["bench"]
    assert _plan(["verify", "bench"], "cuda-kernel", True) == ["verify", "bench"]


# ---- the summary's arithmetic -----------------------------------------------------------------


def row(
    name: str,
    *,
    correct: bool | None,
    speedup: float | None = None,
    failure: str | None = None,
    won: list[str] | None = None,
) -> EntryResult:
    return EntryResult(
        name=name,
        kind="kernelbench",
        target=name,
        correct=correct,
        speedup=speedup,
        failure=failure,  # type: ignore[arg-type]
        transforms_won=won or [],
        jobs=[JobOutcome(job="verify", ok=bool(correct), elapsed_s=1.0)],
    )


def test_fast_p_and_geomean_follow_kernelbench() -> None:
    rows = [
        row("a", correct=True, speedup=2.5, won=["smem-tiling"]),
        row("b", correct=True, speedup=1.2, won=["smem-tiling", "vectorize-access"]),
        row("c", correct=True, speedup=0.5),
        row("d", correct=False, speedup=9.0, failure="incorrect"),  # fast but wrong: never counts
        row("e", correct=None, failure="timeout"),
    ]
    s = summarize(rows)
    assert s.total == 5 and s.correct == 3 and s.verified == 4
    assert s.correct_rate == pytest.approx(0.75)
    # fraction of ALL entries correct and strictly faster than p
    assert s.fast_p == {"1": pytest.approx(2 / 5), "1.5": pytest.approx(1 / 5), "2": pytest.approx(1 / 5)}
    assert s.geomean_speedup == pytest.approx(math.exp((math.log(2.5) + math.log(1.2) + math.log(0.5)) / 3))
    assert s.transforms_won == {"smem-tiling": 2, "vectorize-access": 1}
    assert s.failures == {"incorrect": 1, "timeout": 1}


def test_empty_and_torn_results(tmp_path: Path) -> None:
    log = ResultsLog(tmp_path)
    log.append(row("a", correct=True, speedup=1.5))
    with log.path.open("a") as f:
        f.write('{"name": "b", "kind": "kernel')  # killed mid-write
    assert [r.name for r in log.read()] == ["a"]
    assert log.finished() == {"a"}
    assert summarize([]).fast_p == {"1": 0.0, "1.5": 0.0, "2": 0.0}


# ---- executors end to end ---------------------------------------------------------------------


def _rows(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]


def test_local_executor_two_workers_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    suite = write_suite(tmp_path, CPU_SUITE)
    out = tmp_path / "out"
    proc = cli(
        "suite",
        str(suite),
        "--device",
        "cpu",
        "--workers",
        "2",
        "--jobs",
        "verify,bench",
        "--runs",
        "3",
        "--seeds",
        "1",
        "--out",
        str(out),
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    rows = {r["name"]: r for r in _rows(out)}
    assert set(rows) == {"vector_add_triton", "matmul_relu_triton", "degenerate_gemm"}
    assert rows["vector_add_triton"]["verdict"] == "pass" and rows["vector_add_triton"]["speedup"] > 0
    assert rows["degenerate_gemm"]["baseline_s"] > 0 and rows["degenerate_gemm"]["correct"] is None
    assert {r["worker"].split(" ")[0] for r in rows.values()} <= {"local/0", "local/1"}
    assert all(r["host"] and r["versions"]["perfagent"] for r in rows.values())
    assert summary["total"] == 3 and summary["correct"] == 2 and summary["executor"] == "local"
    assert set(summary["fast_p"]) == {"1", "1.5", "2"}
    assert (out / "summary.json").is_file()
    assert "ETA" in proc.stderr
    # each entry's time is kept for the next run's longest-first order, under this job list
    costs = json.loads((out / "entry_costs.json").read_text())["bench,verify"]
    assert set(costs) == set(rows) and all(v == round(rows[k]["elapsed_s"], 2) for k, v in costs.items())


def test_ray_executor_on_a_local_instance(tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="the ray extra is not installed")
    pytest.importorskip("torch")
    suite = write_suite(tmp_path, CPU_SUITE)
    out = tmp_path / "ray"
    proc = cli(
        "suite",
        str(suite),
        "--executor",
        "ray",
        "--device",
        "cpu",
        "--workers",
        "2",
        "--jobs",
        "verify",
        "--seeds",
        "1",
        "--out",
        str(out),
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    rows = {r["name"]: r for r in _rows(out)}
    assert rows["vector_add_triton"]["verdict"] == "pass" and rows["matmul_relu_triton"]["verdict"] == "pass"
    assert all(str(r["worker"]).startswith("ray/") for r in rows.values())
    assert json.loads(proc.stdout)["executor"] == "ray"


def _wait_for_line(proc: subprocess.Popen[str], needle: str, seen: threading.Event) -> None:
    """Read ``proc``'s stderr; set ``seen`` at the first line holding ``needle``."""
    assert proc.stderr is not None
    for line in proc.stderr:
        if needle in line:
            seen.set()
            return


def _pids_of(pattern: str) -> list[int]:
    found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True, check=False)
    return [int(pid) for pid in found.stdout.split()]


def _ended(pid: int, within_s: float) -> bool:
    """Wait until process ``pid`` has ended (its pidfd becomes readable), at most ``within_s``."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], within_s)[0])
    finally:
        os.close(fd)


def test_resume_after_a_killed_run_runs_each_entry_once(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    suite = write_suite(tmp_path, CPU_SUITE)
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    argv = [
        sys.executable,
        "-m",
        "perfagent",
        "suite",
        str(suite),
        "--device",
        "cpu",
        "--workers",
        "1",
        "--jobs",
        "verify",
        "--seeds",
        "1",
        "--out",
        str(out),
    ]
    proc = subprocess.Popen(
        argv,
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    # the first progress line is printed after its row was appended: the event to kill on (issue 26: a
    # poll for results.jsonl raced the run under load)
    first_row = threading.Event()
    reader = threading.Thread(target=_wait_for_line, args=(proc, "] 1/3 ", first_row), daemon=True)
    reader.start()
    assert first_row.wait(300), "the suite finished no entry"
    workers = _pids_of(f"perfagent.suite.worker {out}")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert all(_ended(pid, within_s=60) for pid in workers)  # the group's kill reached every worker
    orphans = subprocess.run(
        ["pgrep", "-f", f"perfagent.suite.worker {out}"], capture_output=True, text=True, check=False
    )
    assert not orphans.stdout.strip(), "a killed suite must not leave its workers running"
    first = [r["name"] for r in _rows(out)]
    assert 1 <= len(first) < 3, first

    again = cli(
        "suite",
        str(suite),
        "--device",
        "cpu",
        "--workers",
        "1",
        "--jobs",
        "verify",
        "--seeds",
        "1",
        "--out",
        str(out),
        "--resume",
    )
    assert again.returncode == 0, again.stderr
    names = [r["name"] for r in _rows(out)]
    assert sorted(names) == sorted(
        {"vector_add_triton", "matmul_relu_triton", "degenerate_gemm"}
    )  # each once
    refused = cli("suite", str(suite), "--device", "cpu", "--jobs", "verify", "--out", str(out))
    assert refused.returncode == 2 and "--resume" in refused.stderr


def test_entry_timeout_kills_the_worker_and_records_why(tmp_path: Path) -> None:
    suite = write_suite(
        tmp_path,
        CPU_SUITE.replace(
            'name = "degenerate_gemm"', 'name = "degenerate_gemm"\noptions = { timeout_s = 0.5 }'
        ),
    )
    out = tmp_path / "out"
    proc = cli(
        "suite",
        str(suite),
        "--device",
        "cpu",
        "--workers",
        "2",
        "--jobs",
        "bench",
        "--runs",
        "3",
        "--out",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr
    rows = {r["name"]: r for r in _rows(out)}
    assert rows["degenerate_gemm"]["failure"] == "timeout"
    assert rows["vector_add_triton"]["failure"] is None


# ---- report and compare -----------------------------------------------------------------------


def _fake_suite(folder: Path, rows: list[EntryResult]) -> Path:
    folder.mkdir(parents=True)
    log = ResultsLog(folder)
    for r in rows:
        log.append(r)
    return folder


def timed(name: str, t: float, *, correct: bool = True, noise: float = 0.02) -> EntryResult:
    return EntryResult(
        name=name,
        kind="kernelbench",
        target=name,
        correct=correct,
        baseline_s=t * 2,
        candidate_s=t,
        speedup=2.0,
        noise_threshold=noise,
    )


def test_report_renders_a_suite_in_every_format(tmp_path: Path) -> None:
    folder = _fake_suite(tmp_path / "s", [timed("a", 1e-3), timed("b", 2e-3)])
    for fmt in ("text", "md", "html", "json"):
        proc = cli("report", str(folder), "--format", fmt)
        assert proc.returncode == 0, proc.stderr
        assert "a" in proc.stdout
    html = cli("report", str(folder), "--format", "html").stdout
    assert "data:image/png;base64," in html and "fast_p" in html


def test_compare_gate_on_suites(tmp_path: Path) -> None:
    a = _fake_suite(tmp_path / "a", [timed("x", 1.00e-3), timed("y", 1.00e-3), timed("z", 1.0e-3)])
    same = _fake_suite(tmp_path / "b", [timed("x", 1.01e-3), timed("y", 0.99e-3), timed("z", 1.0e-3)])
    worse = _fake_suite(
        tmp_path / "c", [timed("x", 1.20e-3), timed("y", 1.0e-3), timed("z", 1.0e-3, correct=False)]
    )

    ok = cli("compare", str(a), str(same), "--gate", "--format", "json")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["gate"]["passed"] is True

    bad = cli("compare", str(a), str(worse), "--gate", "--format", "json")
    assert bad.returncode == 1
    verdict = json.loads(bad.stdout)["gate"]
    assert not verdict["passed"]
    assert any(r.startswith("x:") for r in verdict["regressions"]) and any(
        "z: no longer correct" in r for r in verdict["regressions"]
    )

    tolerant = cli("compare", str(a), str(worse), "--gate", "--max-regression", "25", "--format", "json")
    assert tolerant.returncode == 1  # the correctness regression still fails the gate
    assert not any(r.startswith("x:") for r in json.loads(tolerant.stdout)["gate"]["regressions"])


def test_compare_reports_pairs_renamed_kernels_and_gates_within_noise() -> None:
    proc = cli(
        "compare",
        "examples/reports/01_transpose_naive.ncu-rep",
        "examples/reports/01_transpose_naive.ncu-rep",
        "--gate",
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["gate"]["passed"] and {k["verdict"] for k in data["comparison"]["kernels"]} == {
        "same (within noise)"
    }
    renamed = cli(
        "compare",
        "examples/reports/01_transpose_naive.ncu-rep",
        "examples/reports/02_transpose_bank_conflicts.ncu-rep",
        "--format",
        "json",
    )
    kernels = json.loads(renamed.stdout)["comparison"]["kernels"]
    assert kernels and all(k["matched_by"] == "position" for k in kernels)


@pytest.mark.parametrize(
    "args",
    [
        ("compare", "missing-a", "missing-b"),
        ("suite", "missing-suite.toml", "--out", "/tmp/perfagent-suite-never"),
        ("suite", "README.md", "--out", "/tmp/perfagent-suite-never"),
        ("suite", "examples/kernelbench", "--jobs", "dance", "--out", "/tmp/perfagent-suite-never"),
    ],
)
def test_bad_input_is_one_line_exit_2(args: tuple[str, ...]) -> None:
    proc = cli(*args)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.strip()
