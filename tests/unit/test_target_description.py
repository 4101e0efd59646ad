"""The target's one description: kinds, files and hashes, capabilities, the registry's choice, changes noticed."""

from __future__ import annotations

import hashlib
import shutil
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from perfagent.target import FileRole, TargetChanged, TargetDescription, TargetKind
from perfagent.workloads.describe import describe_target
from perfagent.workloads.optimizable import KernelBenchTarget, LaunchSpecTarget, TritonScriptTarget
from perfagent.workloads.registry import optimize_workload, profile_target
from profilers.core_errors import BadInput, ExitCode, exit_code_for

REPO = Path(__file__).resolve().parents[2]
KB = REPO / "examples" / "kernelbench"
TRANSPOSE = REPO / "examples" / "cuda" / "02_transpose_bank_conflicts"
SCRIPT = REPO / "examples" / "triton" / "02_softmax_small_block.py"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _hashes(d: TargetDescription) -> dict[FileRole, tuple[str, str | None]]:
    return {f.role: (Path(f.path).name, f.sha256) for f in d.files}


def test_a_launch_spec_kernel_is_described_with_its_spec_entry_and_filter() -> None:
    d = describe_target(TRANSPOSE / "slow.cu")
    assert d.kind is TargetKind.CUDA_KERNEL and d.language == "cuda"
    spec = TRANSPOSE / "transpose.launch.toml"
    assert _hashes(d) == {
        FileRole.PRIMARY: ("slow.cu", _sha(TRANSPOSE / "slow.cu")),
        FileRole.SPEC: (spec.name, _sha(spec)),
    }
    assert d.entry and d.kernel_filter == f"^{d.entry}$"
    assert all(c.able for c in (d.can_profile, d.can_verify, d.can_time, d.can_rewrite))
    assert type(optimize_workload(d)) is LaunchSpecTarget
    profiled = profile_target(d)  # no main(): analysed statically, as `diagnose` does
    assert profiled.way.default_profiler == "static" and profiled.source == d.primary


def test_kernelbench_names_its_problem_and_a_modelnew_file_is_the_primary() -> None:
    own = describe_target(KB / "01_vector_add.py")
    assert own.kind is TargetKind.KERNELBENCH and not own.has_model_new
    assert own.file(FileRole.PRIMARY) == own.file(FileRole.PROBLEM) == (KB / "01_vector_add.py").resolve()
    started = describe_target(KB / "01_vector_add_triton.py", problem=KB / "01_vector_add.py")
    assert started.has_model_new and started.language == "triton" and started.jit_kernels
    assert _hashes(started)[FileRole.PROBLEM] == ("01_vector_add.py", _sha(KB / "01_vector_add.py"))
    wl = optimize_workload(started)
    assert type(wl) is KernelBenchTarget and wl.start_file == (KB / "01_vector_add_triton.py").resolve()
    run = profile_target(started, ["--n", "4"])
    assert run.way.runs_script and run.command == (sys.executable, str(wl.file), "--n", "4")


def test_a_triton_script_is_filtered_to_its_kernels() -> None:
    d = describe_target(SCRIPT)
    assert d.kind is TargetKind.TRITON_SCRIPT and type(optimize_workload(d)) is TritonScriptTarget
    assert d.kernel_filter is not None and all(k in d.kernel_filter for k in d.jit_kernels)


def test_what_cannot_be_rewritten_is_described_with_why_and_refused_with_it() -> None:
    program = describe_target(TRANSPOSE / "main.cu")
    assert program.kind is TargetKind.CUDA_PROGRAM
    assert not program.can_rewrite.able and "main()" in program.can_rewrite.reason
    assert not program.can_verify.able and "--check-cmd" in program.can_verify.hint
    with pytest.raises(BadInput, match=r"main\(\)") as raised:
        optimize_workload(program)
    assert raised.value.hint == program.can_rewrite.hint


def test_the_description_is_immutable_and_saved_as_json() -> None:
    d = describe_target(TRANSPOSE / "slow.cu", report=TRANSPOSE / "slow.cu")
    with pytest.raises(ValidationError):
        d.kind = TargetKind.KERNELBENCH  # type: ignore[misc]
    assert d.file(FileRole.REPORT) is not None
    assert TargetDescription.model_validate_json(d.model_dump_json()) == d


def test_a_changed_or_removed_file_is_bad_input_naming_it(tmp_path: Path) -> None:
    folder = Path(shutil.copytree(TRANSPOSE, tmp_path / "t"))
    d = describe_target(folder / "slow.cu")
    d.check_unchanged("the loop")  # nothing changed yet
    spec = folder / "transpose.launch.toml"
    spec.write_text(spec.read_text() + "\n# edited\n")
    with pytest.raises(TargetChanged, match=r"transpose.launch.toml changed .*before the loop") as raised:
        d.check_unchanged("the loop")
    assert exit_code_for(raised.value) == ExitCode.USAGE and "\n" not in str(raised.value)
    (folder / "slow.cu").unlink()
    with pytest.raises(TargetChanged, match="slow.cu changed .*is gone"):
        d.check_unchanged("apply")


def test_a_file_perfagent_writes_itself_is_not_held_to_a_hash(tmp_path: Path) -> None:
    wl = optimize_workload(describe_target(KB / "01_vector_add.py"))
    moved = wl.retargeted(
        tmp_path / "01_vector_add_perfagent_triton.py", language="triton", has_model_new=True
    )
    assert moved.file == tmp_path / "01_vector_add_perfagent_triton.py" and moved.problem == wl.problem
    assert _hashes(moved.description)[FileRole.PRIMARY][1] is None
    moved.description.check_unchanged("apply")  # the new file does not exist yet, and that is no change
