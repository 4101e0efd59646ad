"""Issue 26 on suites: work this machine cannot do is skipped (not failed, not counted), a torn last row
is dropped on resume, an interrupted run keeps its rows and says how to finish, and the gate judges
noise, unreliable timings, missing and disjoint entries."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from perfagent.compare import GateInput, gate
from perfagent.suite.api import run_suite
from perfagent.suite.compare import compare_suites, suite_changes
from perfagent.suite.executors import ResultSink
from perfagent.suite.manifest import SuiteEntry
from perfagent.suite.models import EntryResult, JobOutcome, SuiteSettings
from perfagent.suite.results import RESULTS_FILE, SUMMARY_FILE, ResultsLog, summarize
from tests.conftest import as_from_a_terminal

REPO = Path(__file__).resolve().parents[2]
KB = REPO / "examples" / "kernelbench"
CUDA = REPO / "examples" / "cuda" / "01_transpose_naive"


def _row(name: str, t: float = 1e-3, **extra: object) -> EntryResult:
    fields: dict[str, object] = {
        "name": name,
        "kind": "kernelbench",
        "target": name,
        "correct": True,
        "baseline_s": t,
        "jobs": [JobOutcome(job="bench", ok=True, elapsed_s=1.0)],
        **extra,
    }
    return EntryResult.model_validate(fields)


def _suite_file(tmp: Path, names: Sequence[str]) -> Path:
    path = tmp / "suite.toml"
    path.write_text(
        "".join(f'[[entry]]\nname = "{n}"\ntarget = "{KB / "01_vector_add.py"}"\n\n' for n in names),
        encoding="utf-8",
    )
    return path


class RowsExecutor:
    """Hands back one made-up row per entry (the suite's bookkeeping is what these tests are about),
    raising KeyboardInterrupt after ``interrupt_after`` rows when given."""

    name = "rows"
    workers = 1

    def __init__(self, interrupt_after: int | None = None) -> None:
        self.interrupt_after = interrupt_after
        self.ran: list[str] = []

    def run(
        self, entries: Sequence[SuiteEntry], settings: SuiteSettings, out: Path, on_result: ResultSink
    ) -> None:
        for entry in entries:
            if self.interrupt_after is not None and len(self.ran) == self.interrupt_after:
                raise KeyboardInterrupt
            self.ran.append(entry.name)
            on_result(_row(entry.name))


# ---- torn rows ---------------------------------------------------------------------------------


def test_resume_drops_a_torn_last_row_and_reports_it(tmp_path: Path) -> None:
    suite = _suite_file(tmp_path, ["a", "b", "c"])
    out = tmp_path / "out"
    out.mkdir()
    torn = _row("b").model_dump_json()[:50]
    (out / RESULTS_FILE).write_text(_row("a").model_dump_json() + "\n" + torn, encoding="utf-8")
    notes: list[str] = []
    executor = RowsExecutor()
    summary = run_suite(
        suite, SuiteSettings(jobs=["bench"]), out, executor, resume=True, on_note=notes.append
    )
    assert executor.ran == ["b", "c"] or sorted(executor.ran) == ["b", "c"]
    lines = (out / RESULTS_FILE).read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["name"] for line in lines] == ["a", *executor.ran]  # every line whole
    assert summary.total == 3
    assert len(notes) == 1 and "torn last line" in notes[0] and summary.notes == notes


def test_a_whole_last_row_is_kept(tmp_path: Path) -> None:
    log = ResultsLog(tmp_path)
    log.append(_row("a"))
    log.append(_row("b"))
    assert log.drop_torn_tail() is None
    assert [r.name for r in log.read()] == ["a", "b"]


def test_a_last_row_without_its_newline_is_torn(tmp_path: Path) -> None:
    log = ResultsLog(tmp_path)
    log.append(_row("a"))
    with log.path.open("a", encoding="utf-8") as f:
        f.write(_row("b").model_dump_json())  # complete JSON, but the newline never made it
    assert log.drop_torn_tail() is not None
    log.append(_row("c"))
    assert [r.name for r in log.read()] == ["a", "c"]


# ---- interrupted runs --------------------------------------------------------------------------


def test_an_interrupted_run_keeps_its_rows_and_writes_a_partial_summary(tmp_path: Path) -> None:
    suite = _suite_file(tmp_path, ["a", "b", "c"])
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt) as caught:
        run_suite(suite, SuiteSettings(jobs=["bench"]), out, RowsExecutor(interrupt_after=1))
    summary = json.loads((out / SUMMARY_FILE).read_text(encoding="utf-8"))
    assert summary["partial"] is True and summary["total"] == 1
    assert any("--resume" in n for n in caught.value.__notes__)
    again = run_suite(suite, SuiteSettings(jobs=["bench"]), out, RowsExecutor(), resume=True)
    assert again.total == 3 and not again.partial


def _slow_suite(tmp: Path) -> Path:
    slow = tmp / "slow_candidate.py"
    slow.write_text(
        (KB / "01_vector_add.py").read_text(encoding="utf-8")
        # the candidate blocks on an event nothing sets, so the signal always finds its worker running
        + "\n\nimport threading\n\nclass ModelNew(Model):\n    def forward(self, *args):\n"
        "        threading.Event().wait(120)\n        return super().forward(*args)\n",
        encoding="utf-8",
    )
    path = tmp / "suite.toml"
    path.write_text(
        f'[[entry]]\nname = "slow"\ntarget = "{KB / "01_vector_add.py"}"\ncandidate = "{slow}"\n',
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGHUP, signal.SIGTERM])
def test_a_signal_stops_a_suite_at_once_and_leaves_no_temporary_folders(
    tmp_path: Path, sig: signal.Signals
) -> None:
    pytest.importorskip("torch")
    suite, out, tmp = _slow_suite(tmp_path), tmp_path / "out", tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, PYTHONPATH=str(REPO), TMPDIR=str(tmp))
    argv = [sys.executable, "-m", "perfagent", "suite", str(suite), "--device", "cpu", "--jobs", "verify"]
    proc = subprocess.Popen(
        [*argv, "--seeds", "1", "--out", str(out)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=as_from_a_terminal,
    )
    # Wait until the candidate's verify worker runs (its folder exists: a warm-started worker's sits in
    # the process's perfagent-workers-* folder), or the suite ends (a failure).
    while not any(tmp.rglob("perfagent-worker-*")):
        try:
            proc.wait(timeout=0.2)  # an event (the suite ending) with a timeout, not a fixed sleep
        except subprocess.TimeoutExpired:
            continue
        pytest.fail("the suite ended before its worker started")
    os.kill(proc.pid, sig)  # what a terminal sends: perfagent only, its workers run in their own sessions
    assert proc.stderr is not None
    rest = proc.stderr.read()
    code = proc.wait(timeout=60)
    assert code == 130, rest
    assert "--resume" in rest, rest
    assert json.loads((out / SUMMARY_FILE).read_text(encoding="utf-8"))["partial"] is True
    leftovers = sorted(p.name for p in tmp.iterdir() if p.name.startswith("perfagent-"))
    assert leftovers == [], leftovers


# ---- work this machine cannot do ----------------------------------------------------------------


def test_launch_spec_work_on_a_cpu_is_skipped_with_why() -> None:
    pytest.importorskip("torch")
    from perfagent.suite.entry_runner import run_entry

    entry = SuiteEntry(name="t", target=CUDA / "slow.cu", candidate=CUDA / "fixed.cu", kind="cuda-kernel")
    row = run_entry(
        entry.model_dump(mode="json"), SuiteSettings(jobs=["verify", "bench"], device="cpu"), Path(".")
    )
    assert row.failure is None and row.correct is None
    assert set(row.skipped) == {"verify", "bench"}
    assert all("CUDA GPU" in why for why in row.skipped.values())


def test_a_load_inline_candidate_without_a_cuda_torch_is_skipped_before_any_worker() -> None:
    torch = pytest.importorskip("torch")
    if torch.version.cuda is not None:
        pytest.skip("this torch can build load_inline candidates")
    from perfagent.suite.entry_runner import machine_gap

    gap = machine_gap("verify", KB / "01_vector_add_cuda.py")
    assert gap is not None and "no CUDA" in gap
    assert machine_gap("verify", KB / "01_vector_add_triton.py") is None
    assert machine_gap("diagnose", KB / "01_vector_add_cuda.py") is None


def test_skipped_work_is_counted_in_no_rate_and_listed() -> None:
    why = "launch-spec kernels run only on a CUDA GPU"
    rows = [
        _row("ok", correct=True, verdict="pass", speedup=2.0),
        _row("gpu1", correct=None, jobs=[], skipped={"verify": why, "bench": why}),
        _row("gpu2", correct=None, jobs=[], skipped={"verify": why}),
    ]
    s = summarize(rows)
    assert s.verified == 1 and s.correct_rate == 1.0
    assert s.fast_p["1"] == 1.0  # over the entries where something ran
    assert s.skipped == {why: 2}


# ---- the gate -----------------------------------------------------------------------------------


def _compare(a: list[EntryResult], b: list[EntryResult]) -> GateInput:
    comparison = compare_suites(("a", a, summarize(a)), ("b", b, summarize(b)))
    return suite_changes(comparison)


def test_the_gate_fails_when_nothing_was_compared() -> None:
    verdict = gate(_compare([_row("x")], [_row("y")]))
    assert not verdict.passed and "nothing was compared" in verdict.regressions[-1]
    assert not gate(GateInput()).passed


def test_the_gate_fails_on_a_missing_entry() -> None:
    verdict = gate(_compare([_row("x"), _row("y")], [_row("x")]))
    assert not verdict.passed and verdict.regressions == ["y: missing from the second run"]


def test_unreliable_timings_are_not_comparable_not_a_regression() -> None:
    verdict = gate(_compare([_row("x", flags=["cpu-timing"])], [_row("x", 1.4e-3, flags=["cpu-timing"])]))
    assert verdict.passed and verdict.status == "not comparable"
    assert verdict.not_comparable and "cpu-timing" in verdict.not_comparable[0]


def test_the_gate_allows_for_both_runs_measured_noise() -> None:
    noisy = gate(_compare([_row("x", spread=0.2)], [_row("x", 1.3e-3, spread=0.15)]))
    assert noisy.passed and noisy.status == "pass"
    quiet = gate(_compare([_row("x", spread=0.01)], [_row("x", 1.3e-3, spread=0.01)]))
    assert not quiet.passed and quiet.regressions[0].startswith("x: +30.0 % slower")
