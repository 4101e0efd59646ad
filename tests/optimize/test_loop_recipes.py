"""The loop with the recipes backend on CPU: a Triton script (verified by running it under the Triton
interpreter, not timed) and a .cu kernel with its launch spec (compiled with nvcc, not verified: launch-spec
kernels need a GPU). Plus a scripted rewriter for a candidate that does not compile."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import pytest

import perfagent
from perfagent.optimize import loop as loop_module
from perfagent.optimize.loop import one_machine_loop
from perfagent.optimize.loop_state import BaselineState, changed_lines
from perfagent.optimize.measure import candidate_spec
from perfagent.optimize.settings import OptimizeSettings
from perfagent.rewrite.base import RewriteRequest
from perfagent.workloads.detect import resolve
from perfagent.workloads.launch_resolve import resolve_launch
from perfagent.workloads.launch_spec import load_launch_spec
from tests.optimize.helpers import EXAMPLES, TRANSPOSE, ScriptedRewriter, copy_example


def _nvcc() -> None:
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed")


def test_triton_script_grid_swizzle_verified_on_cpu_and_not_timed(tmp_path: Path) -> None:
    pytest.importorskip("triton")
    script = EXAMPLES / "triton" / "01_matmul_bad_config.py"
    before = script.read_text()
    record = perfagent.optimize(
        script,
        backend="recipes",
        transform="grid-swizzle",
        iterations=1,
        max_candidates=1,
        device="cpu",
        out=tmp_path / "run",
    )
    [cand] = record.candidates
    assert cand.transform == "grid-swizzle" and cand.backend == "recipes"
    assert cand.verification.verdict == "pass"
    assert (
        cand.verification.checks[0].name == "check-command"
        and "TRITON_INTERPRET=1" in cand.verification.checks[0].detail
    )
    assert cand.verdict == "not-timed" and not cand.accepted and cand.time_s is None
    assert "GROUP_M" in Path(cand.source_path or "").read_text()
    assert script.read_text() == before


def test_cuda_kernel_candidates_compile_but_are_not_verified_without_a_gpu(tmp_path: Path) -> None:
    _nvcc()
    record = perfagent.optimize(
        TRANSPOSE / "slow.cu",
        backend="recipes",
        transform=["smem-padding", "launch-config"],
        iterations=2,
        max_candidates=2,
        device="cpu",
        out=tmp_path / "run",
    )
    result = record.optimize
    assert result is not None and result.workload == "cuda-kernel" and not result.gpu
    assert [c.transform for c in record.candidates] == ["smem-padding", "launch-config", "launch-config"]
    for cand in record.candidates:
        assert cand.verdict == "not-verified" and not cand.accepted and cand.speedup is None
        assert cand.verification.verdict == "not-verified" and "not verified (no GPU)" in cand.reason
        assert cand.checks[0].name == "build" and cand.checks[0].passed
    pad = record.candidates[0]
    assert "tile[TILE_DIM][TILE_DIM + 1]" in Path(pad.source_path or "").read_text()
    # The launch-config candidate's -D follows its edit: the spec copy gives source.cu its macro.
    sweep = record.candidates[1]
    spec = Path(sweep.source_path or "").with_name("launch.toml")
    variant = tomllib.loads(spec.read_text())["variants"]["source.cu"]["defines"]
    assert variant == sweep.defines and sweep.defines["BLOCK_ROWS"] != 8
    assert (
        f"-DBLOCK_ROWS={sweep.defines['BLOCK_ROWS']}"
        in (Path(sweep.source_path or "").with_name("build.log")).read_text()
    )
    assert record.best is None and result.stopped.startswith("iteration budget spent")


def test_candidate_spec_round_trips_for_every_example(tmp_path: Path) -> None:
    for spec in sorted((EXAMPLES / "cuda").glob("*/*.launch.toml")):
        wl = resolve(spec)
        copy = candidate_spec(wl, tmp_path / spec.parent.name, {"PERFAGENT_X": 3})
        loaded = load_launch_spec(copy)
        original = load_launch_spec(spec)
        assert (
            loaded.args == original.args
            and loaded.params == original.params
            and loaded.kernel == original.kernel
        )
        ref = resolve_launch(loaded, copy)
        assert Path(ref.source) == wl.file and "PERFAGENT_X" not in ref.defines
        cand_file = copy.with_name("source.cu")
        cand_file.write_text(wl.file.read_text())
        assert resolve_launch(loaded, copy, source=cand_file).defines["PERFAGENT_X"] == "3"


def test_build_failure_is_rejected_and_fed_back_to_the_next_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _nvcc()
    folder = copy_example(TRANSPOSE, tmp_path)
    wl = resolve(folder / "slow.cu")
    original = wl.file.read_text()
    broken = original.replace("__syncthreads();", "__syncthreads()  // missing semicolon")
    fine = original.replace(
        "for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {",
        "#pragma unroll\n    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {",
        1,
    )
    rewriter = ScriptedRewriter([broken, fine])
    monkeypatch.setattr(loop_module, "LLM_ATTEMPTS_PER_TRANSFORM", 2)
    rewriter.name = "llm"  # retries the same transform with the reason, as the llm backend does
    chosen = OptimizeSettings(iterations=2, transforms=("loop-unroll",))
    loop = one_machine_loop(
        wl,
        rewriter,
        tmp_path / "run",
        gpu=False,  # type: ignore[arg-type]
        baseline=BaselineState(diagnosis=None, measured=False, can_profile=False, profile_note="no GPU"),
        limits=chosen.loop_limits(),
        measuring=chosen.measure_limits(),
    )
    result = loop.run()
    c1, c2 = result.candidates
    assert c1.verdict == "build-failed" and c1.reason.startswith("build failed:") and "error" in c1.reason
    assert c2.verdict == "not-verified"
    second = rewriter.requests[1]
    assert [(a.candidate_id, a.reason) for a in second.failed_attempts] == [("c1", c1.reason)]
    outcome = json.loads((tmp_path / "run" / "candidates" / "01_loop-unroll" / "outcome.json").read_text())
    assert outcome["verdict"] == "build-failed"


def test_duplicates_are_not_measured_twice_and_not_timed_is_not_retried(tmp_path: Path) -> None:
    _nvcc()
    wl = resolve(TRANSPOSE / "slow.cu")
    same = wl.file.read_text().replace("__syncthreads();", "__syncthreads(); __syncthreads();")
    rewriter = ScriptedRewriter([same, same, "never asked for"], per_call=2)
    rewriter.name = "llm"
    chosen = OptimizeSettings(iterations=3, transforms=("loop-unroll",))
    loop = one_machine_loop(
        wl,
        rewriter,
        tmp_path / "run",
        gpu=False,  # type: ignore[arg-type]
        baseline=BaselineState(diagnosis=None, measured=False, can_profile=False),
        limits=chosen.loop_limits(),
        measuring=chosen.measure_limits(),
    )
    result = loop.run()
    assert [c.verdict for c in result.candidates] == ["not-verified", "duplicate"]
    assert "same source, macros and launch as c1" in result.candidates[1].reason
    # "not verified (no GPU)" is the machine, not the code: no retry with it as feedback.
    assert len(rewriter.requests) == 1 and result.stopped.startswith("plan exhausted")


def test_an_iteration_of_only_duplicates_does_not_spend_the_budget(tmp_path: Path) -> None:
    _nvcc()
    wl = resolve(TRANSPOSE / "slow.cu")
    first = wl.file.read_text().replace("__syncthreads();", "__syncthreads(); __syncthreads();")

    class TwoTransforms(ScriptedRewriter):
        def applies(self, request: RewriteRequest) -> str | None:
            return None if self.sources else "nothing scripted"

    # loop-unroll proposes `first`; restrict-pointers proposes `first` again: nothing new measured
    rewriter = TwoTransforms([first, first], per_call=1)
    chosen = OptimizeSettings(
        iterations=5,
        transforms=(
            "loop-unroll",
            "restrict-pointers",
        ),
    )
    loop = one_machine_loop(
        wl,
        rewriter,
        tmp_path / "run",
        gpu=False,  # type: ignore[arg-type]
        baseline=BaselineState(diagnosis=None, measured=False, can_profile=False),
        limits=chosen.loop_limits(),
        measuring=chosen.measure_limits(),
    )
    result = loop.run()
    assert [c.verdict for c in result.candidates] == ["not-verified", "duplicate"]
    assert len(rewriter.requests) == 2
    assert result.iterations_used == 1  # the all-duplicate iteration was not counted


def test_the_record_says_why_each_plan_step_was_or_was_not_tried(tmp_path: Path) -> None:
    _nvcc()
    gemv = EXAMPLES / "unseen" / "01_gemv_row_per_thread"
    record = perfagent.optimize(
        gemv / "slow.cu", backend="recipes", iterations=1, device="cpu", out=tmp_path / "run"
    )
    result = record.optimize
    assert result is not None
    by_id = {p.transform: p for p in result.plan}
    coop = by_id["cooperative-row"]
    assert coop.tried and coop.kind == "structural" and coop.reason is not None
    # two candidates: a warp per row and a block per row
    assert "tried: precondition met; c1, c2 (not-verified): rewrites lines" in coop.reason
    nudge = by_id["launch-config"]
    assert not nudge.tried and nudge.kind == "tuning" and nudge.reason is not None
    assert nudge.reason.endswith("not reached: iteration budget spent (1)")
    unroll = by_id["loop-unroll"]
    assert unroll.reason is not None and "not tried: recipes: loop-unroll: loop at line 11" in unroll.reason
    assert all(p.reason for p in result.plan)
    summary = (tmp_path / "run" / "summary.md").read_text()
    assert "| cooperative-row | structural |" in summary and "not reached: iteration budget" in summary
    # A record written before ``reason`` and ``kind`` existed still loads.
    saved = json.loads((tmp_path / "run" / "record.json").read_text())
    for step in saved["optimize"]["plan"]:
        del step["reason"], step["kind"]
    assert perfagent.RunRecord.model_validate(saved).optimize is not None


def test_changed_lines_name_the_lines_of_the_source_a_diff_rewrites() -> None:
    import difflib

    before = ["a\n", "b\n", "c\n", "d\n", "e\n"]
    after = ["a\n", "B\n", "c\n", "d\n", "e\n", "f\n"]
    diff = "".join(difflib.unified_diff(before, after, "x", "y"))
    # line 2 replaced, a line inserted after line 5
    assert changed_lines(diff) == "rewrites lines 2, 5"
    assert changed_lines("").startswith("no source line changed")
