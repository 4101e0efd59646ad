"""'auto' is resolved in one place (``perfagent.sandbox.device``), by the child that owns the GPU: the worker
calls it, and optimize's device probe runs it as a child process and reads its answer (issue 28)."""

from __future__ import annotations

import json
import os
import sys

import pytest

from perfagent.optimize import measure
from perfagent.sandbox import device
from profilers.process import run_command
from profilers.settings import RESOLVED_DEVICES


def test_cpu_is_resolved_without_torch_and_runs_triton_through_its_interpreter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    monkeypatch.setitem(sys.modules, "torch", None)  # importing torch now fails: 'cpu' must not need it
    resolved, name = device.resolve_device("cpu")
    assert resolved == "cpu" and name
    assert os.environ["TRITON_INTERPRET"] == "1"


def test_the_device_child_answers_one_json_line_and_says_a_bad_device_with_exit_2() -> None:
    done = run_command([sys.executable, "-m", "perfagent.sandbox.device", "cpu"], timeout_s=120)
    assert done.ok
    assert json.loads(done.stdout.strip().splitlines()[-1])["device"] == "cpu"
    bad = run_command([sys.executable, "-m", "perfagent.sandbox.device", "gpu"], timeout_s=120)
    assert bad.returncode == 2
    assert json.loads(bad.stdout)["error"] == "unknown device 'gpu'"


def test_auto_resolves_to_a_device_the_workers_know_and_the_probe_agrees() -> None:
    pytest.importorskip("torch")
    resolved, _ = device.resolve_device("auto")
    assert resolved in RESOLVED_DEVICES
    name = measure._torch_cuda_name()  # the optimize probe asks the same resolution in a child
    assert (name is not None) == (resolved == "cuda")
