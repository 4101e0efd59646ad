"""The sandbox's job table and the one launch preparation shared by verification, timing and profiling."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from perfagent.sandbox.jobs import entry_point, job_of, registered
from perfagent.timing.jobs import BenchRequest
from perfagent.verify.jobs import VerifyRequest
from perfagent.workloads.cuda_launch import CompiledKernel, is_poison
from perfagent.workloads.detect import detect_reference
from perfagent.workloads.launch_prep import build_launch, input_buffers, prepare_launch, seeded_inputs

REPO = Path(__file__).resolve().parents[2]
TRANSPOSE = REPO / "examples" / "cuda" / "01_transpose_naive"


def test_verification_and_timing_register_their_jobs() -> None:
    assert set(registered()) >= {"verify-kernelbench", "verify-cuda-kernel", "bench"}


@pytest.mark.parametrize("name", ["verify-kernelbench", "verify-cuda-kernel", "bench"])
def test_every_job_resolves_to_a_function(name: Any) -> None:
    assert callable(entry_point(registered()[name]))


def test_a_request_finds_its_job_and_mode_by_type() -> None:
    ref = detect_reference(TRANSPOSE / "transpose.launch.toml")
    assert job_of(BenchRequest(reference=ref)).mode == "bench"
    assert job_of(VerifyRequest(job="verify-cuda-kernel", reference=ref)).mode == "verify"


def test_the_sandbox_names_no_module_above_it() -> None:
    """The registry is filled from above: no sandbox source spells a verify/timing module, even as a string."""
    for source in (REPO / "perfagent" / "sandbox").glob("*.py"):
        text = source.read_text()
        assert "perfagent.verify" not in text and "perfagent.timing" not in text, source.name


def _small_spec(tmp_path: Path) -> Path:
    text = (TRANSPOSE / "transpose.launch.toml").read_text()
    text = text.replace('source = "slow.cu"', f'source = "{TRANSPOSE / "slow.cu"}"')
    text = text.replace("width = 8192\nheight = 8192", "width = 16\nheight = 8")
    path = tmp_path / "t.launch.toml"
    path.write_text(text)
    return path


def test_prepare_launch_seeds_inputs_poisons_outputs_and_refills(tmp_path: Path, fake_nvrtc: None) -> None:
    labels: list[str] = []

    def build(label: str, step: Any) -> CompiledKernel:
        labels.append(label)
        result: CompiledKernel = step()
        return result

    resolved, compiled = build_launch(_small_spec(tmp_path), source=None, build=build)
    assert labels == ["NVRTC build of slow.cu:transpose_naive"] and compiled.name == "transpose_naive"
    inputs = seeded_inputs(resolved, seed=3, device="cpu")
    assert set(inputs) == {"idata"}
    assert torch.equal(inputs["idata"], seeded_inputs(resolved, seed=3, device="cpu")["idata"])

    shared = prepare_launch(resolved, compiled, inputs=inputs, poison=2, device="cpu")
    assert shared.buffers["idata"] is inputs["idata"]  # no copy: the seeded tensors are the buffers
    assert bool(is_poison(shared.buffers["odata"], 2).all())

    copied = prepare_launch(
        resolved, compiled, inputs=inputs, poison=1, device="cpu", into=input_buffers(resolved, "cpu")
    )
    assert copied.buffers["idata"] is not inputs["idata"]
    assert torch.equal(copied.buffers["idata"], inputs["idata"])
    assert bool(is_poison(copied.buffers["odata"], 1).all())
    copied.buffers["idata"].zero_()
    copied.refill()
    assert torch.equal(copied.buffers["idata"], inputs["idata"])
    assert copied.args[0] == copied.buffers["odata"].data_ptr()


@pytest.mark.parametrize(
    "module", ["perfagent.sandbox", "perfagent.verify", "perfagent.timing", "perfagent.workloads"]
)
def test_parent_side_packages_do_not_import_torch(module: str) -> None:
    """Only the worker (and the profiling harness) import torch: the parent stays light."""
    code = f"import json, sys, {module}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert "torch" not in set(json.loads(out.stdout))
