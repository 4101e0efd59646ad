"""The torch-free profiling harness (``torch_free_harness``) and the choice of harness (``harness_choice``):
it never imports torch, it refuses what it cannot run with the next step, it lays out a spec's arguments
as the torch harness does, and a spec is sent to it only when it can serve it, else to ``run_spec`` with
the reason. The launch itself needs a GPU: ``tests/gpu/test_torch_free_harness_gpu.py``."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from perfagent.workloads import harness_choice, numpy_inputs, torch_free_harness
from perfagent.workloads.detect import resolve
from perfagent.workloads.harness_choice import TORCH_FREE_HARNESS, TORCH_HARNESS, choose_harness
from perfagent.workloads.launch_resolve import resolve_launch
from perfagent.workloads.launch_spec import load_launch_spec
from profilers.core_errors import BadInput
from tests.workloads.cuda_stub import cuda_installed

__all__ = ["cuda_installed"]  # the fixture, used by name

ROOT = Path(__file__).resolve().parents[2]
KB = ROOT / "examples" / "kernelbench"
KERNEL = """extern "C" __global__ void mix(__nv_bfloat16 *out, const __half *x, int *acc, int n, float a) { }
"""
SPEC = """
source = "k.cu"
kernel = "mix"
grid = ["ceil_div(n, 128)"]
block = [128]

[params]
n = 3000

[[args]]
name = "out"
dtype = "bfloat16"
shape = ["n"]
role = "output"

[[args]]
name = "x"
dtype = "float16"
shape = ["n"]
init = "uniform"
low = -1.0
high = 1.0

[[args]]
name = "acc"
dtype = "int32"
shape = [2, "n"]
role = "inout"
init = "zeros"

[[args]]
name = "n"
dtype = "int32"
value = "n"

[[args]]
name = "a"
dtype = "float32"
value = 0.5
"""


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    (tmp_path / "k.cu").write_text(KERNEL)
    path = tmp_path / "k.launch.toml"
    path.write_text(SPEC)
    return path


def test_the_harness_and_the_choice_import_no_torch() -> None:
    code = (
        "import sys, perfagent.workloads.torch_free_harness, perfagent.workloads.harness_choice; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'triton', 'cupy')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_harness_refuses_what_it_cannot_run(spec: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert torch_free_harness.main([str(KB / "01_vector_add.py")]) == 2
    assert "not KernelBench problems" in capsys.readouterr().err
    assert torch_free_harness.main([str(spec), "--repeat", "0"]) == 2
    assert "--repeat must be at least 1" in capsys.readouterr().err
    lone = spec.parent / "lone" / "k.cu"
    lone.parent.mkdir()
    lone.write_text(KERNEL)
    assert torch_free_harness.main([str(lone)]) == 2
    assert "no launch spec given for k.cu — pass --spec PATH" in capsys.readouterr().err


def test_without_cuda_core_the_launch_fails_with_the_cause(
    spec: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if importlib.util.find_spec("cuda") is not None and importlib.util.find_spec("cuda.core") is not None:
        pytest.skip("cuda.core is installed here: the GPU test runs the harness")
    assert torch_free_harness.main([str(spec), "--kernel-file", str(spec.parent / "k.cu")]) == 1
    assert "cuda.core is not installed" in capsys.readouterr().err


def test_arguments_are_drawn_poisoned_and_laid_out_in_kernel_order(spec: Path) -> None:
    resolved = resolve_launch(load_launch_spec(spec), spec)
    arrays = torch_free_harness.host_arrays(resolved)
    assert set(arrays) == {"out", "x", "acc"}
    assert arrays["out"].dtype == np.uint16 and (arrays["out"] == 0x7FC0).all()  # bfloat16 NaN
    assert (
        arrays["x"].dtype == np.float16 and -1.0 <= arrays["x"].min() < arrays["x"].max() <= 1.0
    )  # rounded to half
    assert arrays["acc"].shape == (2, 3000) and not arrays["acc"].any()
    args = torch_free_harness.kernel_args(resolved, {"out": 0x1000, "x": 0x2000, "acc": 0x3000})
    assert args[:3] == [0x1000, 0x2000, 0x3000]
    assert type(args[3]) is np.int32 and args[3] == 3000 and type(args[4]) is np.float32 and args[4] == 0.5


def test_an_argument_it_cannot_draw_is_refused_with_the_next_step(
    spec: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(numpy_inputs.HOST_DTYPES, "bfloat16")
    with pytest.raises(BadInput, match="cannot draw dtype bfloat16 of 'out'") as caught:
        torch_free_harness.host_arrays(resolve_launch(load_launch_spec(spec), spec))
    assert "perfagent.workloads.run_spec" in caught.value.hint


def test_a_spec_it_serves_goes_to_the_torch_free_harness(spec: Path, cuda_installed: None) -> None:
    choice = choose_harness(spec)
    assert (choice.module, choice.name, choice.reason) == (TORCH_FREE_HARNESS, "torch-free", "")
    assert choice.describe() == f"harness: torch-free ({TORCH_FREE_HARNESS})"


def test_each_reason_for_the_torch_harness_is_said(
    spec: Path, cuda_installed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(harness_choice.HARNESS_ENV, "torch")
    assert choose_harness(spec).reason == "PERFAGENT_PROFILE_HARNESS=torch"
    monkeypatch.setenv(harness_choice.HARNESS_ENV, "auto")
    monkeypatch.setitem(sys.modules, "cuda.core", None)  # what find_spec reports for a missing module
    forced = choose_harness(spec)
    assert (forced.module, forced.reason) == (TORCH_HARNESS, "cuda.core is not installed")
    monkeypatch.delitem(sys.modules, "cuda.core")
    monkeypatch.delitem(numpy_inputs.HOST_DTYPES, "bfloat16")
    assert choose_harness(spec).reason == "the torch-free harness cannot draw dtype bfloat16 of 'out'"
    broken = spec.parent / "broken.launch.toml"
    broken.write_text(SPEC.replace('kernel = "mix"', ""))
    reason = choose_harness(broken).reason
    assert reason.startswith("the spec does not load here (") and "kernel" in reason


def test_the_workloads_say_their_harness_and_the_command_runs_it(spec: Path, cuda_installed: None) -> None:
    cu = resolve(spec.parent / "k.cu")
    choice = cu.profile_harness(spec)
    assert choice is not None and choice.name == "torch-free"
    cmd = cu.harness_command(["python3"], spec.parent / "k.cu", spec, choice)
    assert cmd[:3] == ["python3", "-m", TORCH_FREE_HARNESS] and cmd[-2:] == ["--repeat", "2"]
    assert cu.harness_command(["python3"], spec.parent / "k.cu", spec)[2] == TORCH_HARNESS
    kb = resolve(KB / "01_vector_add_triton.py", problem=KB / "01_vector_add.py")
    kb_choice = kb.profile_harness(None)
    assert kb_choice is not None and (kb_choice.module, kb_choice.name) == (TORCH_HARNESS, "torch")
    assert resolve(ROOT / "examples" / "triton" / "02_softmax_small_block.py").profile_harness(None) is None
