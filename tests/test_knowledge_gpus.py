"""The GPU spec table validates and device names reported by profilers map to the right entry."""

from __future__ import annotations

import pytest

from knowledge import load_toml
from knowledge.gpus import GpuSpec, all_gpus, spec_by_id, spec_for


def test_every_entry_validates() -> None:
    raw = load_toml("gpus/nvidia.toml")["gpu"]
    specs = [GpuSpec(**entry) for entry in raw]
    assert len(specs) >= 17
    assert len({s.id for s in specs}) == len(specs), "duplicate ids"


@pytest.mark.parametrize("spec", all_gpus(), ids=lambda s: s.id)
def test_entry_is_sane(spec: GpuSpec) -> None:
    assert spec.sources, "every entry cites its document"
    assert spec.arch.startswith("sm_" if spec.vendor == "nvidia" else "gfx")
    assert spec.sm_count > 0 and spec.dram_bandwidth_gbs > 0
    if spec.fp32_tflops is not None and spec.fp64_tflops is not None:
        assert spec.fp64_tflops <= spec.fp32_tflops
    if spec.tensor_fp16_tflops is not None and spec.fp32_tflops is not None:
        assert spec.tensor_fp16_tflops > spec.fp32_tflops


@pytest.mark.parametrize(
    ("device_name", "spec_id"),
    [
        ("NVIDIA H100 80GB HBM3", "h100-sxm"),
        ("NVIDIA H100 PCIe", "h100-pcie"),
        ("NVIDIA H200", "h200"),
        ("NVIDIA A100-PCIE-40GB", "a100-pcie-40gb"),
        ("NVIDIA A100 80GB PCIe", "a100-pcie-80gb"),
        ("NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb"),
        ("NVIDIA A100-SXM4-40GB", "a100-sxm4-40gb"),
        ("NVIDIA A10G", "a10g"),
        ("NVIDIA L4", "l4"),
        ("NVIDIA L40S", "l40s"),
        ("Tesla T4", "t4"),
        ("Tesla V100-SXM2-32GB", "v100-sxm2"),
        ("NVIDIA GeForce RTX 4090", "rtx-4090"),
        ("NVIDIA GeForce RTX 3090", "rtx-3090"),
        ("NVIDIA RTX A6000", "rtx-a6000"),
        ("NVIDIA GeForce GTX 1660 SUPER", "gtx-1660-super"),
        ("NVIDIA B200", "b200"),
    ],
)
def test_spec_for_device_names(device_name: str, spec_id: str) -> None:
    spec = spec_for(device_name)
    assert spec is not None and spec.id == spec_id


@pytest.mark.parametrize(
    "device_name", ["NVIDIA RTX A1000", "NVIDIA H200 NVL", "NVIDIA GeForce RTX 3090 Ti", ""]
)
def test_no_false_matches(device_name: str) -> None:
    # Similar names must not borrow another part's peaks (A1000 contains "A100").
    assert spec_for(device_name) is None


def test_h100_sxm_datasheet_numbers() -> None:
    spec = spec_by_id("h100-sxm")
    assert spec is not None
    assert (spec.sm_count, spec.dram_bandwidth_gbs, spec.tensor_fp16_tflops) == (132, 3350, 989.4)
