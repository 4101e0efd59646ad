"""GPU specifications (datasheet peaks), the roofline's fallback when a report lacks peak metrics.

One TOML file per vendor under ``knowledge/data/gpus/``; each ``[[gpu]]`` entry is a ``GpuSpec``.
Peaks here are datasheet values at boost clock: always labelled ``knowledge:<id>`` when used.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Literal

from pydantic import Field

from knowledge import KnowledgeModel, data_files, load_toml


class GpuSpec(KnowledgeModel):
    """Datasheet facts of one GPU model."""

    id: str
    """Stable key, e.g. 'h100-sxm'."""
    name: str
    """Marketing name."""
    vendor: Literal["nvidia", "amd"]
    match: list[str]
    """Case-insensitive regular expressions matched against the device name a profiler reports."""
    arch: str
    """'sm_90', 'gfx942'."""
    sm_count: int
    """SMs (NVIDIA) or CUs (AMD)."""
    boost_clock_mhz: float | None = None
    memory_gib: float | None = None
    dram_bandwidth_gbs: float
    """Peak DRAM bandwidth, GB/s (1e9 byte/s)."""
    l2_cache_mib: float | None = None
    l2_bandwidth_gbs: float | None = None
    fp64_tflops: float | None = None
    """Peak vector FP64 (non-tensor), TFLOP/s."""
    fp32_tflops: float | None = None
    fp16_tflops: float | None = None
    """Peak non-tensor FP16, TFLOP/s."""
    tensor_fp16_tflops: float | None = None
    """Peak dense FP16/BF16 tensor (matrix-core) throughput, TFLOP/s."""
    xcd_count: int | None = None
    """Accelerator complex dies (AMD MI300: 8); block order matters for L2 locality."""
    notes: str = ""
    sources: list[str] = Field(default_factory=list)
    """Where the numbers come from (datasheet URL or document name)."""


@cache
def all_gpus() -> tuple[GpuSpec, ...]:
    """Every GPU spec in the knowledge base."""
    specs: list[GpuSpec] = []
    for path in data_files("gpus"):
        specs.extend(GpuSpec(**entry) for entry in load_toml(path).get("gpu", []))
    return tuple(specs)


def spec_for(device_name: str | None) -> GpuSpec | None:
    """The spec whose ``match`` patterns match ``device_name`` (first match wins), else None."""
    if not device_name:
        return None
    for spec in all_gpus():
        if any(re.search(p, device_name, re.IGNORECASE) for p in spec.match):
            return spec
    return None


def spec_by_id(spec_id: str) -> GpuSpec | None:
    """The spec with ``id == spec_id``, else None."""
    return next((s for s in all_gpus() if s.id == spec_id), None)
