"""Two machines (``--propose-only`` where the model is, ``--evaluate RUN`` where the GPU is), on CPU.

Proposals are written and nothing is built, run or timed; ``--evaluate`` runs the same loop machinery and
gives the verdicts a one-machine run gives on the same candidates; a second round starts from the best
and carries the earlier rejections into the prompt; bad input is one line and exit 2. The GPU half runs
on the simulated GPU (stubbed verdicts and timings, real recorded profiles) and, for real, in
``tests/gpu/test_optimize_phases_gpu.py``.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from rewrite.llm_server import MODEL, ReplayServer, Reply, fenced

import perfagent
from perfagent.cli import main
from perfagent.llm_client import LLMConfig
from perfagent.optimize.phases import evaluate, propose
from perfagent.optimize.services import Services, using
from perfagent.records import RunRecord
from perfagent.rewrite.proposals import StoredProposal
from tests.optimize.helpers import KB, REPORTS, TRANSPOSE, copy_example

REPORT = REPORTS / "02_transpose_bank_conflicts.ncu-rep"
PROBLEM = KB / "01_vector_add.py"
CURRENT = KB / "01_vector_add_triton.py"
ORIGINAL = CURRENT.read_text()
WRONG = ORIGINAL.replace("a + b, mask=mask", "a - b, mask=mask").replace("block = 1024", "block = 4096")
GOOD = ORIGINAL.replace("block = 1024", "block = 4096").replace(
    "BLOCK_SIZE=block)", "BLOCK_SIZE=block, num_warps=8)"
)
KEY = "sk-phases-SECRET-97531"


@pytest.fixture(autouse=True)
def _no_llm_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("PERFAGENT_LLM_BASE_URL", "PERFAGENT_LLM_MODEL", "PERFAGENT_LLM_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PERFAGENT_RUNS_DIR", str(tmp_path / "runs"))


def _nvcc() -> None:
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed")


def _torch() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("triton")


def _boom(*_: Any, **__: Any) -> Any:
    raise AssertionError("--propose-only must not build, run, time or profile anything")


NOTHING_RUNS = Services(
    probe_gpu=_boom,
    ncu_availability=_boom,
    build_check=_boom,
    verify=_boom,
    time=_boom,
    time_batch=_boom,
    reprofile=_boom,
)
"""Any build, verification, timing, profile or GPU probe fails the test."""


def _files(run: Path) -> set[str]:
    return {p.name for p in run.rglob("*") if p.is_file()}


def _verdicts(record: RunRecord) -> list[tuple[str, str, bool, str]]:
    """Each candidate's transform, verdict and reason (up to its details: verification seeds are random)."""
    return [(c.transform, c.verdict, c.accepted, c.reason.split(":")[0]) for c in record.candidates]


def _config(server: ReplayServer, **kw: Any) -> LLMConfig:
    config = LLMConfig.from_env(
        base_url=server.base_url,
        model=MODEL,
        api_key=KEY,
        env={},
        timeout_s=10.0,
        max_retries=0,
        backoff_s=0.0,
    )
    return dataclasses.replace(config, **kw)


# --------------------------------------------------------------------------------------------- propose


def test_propose_only_with_recipes_writes_proposals_and_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = copy_example(TRANSPOSE, tmp_path)
    before = (folder / "slow.cu").read_text()
    run = tmp_path / "run"
    argv = [
        "optimize",
        str(folder / "slow.cu"),
        "--propose-only",
        "--report",
        str(REPORT),
        "--backend",
        "recipes",
    ]
    with using(NOTHING_RUNS):
        assert main([*argv, "--out", str(run)]) == 0
    out = capsys.readouterr()
    assert "3 proposal(s) written" in out.err and f"perfagent optimize --evaluate {run}" in out.err
    assert "3 proposal(s) waiting" in out.out and "Traceback" not in out.err

    record = RunRecord.model_validate_json((run / "record.json").read_text())
    assert record.optimize is not None and record.optimize.phases is not None
    phases = record.optimize.phases
    assert phases.state == "proposed" and phases.file == str(folder / "slow.cu")
    assert phases.rounds[0].proposals == ["p1", "p2", "p3"] and phases.rounds[0].parent is None
    assert "recorded report" in phases.rounds[0].diagnosis
    assert [c.id for c in record.candidates] == ["p1", "p2", "p3"] and record.best is None
    assert {c.verdict for c in record.candidates} == {"proposed"}
    assert all(c.time_s is None and c.verification.verdict == "not-verified" for c in record.candidates)
    assert record.candidates[0].transform == "smem-padding"
    # nothing was built or verified: no candidate folder, no build log, no verification
    assert not (run / "candidates").exists()
    assert not {"build.log", "verification.json", "bench.json", "outcome.json"} & _files(run)
    p1 = run / "proposals" / "01_smem-padding"
    assert {"source.cu", "diff.patch", "proposal.json", "request.json"} <= _files(p1)
    stored = StoredProposal.model_validate_json((p1 / "proposal.json").read_text())
    assert stored.id == "p1" and stored.candidate.transform == "smem-padding" and stored.parent is None
    assert stored.finding is not None and stored.finding.category == "shared-bank-conflicts"
    assert (
        "TILE_DIM + 1" in (p1 / "source.cu").read_text()
        and stored.candidate.source == (p1 / "source.cu").read_text()
    )
    request = json.loads((p1 / "request.json").read_text())
    assert request["transform"] == "smem-padding" and request["source"] == before
    assert (folder / "slow.cu").read_text() == before


def test_propose_only_with_the_llm_backend_against_the_loopback_server(tmp_path: Path) -> None:
    with ReplayServer() as server:
        server.reject_json_schema = True
        server.enqueue(Reply(content=fenced(GOOD, "python", "8 warps.")))
        record = propose(
            CURRENT,
            problem=PROBLEM,
            backend="llm",
            transform="launch-config",
            iterations=1,
            out=tmp_path / "run",
            llm_config=_config(server),
        )
        prompts = [r.prompt_text for r in server.completions if r.answered == 200]
    [p1] = record.candidates
    assert (p1.id, p1.verdict, p1.backend, p1.recipe) == ("p1", "proposed", "llm", MODEL)
    assert p1.tokens is not None and p1.tokens["requests"] == 1
    folder = tmp_path / "run" / "proposals" / "01_launch-config"
    assert (folder / "source.py").read_text() == GOOD
    assert "launch-config" in (folder / "prompt.md").read_text() and len(prompts) == 1
    assert KEY not in (tmp_path / "run" / "record.json").read_text()
    assert not (tmp_path / "run" / "candidates").exists()


# --------------------------------------------------------------------------------------------- evaluate


def test_evaluate_on_cpu_gives_the_verdicts_of_a_one_machine_run(tmp_path: Path) -> None:
    _torch()
    options: dict[str, Any] = {
        "problem": PROBLEM,
        "backend": "recipes",
        "transform": "launch-config",
        "iterations": 1,
        "max_candidates": 2,
        "seeds": 1,
    }
    one = perfagent.optimize(CURRENT, device="cpu", out=tmp_path / "one", **options)
    proposed = propose(CURRENT, out=tmp_path / "two", **options)
    assert [c.verdict for c in proposed.candidates] == ["proposed", "proposed"]
    assert not (tmp_path / "two" / "candidates").exists()
    events: list[Any] = []
    two = evaluate(tmp_path / "two", device="cpu", progress=events.append)
    assert _verdicts(two) == _verdicts(one) and len(two.candidates) == 2
    assert {c.verdict for c in two.candidates} == {"not-timed"}  # verified on CPU, never timed
    assert [c.parameters for c in two.candidates] == [c.parameters for c in one.candidates]
    assert [(c.id, c.proposal) for c in two.candidates] == [("c1", "p1"), ("c2", "p2")]
    assert all(c.verification.verdict == "pass" for c in two.candidates)
    assert (tmp_path / "two" / "candidates" / "01_launch-config" / "verification.json").is_file()
    assert (tmp_path / "two" / "proposals" / "01_launch-config" / "proposal.json").is_file()  # kept
    assert two.optimize is not None and two.optimize.phases is not None
    assert two.optimize.phases.state == "evaluated" and two.optimize.phases.rounds[0].candidates == [
        "c1",
        "c2",
    ]
    assert two.optimize.phases.rounds[0].evaluated_on == "cpu"
    assert {e.kind for e in events} >= {"planned", "verified", "rejected"}


def test_rounds_alternate_and_earlier_rejections_reach_the_prompt(tmp_path: Path) -> None:
    """llm proposals (a wrong and a good one) → evaluate on CPU (incorrect, not-timed, as a one-machine
    run of the same replies) → a second round whose prompt carries the rejection → evaluate again."""
    _torch()
    run = tmp_path / "run"
    with ReplayServer() as server:
        server.reject_json_schema = True
        replies = (
            Reply(content=fenced(WRONG, "python", "Bigger blocks.")),
            Reply(content=fenced(GOOD, "python")),
        )
        server.enqueue(*replies)
        common: dict[str, Any] = {
            "problem": PROBLEM,
            "backend": "llm",
            "transform": "launch-config",
            "seeds": 1,
        }
        config = _config(server, candidates=2)
        propose(CURRENT, iterations=1, out=run, llm_config=config, **common)
        first = evaluate(run, device="cpu")
        server.enqueue(*replies)
        one = perfagent.optimize(
            CURRENT, iterations=1, device="cpu", out=tmp_path / "one", llm_config=config, **common
        )
        assert _verdicts(first) == _verdicts(one)
        c1, c2 = first.candidates
        assert (c1.verdict, c2.verdict) == ("incorrect", "not-timed")

        server.enqueue(Reply(content=fenced(GOOD.replace("num_warps=8", "num_warps=4"), "python")))
        second = propose(
            from_run=run, backend="llm", transform="launch-config", iterations=1, llm_config=_config(server)
        )
        prompt = server.completions[-1].prompt_text
    assert c1.id in prompt and c1.reason in prompt  # the earlier measured rejection steered the request
    assert [c.id for c in second.candidates] == ["c1", "c2", "p3"]
    assert second.candidates[-1].parent is None  # nothing was accepted on CPU: the original is the parent
    assert second.optimize is not None and second.optimize.phases is not None
    assert [r.proposals for r in second.optimize.phases.rounds] == [["p1", "p2"], ["p3"]]
    assert "1 proposal(s) waiting" in (run / "summary.md").read_text()
    third = evaluate(run, device="cpu")
    assert [(c.id, c.proposal, c.verdict) for c in third.candidates] == [
        ("c1", "p1", "incorrect"),
        ("c2", "p2", "not-timed"),
        ("c3", "p3", "not-timed"),
    ]
    assert third.optimize is not None and third.optimize.phases is not None
    assert third.optimize.phases.state == "evaluated"


def test_simulated_gpu_accepts_and_the_next_round_starts_from_the_best(
    tmp_path: Path, simulated_gpu: dict[str, Any]
) -> None:
    folder = copy_example(TRANSPOSE, tmp_path)
    run = tmp_path / "run"
    propose(folder / "slow.cu", report=REPORT, backend="recipes", out=run)
    record = evaluate(run, device="cuda")
    c1 = record.candidates[0]
    assert (c1.id, c1.proposal, c1.transform, c1.verdict, c1.accepted) == (
        "c1",
        "p1",
        "smem-padding",
        "accepted",
        True,
    )
    assert c1.speedup == pytest.approx(1.6) and c1.metric_moved is True and record.best == "c1"
    assert all(c.verdict == "not-faster" for c in record.candidates[1:])
    assert all(c.parent is None for c in record.candidates)  # each ran from what it was proposed from
    assert ("profile", "slow.cu") in simulated_gpu[
        "calls"
    ]  # the original was profiled on the (simulated) GPU

    second = propose(from_run=run, backend="recipes", transform="loop-unroll")
    [p] = [c for c in second.candidates if c.verdict == "proposed"]
    assert p.id == "p4" and p.parent == "c1" and second.best == "c1"
    request = json.loads((run / "proposals" / "04_loop-unroll" / "request.json").read_text())
    assert "TILE_DIM + 1" in request["source"]  # proposed from the best, not the original
    assert {a["candidate_id"] for a in request["failed_attempts"]} == {"c2", "c3"}
    assert second.optimize is not None and second.optimize.phases is not None
    assert (
        "c1" in second.optimize.phases.rounds[1].diagnosis and second.optimize.phases.rounds[1].parent == "c1"
    )

    third = evaluate(run, device="cuda")
    c4 = third.candidates[-1]
    assert (c4.id, c4.proposal, c4.parent) == ("c4", "p4", "c1")
    assert c4.verdict == "not-faster" and "best so far (c1" in c4.reason  # must beat the best
    assert (
        third.best == "c1"
        and third.optimize is not None
        and third.optimize.best_speedup == pytest.approx(1.6)
    )


def test_evaluate_into_out_keeps_the_proposals_run(tmp_path: Path) -> None:
    _nvcc()
    folder = copy_example(TRANSPOSE, tmp_path)
    propose(
        folder / "slow.cu", report=REPORT, backend="recipes", transform="smem-padding", out=tmp_path / "run"
    )
    record = evaluate(tmp_path / "run", device="cpu", out=tmp_path / "measured")
    [c1] = record.candidates
    assert (
        c1.verdict == "not-verified" and "compiles" in c1.reason
    )  # nvcc-built, launch-spec kernels need a GPU
    assert (tmp_path / "measured" / "proposals" / "01_smem-padding" / "proposal.json").is_file()
    still = RunRecord.model_validate_json((tmp_path / "run" / "record.json").read_text())
    assert [c.verdict for c in still.candidates] == ["proposed"]  # the proposals run is untouched


def test_a_moved_run_folder_and_target_are_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The GPU machine has other paths: the target as given (relative), the run folder anywhere."""
    _nvcc()
    copy_example(TRANSPOSE, tmp_path / "laptop")
    monkeypatch.chdir(tmp_path / "laptop")
    propose(
        Path("02_transpose_bank_conflicts/slow.cu"),
        report=REPORT,
        backend="recipes",
        transform="smem-padding",
        out="run",
    )
    shutil.copytree(tmp_path / "laptop", tmp_path / "gpu")
    shutil.rmtree(tmp_path / "laptop")
    monkeypatch.chdir(tmp_path / "gpu")
    record = evaluate("run", device="cpu")
    [c1] = record.candidates
    assert c1.file == str(tmp_path / "gpu" / "02_transpose_bank_conflicts" / "slow.cu")
    assert c1.source_path == str(tmp_path / "gpu" / "run" / "candidates" / "01_smem-padding" / "source.cu")


def test_old_records_still_load() -> None:
    """A record written before two-machine runs (no phases, no proposal fields) loads as before."""
    from perfagent.records import (
        CandidateOutcome,
        OptimizeBaseline,
        OptimizeResult,
        VerificationSummary,
    )

    cand = CandidateOutcome(
        id="c1",
        rewrite_id="smem-padding/recipes/0123456789",
        backend="recipes",
        transform="smem-padding",
        iteration=1,
        verification=VerificationSummary(verdict="pass", reason="ok"),
        verdict="not-timed",
        accepted=False,
        reason="correct but not timed (no GPU): speed-up not measured",
        file="slow.cu",
    )
    result = OptimizeResult(
        target="slow.cu",
        workload="cuda-kernel",
        language="cuda",
        backend="recipes",
        device="cpu",
        gpu=False,
        iterations=1,
        baseline=OptimizeBaseline(file="slow.cu"),
        candidates=[cand],
    )
    record = RunRecord(kind="optimize", target="slow.cu", tool="none", optimize=result, candidates=[cand])
    data = json.loads(record.model_dump_json())
    del data["optimize"]["phases"]
    for c in (*data["candidates"], *data["optimize"]["candidates"]):
        del c["proposal"], c["proposal_dir"]
    old = RunRecord.model_validate(data)
    assert old.optimize is not None and old.optimize.phases is None and old.candidates[0].proposal is None


# --------------------------------------------------------------------------------------------- bad input


def _fails(argv: list[str], capsys: pytest.CaptureFixture[str], *needles: str) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for needle in needles:
        assert needle in err, err
    return err


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _nvcc()
    folder = copy_example(TRANSPOSE, tmp_path)
    slow = str(folder / "slow.cu")
    (tmp_path / "empty").mkdir()
    _fails(["optimize", "--evaluate", str(tmp_path / "empty")], capsys, "not a run folder")
    _fails(["optimize", "--evaluate", str(tmp_path / "nowhere")], capsys, "not a run folder")
    _fails(["optimize"], capsys, "no TARGET")
    _fails(["optimize", "--from", str(tmp_path / "empty")], capsys, "--propose-only")
    _fails(["optimize", slow, "--propose-only", "--evaluate", str(tmp_path / "empty")], capsys, "give one")
    _fails(["optimize", slow, "--propose-only", "--apply", "--report", str(REPORT)], capsys, "--evaluate")
    # a KernelBench target cannot be diagnosed without running it: the next step is a report
    _fails(
        ["optimize", str(CURRENT), "--problem", str(PROBLEM), "--propose-only", "--out", str(tmp_path / "x")],
        capsys,
        "no diagnosis",
        "--report",
        "perfagent profile --save-report",
    )
    assert not (tmp_path / "x" / "record.json").exists()

    # a one-machine run is not a proposals run
    assert (
        main(
            [
                "optimize",
                slow,
                "--backend",
                "recipes",
                "--transform",
                "smem-padding",
                "--device",
                "cpu",
                "--out",
                str(tmp_path / "one"),
            ]
        )
        == 0
    )
    capsys.readouterr()
    _fails(["optimize", "--evaluate", str(tmp_path / "one")], capsys, "not a proposals run", "--propose-only")

    # proposals, then: --from before they were evaluated; --report / --transform with --evaluate
    run = str(tmp_path / "run")
    assert (
        main(
            [
                "optimize",
                slow,
                "--propose-only",
                "--report",
                str(REPORT),
                "--backend",
                "recipes",
                "--transform",
                "smem-padding",
                "--out",
                run,
            ]
        )
        == 0
    )
    capsys.readouterr()
    _fails(["optimize", "--propose-only", "--from", run], capsys, "not evaluated", "--evaluate")
    _fails(["optimize", "--propose-only", run], capsys, "not evaluated")
    _fails(["optimize", "--evaluate", run, "--report", str(REPORT)], capsys, "--report is for --propose-only")
    _fails(["optimize", "--evaluate", run, "--transform", "loop-unroll"], capsys, "--transform")

    # the target changed since the proposals were made: refused, nothing measured
    (folder / "slow.cu").write_text((folder / "slow.cu").read_text() + "\n// edited\n")
    _fails(
        ["optimize", "--evaluate", run, "--device", "cpu"],
        capsys,
        "changed since the proposals",
        "original/slow.cu",
    )
    assert not (tmp_path / "run" / "candidates").exists()
    # ... or is gone
    (folder / "slow.cu").unlink()
    _fails(["optimize", "--evaluate", run, "--device", "cpu"], capsys, "is not here", "--evaluate")

    # an evaluated run has nothing waiting
    shutil.copy2(tmp_path / "run" / "original" / "slow.cu", folder / "slow.cu")
    assert main(["optimize", "--evaluate", run, "--device", "cpu"]) == 0
    capsys.readouterr()
    _fails(["optimize", "--evaluate", run], capsys, "no proposal waiting", "--from")
    # a proposal folder that did not travel
    assert (
        main(["optimize", "--propose-only", run, "--backend", "recipes", "--transform", "loop-unroll"]) == 0
    )
    capsys.readouterr()
    shutil.rmtree(tmp_path / "run" / "proposals" / "02_loop-unroll")
    _fails(
        ["optimize", "--evaluate", run, "--device", "cpu"],
        capsys,
        "proposal p2 cannot be read",
        "copy the run folder whole",
    )
