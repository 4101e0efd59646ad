"""What an optimize run costs, and the waste it no longer spends.

- the record says where the wall time went (``OptimizeResult.cost``: by stage and by iteration) and the
  CLI summary says it in one line; a record from before loads without it;
- the last iteration's winner is not re-profiled (no later plan reads its profile) unless
  ``--profile-best``; a winner a later iteration plans from is;
- candidates that differ from an earlier one only in comments and layout are not measured again;
- verification starts one worker per candidate for all its seeds (CPU: a Triton ModelNew, really run);
- the record counts the run's fresh workers (new interpreters, as confined GPU workers are) and how many
  were started ahead (``perfagent.sandbox.standby``): with a worker kept started, each start takes it.

The GPU is simulated where it must be (``simulated_gpu``: timing and verdicts stubbed, profiles recorded).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import perfagent
from perfagent.optimize.loop import one_machine_loop
from perfagent.optimize.loop_state import BaselineState, candidate_key, normalised_source
from perfagent.optimize.render import cost_line, render_text
from perfagent.optimize.settings import OptimizeSettings
from perfagent.records import OptimizeResult, RunRecord
from perfagent.sandbox import runner, standby
from perfagent.verify import api as verify_api
from perfagent.workloads.detect import resolve
from tests.optimize.conftest import PADDED
from tests.optimize.helpers import KB, TRANSPOSE, ScriptedRewriter, copy_example


def _optimize(tmp_path: Path, **options: Any) -> RunRecord:
    folder = copy_example(TRANSPOSE, tmp_path)
    return perfagent.optimize(
        folder / "slow.cu", backend="recipes", transform="smem-padding", out=tmp_path / "run", **options
    )


def _profiled(knobs: dict[str, Any]) -> list[str]:
    return [name for what, name in knobs["calls"] if what == "profile" and name == "source.cu"]


def test_the_record_says_where_the_time_went(tmp_path: Path, simulated_gpu: dict[str, Any]) -> None:
    record = _optimize(tmp_path, iterations=2)
    result = record.optimize
    assert result is not None and result.cost is not None and result.wall_s is not None
    stages = result.cost.stages
    assert {"baseline-profile", "baseline-time", "plan", "propose", "verify", "time", "other"} <= set(stages)
    # every second counted once: the stages add up to the run's wall time
    assert sum(stages.values()) == pytest.approx(result.wall_s, abs=0.01)
    assert [i.iteration for i in result.cost.iterations] == list(range(1, result.iterations_used + 1))
    first = result.cost.iterations[0]
    assert first.transform == "smem-padding" and first.candidates >= 1
    assert first.wall_s >= first.propose_s >= first.compile_check_s >= 0
    line = next(x for x in render_text(result).splitlines() if x.startswith("time: "))
    assert line.startswith(f"time: {result.wall_s:.1f} s — ")
    assert all(f"{name} {s:.1f} s" in line for name, s in stages.items() if s >= 0.05)
    assert "candidate re-profile(s)" in line
    assert "## Where the time went" in (tmp_path / "run" / "summary.md").read_text()


def test_a_record_from_before_loads_without_a_cost(tmp_path: Path, simulated_gpu: dict[str, Any]) -> None:
    record = _optimize(tmp_path, iterations=1)
    saved = json.loads((tmp_path / "run" / "record.json").read_text())
    del saved["optimize"]["cost"]
    old = OptimizeResult.model_validate(saved["optimize"])
    assert old.cost is None
    assert not any(x.startswith("time: ") for x in render_text(old).splitlines())
    assert record.optimize is not None and record.optimize.cost is not None


def test_the_last_iterations_winner_is_not_reprofiled(tmp_path: Path, simulated_gpu: dict[str, Any]) -> None:
    record = _optimize(tmp_path, iterations=1)
    [c1] = record.candidates
    assert c1.accepted and c1.route == "unchecked"
    assert "the last iteration's winner" in c1.reason and "--profile-best" in c1.reason
    assert _profiled(simulated_gpu) == [] and "profile" not in c1.stage_s
    assert record.optimize is not None and record.optimize.cost is not None
    assert (record.optimize.cost.reprofiles, record.optimize.cost.reprofiles_skipped) == (0, 1)
    saved = json.loads((tmp_path / "run" / "candidates" / "01_smem-padding" / "profile.json").read_text())
    assert saved["profiled"] is False


def test_profile_best_reprofiles_the_last_winner(tmp_path: Path, simulated_gpu: dict[str, Any]) -> None:
    record = _optimize(tmp_path, iterations=1, profile_best=True)
    [c1] = record.candidates
    assert c1.accepted and c1.route == "targeted" and c1.metric_after is not None
    assert _profiled(simulated_gpu) == ["source.cu"]
    assert record.optimize is not None and record.optimize.cost is not None
    assert record.optimize.cost.reprofiles == 1


def test_a_winner_a_later_iteration_plans_from_is_reprofiled(
    tmp_path: Path, simulated_gpu: dict[str, Any]
) -> None:
    record = _optimize(tmp_path, iterations=2)
    c1 = record.candidates[0]
    assert c1.iteration == 1 and c1.accepted and c1.metric_after is not None
    assert _profiled(simulated_gpu) == ["source.cu"]


def test_a_repeat_in_comments_and_layout_is_not_measured_again(
    tmp_path: Path, simulated_gpu: dict[str, Any]
) -> None:
    folder = copy_example(TRANSPOSE, tmp_path)
    wl = resolve(folder / "slow.cu")
    padded = wl.file.read_text().replace("[TILE_DIM][TILE_DIM]", f"[TILE_DIM][{PADDED}]", 1)
    reformatted = "// padded by hand\n" + padded.replace("    ", "\t").replace(";", ";  /* done */")
    chosen = OptimizeSettings(iterations=1, transforms=("smem-padding",), verify_jobs=2)
    loop = one_machine_loop(
        wl,
        ScriptedRewriter([padded, reformatted], transform="smem-padding", per_call=2),
        tmp_path / "run",
        gpu=True,
        baseline=BaselineState(diagnosis=None, measured=False, can_profile=False, profile_note="simulated"),
        limits=chosen.loop_limits(),
        measuring=chosen.measure_limits(),
    )
    result = loop.run()
    assert [c.verdict for c in result.candidates] == ["accepted", "duplicate"]
    assert "same source, macros and launch as c1" in result.candidates[1].reason
    assert [c for c in simulated_gpu["calls"] if c[0] == "verify"] == [("verify", "source.cu")]


def test_the_normalised_source_keeps_what_changes_the_kernel() -> None:
    base = "#define N 4\n__global__ void k(float* x) {\n    x[threadIdx.x] = N;\n}\n"
    same = "// note\n#define N 4\n__global__ void k(float* x)\n{\n  x[ threadIdx.x ] = N; /* set */\n}"
    assert normalised_source(base, "cuda") == normalised_source(same, "cuda")
    for other in (
        base.replace("N 4", "N 8"),
        base.replace("#define N 4\n", "#define N\n4 "),
        base + "int y;",
    ):
        assert normalised_source(other, "cuda") != normalised_source(base, "cuda")
    python = "def f(x):\n    return x + 1  # one more\n"
    assert normalised_source(python, "triton") == normalised_source(
        "def f(x):\n\n    return x + 1\n", "triton"
    )
    assert normalised_source(python, "python") != normalised_source(python.replace("1", "2"), "python")
    # a measurement is still told apart by its macros and launch
    assert candidate_key(base, {"N": 4}, language="cuda") != candidate_key(base, {"N": 8}, language="cuda")
    assert candidate_key(base, {}, {"block": [128]}, language="cuda") != candidate_key(
        base, {}, {"block": [256]}, language="cuda"
    )


def _triton_cpu_run(out: Path, **options: Any) -> Any:
    """A real one-iteration recipes run of the Triton ModelNew on the CPU (the Triton interpreter)."""
    return perfagent.optimize(
        KB / "01_vector_add_triton.py",
        problem=KB / "01_vector_add.py",
        backend="recipes",
        device="cpu",
        iterations=1,
        out=out,
        **options,
    )


def test_verification_starts_one_worker_per_candidate_for_all_its_seeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real CPU run of a Triton ModelNew (the interpreter): every seed of a candidate in one worker."""
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    started: list[int] = []
    real = verify_api.run_worker

    def counting(request: Any, **kwargs: Any) -> Any:
        started.append(request.seeds)
        return real(request, **kwargs)

    monkeypatch.setattr(verify_api, "run_worker", counting)
    record = _triton_cpu_run(tmp_path / "run", max_candidates=2, seeds=3)
    verified = [c for c in record.candidates if c.verification.verdict in ("pass", "fail")]
    assert verified and started == [3] * len(verified)
    assert all(c.verification.verdict == "pass" for c in verified)


def test_the_cost_table_script_reads_the_records(tmp_path: Path, simulated_gpu: dict[str, Any]) -> None:
    """``scripts/optimize_cost_table.py`` (what ``scripts/gpu_optimize_cost.sh`` tabulates with)."""
    import runpy

    record = _optimize(tmp_path, iterations=2)
    assert record.optimize is not None and record.optimize.cost is not None
    (tmp_path / "wall_s").write_text("12.5\n")
    script = runpy.run_path(str(Path(__file__).resolve().parents[2] / "scripts" / "optimize_cost_table.py"))
    text = script["table"]([tmp_path / "run", tmp_path / "missing"])
    row = next(line for line in text.splitlines() if line.startswith(f"| {tmp_path.name} | 12.5 |"))
    assert f"| {record.optimize.wall_s:.1f} |" in row
    assert "| missing | no record.json |" in text
    assert f"| {tmp_path.name} | 1 | smem-padding |" in text


def test_a_run_counts_its_fresh_workers_and_each_takes_the_one_started_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real CPU run of a Triton ModelNew with every worker a new interpreter (as a confined GPU worker is):
    each verification takes the worker started ahead, and the record counts them."""
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    monkeypatch.setenv(runner.WORKER_START_ENV, "fresh")
    monkeypatch.delenv(standby.STANDBY_ENV, raising=False)
    record = _triton_cpu_run(tmp_path / "run", max_candidates=2, seeds=1, verify_jobs=1)
    assert record.optimize is not None and record.optimize.cost is not None
    cost = record.optimize.cost
    verified = [c for c in record.candidates if c.verification.verdict in ("pass", "fail")]
    assert verified and cost.fresh_workers == len(verified)
    assert cost.workers_ahead == cost.fresh_workers  # none waited for an interpreter to start
    line = cost_line(record.optimize)
    assert (
        line is not None and f"{len(verified)} fresh worker(s), {len(verified)} of them started ahead" in line
    )
    # a forked (warm) start is no fresh worker
    monkeypatch.delenv(runner.WORKER_START_ENV)
    again = _triton_cpu_run(tmp_path / "warm", max_candidates=1, seeds=1)
    assert again.optimize is not None and again.optimize.cost is not None
    assert (again.optimize.cost.fresh_workers, again.optimize.cost.workers_ahead) == (0, 0)
