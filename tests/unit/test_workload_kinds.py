"""The one Workload type: each kind is a class that answers the questions callers used to ask of ``kind``."""

from __future__ import annotations

from pathlib import Path

import pytest

import perfagent
from perfagent.target import TargetKind
from perfagent.verify.jobs import VerifyRequest
from perfagent.workloads import (
    Workload,
    detect_candidate,
    detect_reference,
    resolve,
    resolve_profile_target,
)
from perfagent.workloads.model import KernelBenchModel, LaunchSpecKernel, TritonScript
from perfagent.workloads.optimizable import (
    KernelBenchTarget,
    LaunchSpecTarget,
    TritonScriptTarget,
    kind_class,
)
from profilers.core_errors import BadInput

REPO = Path(__file__).resolve().parents[2]
KB = REPO / "examples" / "kernelbench"
TRANSPOSE = REPO / "examples" / "cuda" / "02_transpose_bank_conflicts"
SCRIPT = REPO / "examples" / "triton" / "02_softmax_small_block.py"


def test_every_kind_is_a_workload_and_keeps_its_serialized_name() -> None:
    ref = detect_reference(KB / "01_vector_add.py")
    assert isinstance(ref, KernelBenchModel) and isinstance(ref, Workload)
    assert (ref.kind, ref.verified_by, ref.timed_by, ref.runs_on_cpu) == (
        "kernelbench",
        "oracle",
        "cuda-events",
        True,
    )
    cand = detect_candidate(KB / "01_vector_add_triton.py", ref)
    assert isinstance(cand, KernelBenchModel) and cand.describe() == "01_vector_add_triton.py:ModelNew"

    spec_ref = detect_reference(TRANSPOSE / "slow.cu")
    assert (
        isinstance(spec_ref, LaunchSpecKernel) and spec_ref.kind == "cuda-kernel" and not spec_ref.runs_on_cpu
    )

    script = detect_reference(SCRIPT)
    assert (
        isinstance(script, TritonScript) and script.verified_by == "check-command" and script.timed_by is None
    )


def test_the_worker_request_reads_each_kind_back_as_its_class() -> None:
    ref = detect_reference(TRANSPOSE / "slow.cu")
    cand = detect_candidate(TRANSPOSE / "fixed.cu", ref, kernel="k")
    request = VerifyRequest(job="verify-cuda-kernel", reference=ref, candidate=cand, device="cpu")
    back = VerifyRequest.model_validate_json(request.model_dump_json())
    assert type(back.reference) is LaunchSpecKernel and back.candidate == cand
    # the wire keeps every field of the old single model
    assert set(request.model_dump()["reference"]) == {
        "kind",
        "path",
        "class_name",
        "spec_path",
        "kernel",
        "backend",
    }


def test_a_launch_spec_candidate_must_be_a_cu_file(tmp_path: Path) -> None:
    ref = detect_reference(TRANSPOSE / "slow.cu")
    other = tmp_path / "x.py"
    other.write_text("print(1)\n")
    with pytest.raises(BadInput, match="not a .cu file"):
        detect_candidate(other, ref)


def test_optimize_targets_answer_for_the_loop() -> None:
    cu = resolve(TRANSPOSE / "slow.cu")
    assert isinstance(cu, LaunchSpecTarget) and not cu.runs_on_cpu and cu.statically_analysable
    assert isinstance(cu.reference(), LaunchSpecKernel)

    problem = resolve(KB / "01_vector_add.py")
    assert isinstance(problem, KernelBenchTarget) and problem.is_plain_pytorch and problem.start_file is None
    started = resolve(KB / "01_vector_add_triton.py", problem=KB / "01_vector_add.py")
    assert isinstance(started, KernelBenchTarget) and started.start_file == started.file
    assert not started.is_plain_pytorch and started.kernels_in_candidate

    script = resolve(SCRIPT)
    assert (
        isinstance(script, TritonScriptTarget)
        and script.timed_by == "ncu"
        and script.verified_by == "check-command"
    )
    assert kind_class("triton-script") is TritonScriptTarget
    with pytest.raises(BadInput):
        kind_class("cuda-program")


def test_a_profile_target_is_its_description_and_the_way_its_kind_is_profiled(tmp_path: Path) -> None:
    """One ``ProfileTarget`` class: the kind comes from the description, the way from the registry."""
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "record.json").write_text("{}")
    saved = resolve_profile_target(tmp_path / "run")
    assert saved.kind is TargetKind.RUN_RECORD and saved.is_recorded and saved.is_saved_run
    assert saved.path == (tmp_path / "run" / "record.json").absolute()
    program = tmp_path / "p.cu"
    program.write_text("int main() { return 0; }\n")
    built = resolve_profile_target(program)
    assert built.kind is TargetKind.CUDA_PROGRAM and built.way.is_built and built.source == program.resolve()
    kernel = tmp_path / "k.cu"
    kernel.write_text("__global__ void k() {}\n")
    static = resolve_profile_target(kernel)
    assert static.kind is TargetKind.CUDA_KERNEL and static.way.default_profiler == "static"
    assert static.source == kernel.resolve() and static.describe() == str(kernel)
    script = resolve_profile_target(SCRIPT, ["--n", "3"])
    assert script.source is None and script.command[1:] == (str(SCRIPT.resolve()), "--n", "3")
    command = resolve_profile_target(None, ["./app", "--n", "3"])
    assert command.kind is TargetKind.COMMAND and command.describe() == "./app --n 3"
    assert command.command == ("./app", "--n", "3") and command.path is None


def test_stages_ask_a_workload_what_it_can_do_instead_of_testing_its_class(tmp_path: Path) -> None:
    """Issue 28: the capabilities that replaced the isinstance tests outside ``perfagent/workloads``."""
    kb = detect_reference(KB / "01_vector_add.py")
    spec = detect_reference(TRANSPOSE / "slow.cu")
    script = detect_reference(SCRIPT)
    assert (kb.runner, kb.reruns_in_float64) == ("kernelbench", True)
    assert (spec.runner, spec.reruns_in_float64) == ("launch-spec", True)
    assert (script.runner, script.reruns_in_float64) == (None, False)
    assert resolve(KB / "01_vector_add.py").candidate_may_build_extension
    assert not resolve(TRANSPOSE / "slow.cu").candidate_may_build_extension
    assert not resolve(SCRIPT).candidate_may_build_extension
    report = resolve_profile_target(
        REPO / "tests" / "data" / "ncu_csv" / "a10g_sgemm_4kernels_ncu2023.1.1_roofline.raw.csv"
    )
    assert (report.is_recorded, report.is_saved_run, report.way.tool) == (True, False, "ncu")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "record.json").write_text("{}")
    saved = resolve_profile_target(tmp_path / "run")
    assert (saved.is_recorded, saved.is_saved_run, saved.way.tool) == (True, True, None)
    script = resolve_profile_target(SCRIPT)
    assert (script.is_recorded, script.way.tool) == (False, None)


def test_a_resolved_target_is_handed_down_as_it_is() -> None:
    """``diagnose`` resolves once and gives ``profile`` the result: resolving it again returns it unchanged."""
    report = REPO / "tests" / "data" / "ncu_csv" / "a10g_sgemm_4kernels_ncu2023.1.1_roofline.raw.csv"
    target = resolve_profile_target(report)
    assert resolve_profile_target(target) is target
    by_path = perfagent.diagnose(report, save=False)
    by_target = perfagent.diagnose(target, save=False)
    # the same record, but for the time it was made (two runs may straddle a second under load)
    assert by_target.model_dump(exclude={"created"}) == by_path.model_dump(exclude={"created"})
    assert by_target.kernels and by_target.target == str(report)
