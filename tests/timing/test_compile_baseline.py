"""The torch.compile baseline on this CPU: the reference wrapped in ``torch.compile(Model)`` and timed against
eager in the bench worker, the candidate's speed-up over it, the optimize record's and the suite's figures;
where inductor has no C++ compiler the baseline is said to be unavailable (not a failure of the bench)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from perfagent.cli import main
from perfagent.optimize.result import with_compile
from perfagent.records import CandidateOutcome, OptimizeBaseline, VerificationSummary
from perfagent.suite.models import EntryResult
from perfagent.suite.results import summarize
from perfagent.timing.compiled import compiled_source, over_compile
from perfagent.timing.models import CompileBaseline

KB = Path(__file__).resolve().parents[2] / "examples" / "kernelbench"


def test_the_wrapper_compiles_the_reference_model_and_keeps_the_problem() -> None:
    problem = (KB / "01_vector_add.py").read_text()
    wrapped = compiled_source(problem)
    assert wrapped.startswith(problem.rstrip()) and "class ModelNew" in wrapped
    assert "_perfagent_torch.compile(Model(*args, **kwargs))" in wrapped
    compiled = CompileBaseline(time_s=1e-3, eager_time_s=2e-3, speedup_over_eager=2.0)
    assert over_compile(3.0, compiled) == pytest.approx(1.5)
    assert over_compile(3.0, CompileBaseline(unavailable="no compiler")) is None


def test_no_cpp_compiler_makes_the_baseline_unavailable_and_the_bench_goes_on(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("torch")
    monkeypatch.setenv("CXX", "/nonexistent/g++")  # inductor's C++ compiler on the CPU
    code = main(["bench", str(KB / "01_vector_add.py"), "--device", "cpu", "--runs", "3", "--warmup", "1"])
    out = capsys.readouterr().out
    assert code == 0 and "baseline" in out
    assert "torch.compile  unavailable: torch.compile could not run here" in out and "C++ compiler" in out


@pytest.mark.slow
def test_torch_compile_is_timed_on_the_cpu_like_the_rest(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    code = main(
        [
            "bench",
            str(KB / "01_vector_add.py"),
            "--device",
            "cpu",
            "--runs",
            "3",
            "--warmup",
            "1",
            "--format",
            "json",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    from perfagent.timing.models import BenchResult

    result = BenchResult.model_validate_json(out)
    assert result.compiled is not None and result.compiled.unavailable is None, result.compiled
    assert result.compiled.time_s is not None and result.compiled.time_s > 0
    assert result.compiled.speedup_over_eager is not None and result.compiled.timer == "perf_counter"
    # the worker compiled into the cache it was handed (tests/conftest.py: the session's), not its private
    # $TMPDIR, so that the next baseline of the same problem is a cache hit
    assert any(Path(os.environ["TORCHINDUCTOR_CACHE_DIR"]).rglob("*.so")), "inductor's build was not kept"


def _cand(speedup: float) -> CandidateOutcome:
    return CandidateOutcome(
        id="c1",
        rewrite_id="x",
        backend="llm",
        transform="write-kernel",
        iteration=1,
        verification=VerificationSummary(verdict="pass", reason="ok"),
        verdict="accepted",
        accepted=True,
        reason="faster",
        speedup=speedup,
        file="f.py",
    )


def test_the_record_and_the_suite_report_speed_ups_over_torch_compile() -> None:
    base = OptimizeBaseline(file="p.py", compile_time_s=5e-4, compile_speedup=2.0)
    assert with_compile(_cand(3.0), base).speedup_over_compile == pytest.approx(1.5)
    assert with_compile(_cand(3.0), OptimizeBaseline(file="p.py")).speedup_over_compile is None
    rows = [
        EntryResult(
            name="a", kind="kernelbench", target="p.py", correct=True, speedup=3.0, speedup_over_compile=1.6
        ),
        EntryResult(
            name="b", kind="kernelbench", target="p.py", correct=True, speedup=1.2, speedup_over_compile=0.6
        ),
        EntryResult(
            name="c", kind="kernelbench", target="p.py", correct=False, speedup=9.0, speedup_over_compile=4.0
        ),
    ]
    summary = summarize(rows)
    assert summary.fast_p == {
        "1": pytest.approx(2 / 3),
        "1.5": pytest.approx(1 / 3),
        "2": pytest.approx(1 / 3),
    }
    assert summary.fast_p_compile == {"1": pytest.approx(1 / 3), "1.5": pytest.approx(1 / 3), "2": 0.0}
    assert (
        summarize(
            [EntryResult(name="a", kind="kernelbench", target="p.py", correct=True, speedup=2.0)]
        ).fast_p_compile
        == {}
    )
