"""The profiling harness (``python -m perfagent.workloads.run_spec``) and the commands ncu is given."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from perfagent.optimize.measure import probe_gpu, script_check_command
from perfagent.optimize.reprofile import harness_command, harness_nvtx_include, profile_options
from perfagent.workloads.detect import resolve
from profilers.base import WORKLOAD_NVTX_RANGE, ProfileRequest
from profilers.ncu.argv import build_ncu_argv
from tests.optimize.helpers import EXAMPLES, KB, ROOT, TRANSPOSE


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TRITON_INTERPRET": "1", "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "perfagent.workloads.run_spec", *args],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        cwd=ROOT,
    )


def test_kernelbench_candidate_runs_on_cpu() -> None:
    pytest.importorskip("triton")
    done = _run(
        str(KB / "01_vector_add.py"),
        "--candidate",
        str(KB / "01_vector_add_triton.py"),
        "--device",
        "cpu",
        "--repeat",
        "1",
    )
    assert done.returncode == 0, done.stderr
    assert "run_spec: ModelNew: 1 warm-up + 1 call(s) on cpu" in done.stdout


def test_launch_spec_needs_a_gpu_and_says_so() -> None:
    done = _run(str(TRANSPOSE / "transpose.launch.toml"), "--kernel-file", str(TRANSPOSE / "slow.cu"))
    assert done.returncode == 2 and "need a CUDA GPU" in done.stderr


def test_commands_given_to_ncu() -> None:
    cu = resolve(TRANSPOSE / "slow.cu")
    spec = Path("/tmp/c/launch.toml")
    cmd = harness_command(cu, Path("/tmp/c/source.cu"), spec)
    assert cmd[0] == "env" and cmd[1].startswith(f"PYTHONPATH={ROOT}")
    assert cmd[3:] == [
        "-m",
        "perfagent.workloads.run_spec",
        str(spec),
        "--kernel-file",
        "/tmp/c/source.cu",
        "--repeat",
        "2",
    ]
    assert cu.kernel_regex() == "^transpose_smem_conflicts$"
    templated = resolve(ROOT / "benchmarks" / "unseen2" / "14_shuffle3_template_simple" / "slow.cu")
    assert templated.kernel_regex() == "^shuffle_in_tensor3_simple$"  # as ncu's function name shows it
    kb = resolve(KB / "01_vector_add_triton.py", problem=KB / "01_vector_add.py")
    cmd = harness_command(kb, kb.file, None)
    assert cmd[-2:] == ["--candidate", str(kb.file)] and str(KB / "01_vector_add.py") in cmd
    assert kb.kernel_regex() == "^(add_kernel)$"
    problem = resolve(KB / "01_vector_add.py")
    assert (
        "--candidate" not in harness_command(problem, problem.file, None) and problem.kernel_regex() is None
    )
    script = resolve(EXAMPLES / "triton" / "02_softmax_small_block.py")
    assert harness_command(script, script.file, None)[:2] == ["env", "EXAMPLE_REPS=3"]
    assert "TRITON_INTERPRET=1" in script_check_command(
        gpu=False
    ) and "TRITON_INTERPRET=1" not in script_check_command(gpu=True)


def test_device_cpu_never_probes() -> None:
    assert probe_gpu("cpu") == (False, "cpu")


# ------------------------------------------------------------------------- KernelBench: profile forward() only


def test_kernelbench_ncu_command_profiles_only_the_forward_range(tmp_path: Path) -> None:
    """The ncu command line for a KernelBench candidate carries ``--nvtx --nvtx-include perfagent_forward/``."""
    kb = resolve(KB / "01_vector_add_cuda.py", problem=KB / "01_vector_add.py")
    assert harness_nvtx_include(kb) == ["perfagent_forward/"]
    request = ProfileRequest(
        command=harness_command(kb, kb.file, None),
        workdir=tmp_path,
        kernel_regex=kb.kernel_regex(kb.file.read_text()),
        nvtx_include=harness_nvtx_include(kb),
    )
    argv = build_ncu_argv(request, ncu="ncu", report_path=tmp_path / "r.ncu-rep", log_path=tmp_path / "r.log")
    at = argv.index("--nvtx")
    assert argv[at : at + 3] == ["--nvtx", "--nvtx-include", "perfagent_forward/"]
    assert argv.count("--nvtx") == 1
    # The application comes last, after every ncu option.
    assert argv[-len(request.command) :] == request.command
    # Launch-spec kernels and Triton scripts have no forward(): no NVTX filter.
    assert harness_nvtx_include(resolve(TRANSPOSE / "slow.cu")) == []
    assert harness_nvtx_include(resolve(EXAMPLES / "triton" / "02_softmax_small_block.py")) == []


def test_reprofile_passes_the_nvtx_filter() -> None:
    kb = resolve(KB / "01_vector_add_triton.py", problem=KB / "01_vector_add.py")
    options = profile_options(kb, kb.file, None, arch="sm_90", timeout_s=10, candidate=False)
    assert options["nvtx_include"] == ["perfagent_forward/"]
    assert options["kernel"] == "^(add_kernel)$"
    assert options["command"] == harness_command(kb, kb.file, None) and options["launcher"] is None


PROBLEM = """
import torch
import torch.nn as nn

CALLS = []


class Model(nn.Module):
    def forward(self, a):
        from perfagent.workloads import run_spec

        CALLS.append(run_spec.INSIDE[-1] if run_spec.INSIDE else False)
        return a + 1


def get_inputs():
    return [torch.ones(4)]


def get_init_inputs():
    return []
"""


def test_harness_wraps_each_forward_call_in_the_range(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One warm-up call outside the range, then ``repeat`` calls each inside it."""
    from perfagent.workloads import run_spec

    problem = tmp_path / "problem.py"
    problem.write_text(PROBLEM)
    opened: list[str] = []

    @contextmanager
    def recording_range(device: str) -> Iterator[None]:
        opened.append(device)
        run_spec.INSIDE.append(True)  # type: ignore[attr-defined]
        try:
            yield
        finally:
            run_spec.INSIDE.pop()  # type: ignore[attr-defined]

    monkeypatch.setattr(run_spec, "INSIDE", [], raising=False)
    monkeypatch.setattr(run_spec, "forward_range", recording_range)
    line = run_spec.run_kernelbench(problem, None, repeat=2, device="cpu")
    module = sys.modules["perfagent_problem"]
    assert module.CALLS == [False, True, True]
    assert opened == ["cpu", "cpu"]
    assert line == "Model: 1 warm-up + 2 call(s) on cpu"


def test_forward_range_pushes_and_pops_the_nvtx_range(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from perfagent.workloads.run_spec import forward_range

    events: list[str] = []
    monkeypatch.setattr(torch.cuda.nvtx, "range_push", lambda name: events.append(f"push {name}"))
    monkeypatch.setattr(torch.cuda.nvtx, "range_pop", lambda: events.append("pop"))
    with forward_range("cuda"):
        events.append("forward")
    with pytest.raises(RuntimeError), forward_range("cuda"):
        raise RuntimeError("a failing forward still closes the range")
    with forward_range("cpu"):
        events.append("cpu forward")
    assert events == [
        f"push {WORKLOAD_NVTX_RANGE}",
        "forward",
        "pop",
        f"push {WORKLOAD_NVTX_RANGE}",
        "pop",
        "cpu forward",
    ]
    assert WORKLOAD_NVTX_RANGE == "perfagent_forward"


def test_the_loop_targets_a_templated_entry_by_its_function_name() -> None:
    from perfagent.optimize.baseline import target_kernel
    from tests.render.records import counters_record

    kernels = counters_record().kernels  # stencil_column<float>, then gemm_tiled<float, 32>
    wl = resolve(ROOT / "benchmarks" / "unseen2" / "14_shuffle3_template_simple" / "slow.cu")
    gemm = wl.retargeted(entry="gemm_tiled<float, 32>")
    picked = target_kernel(kernels, gemm, None)
    assert picked is not None and picked.profile is not None and picked.profile.base_name == "gemm_tiled"
