"""The profiling harness (``python -m perfagent.workloads.run_spec``) and the commands ncu is given."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from perfagent.optimize.measure import harness_command, probe_gpu, script_check_command
from perfagent.optimize.workload import resolve

from .helpers import EXAMPLES, KB, ROOT, TRANSPOSE


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
    assert "run_spec: ModelNew: 1 call(s) on cpu" in done.stdout


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
