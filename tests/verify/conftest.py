"""Fixtures of the verification and timing tests."""

from __future__ import annotations

import pytest

from perfagent.workloads import cuda_launch
from perfagent.workloads.cuda_launch import CompiledKernel


@pytest.fixture
def fake_nvrtc(monkeypatch: pytest.MonkeyPatch) -> None:
    """NVRTC, the GPU's attributes and torch's stream stood in for on the CPU: every launch preparation
    reaches them through ``cuda_launch``; a "compiled" kernel is only its name."""
    monkeypatch.setattr(
        cuda_launch,
        "compile_kernel",
        lambda source, kernel, defines: CompiledKernel(
            kernel=kernel, name=kernel, source=source, defines=defines
        ),
    )
    monkeypatch.setattr(cuda_launch, "device_attributes", dict)
    monkeypatch.setattr(cuda_launch, "current_stream", lambda: None)
