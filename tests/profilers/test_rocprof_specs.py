"""AMD GPU specs (knowledge/data/gpus/amd.toml) and how the rocprof reader resolves a device to one."""

from __future__ import annotations

import pytest

from knowledge import load_toml
from knowledge.gpus import GpuSpec, spec_by_id, spec_for
from profilers.rocprof.device import DeviceFacts, device_info, resolve_spec

AMD_IDS = ["mi210", "mi250x-gcd", "mi250-gcd", "mi300a", "mi300x", "mi325x", "mi350x", "mi355x"]


def amd_specs() -> list[GpuSpec]:
    return [GpuSpec(**entry) for entry in load_toml("gpus/amd.toml")["gpu"]]


def test_entries_validate() -> None:
    specs = amd_specs()
    assert [s.id for s in specs] == AMD_IDS
    for spec in specs:
        assert spec.vendor == "amd" and spec.arch.startswith("gfx") and spec.sources
        assert (
            spec.fp64_tflops is not None
            and spec.fp32_tflops is not None
            and spec.tensor_fp16_tflops is not None
        )
        assert spec.fp64_tflops <= spec.fp32_tflops < spec.tensor_fp16_tflops
        assert spec.xcd_count is not None
        # Peak vector FP32 is 2 FLOP x 64 lanes x (1 or 2 packed) per CU per clock.
        assert spec.boost_clock_mhz is not None
        per_cu_clock = spec.fp32_tflops * 1e12 / (spec.sm_count * spec.boost_clock_mhz * 1e6)
        assert per_cu_clock == pytest.approx(128, rel=0.01) or per_cu_clock == pytest.approx(256, rel=0.01)


@pytest.mark.parametrize(
    ("spec_id", "xcds", "cus", "arch"),
    [
        ("mi300x", 8, 304, "gfx942"),
        ("mi300a", 6, 228, "gfx942"),
        ("mi325x", 8, 304, "gfx942"),
        ("mi355x", 8, 256, "gfx950"),
        ("mi250x-gcd", 1, 110, "gfx90a"),
    ],
)
def test_xcd_counts(spec_id: str, xcds: int, cus: int, arch: str) -> None:
    spec = spec_by_id(spec_id)
    assert spec is not None and (spec.xcd_count, spec.sm_count, spec.arch) == (xcds, cus, arch)


@pytest.mark.parametrize(
    ("name", "spec_id"),
    [
        ("MI300X_A1", "mi300x"),  # rocprof-compute sysinfo gpu_model (fixture)
        ("AMD Instinct MI300X", "mi300x"),
        ("MI300A_A1", "mi300a"),
        ("AMD Instinct MI325X", "mi325x"),
        ("AMD Instinct MI250X", "mi250x-gcd"),
        ("AMD Instinct MI250", "mi250-gcd"),
        ("AMD Instinct MI210", "mi210"),
        ("AMD Instinct MI355X", "mi355x"),
        ("AMD Instinct MI350X", "mi350x"),
    ],
)
def test_names_match(name: str, spec_id: str) -> None:
    spec = spec_for(name)
    assert spec is not None and spec.id == spec_id


@pytest.mark.parametrize(
    "name", ["gfx942", "gfx950", "AMD Radeon Graphics", "AMD Instinct MI250X/MI250", "MI100"]
)
def test_ambiguous_names_do_not_match(name: str) -> None:
    assert spec_for(name) is None


def test_bare_gfx_resolved_by_cus_and_clock() -> None:
    spec, note = resolve_spec(DeviceFacts(name="gfx950", arch="gfx950", cu_count=256, max_sclk_mhz=2400))
    assert spec is not None and spec.id == "mi355x" and note and "MI355X" in note
    spec, _ = resolve_spec(DeviceFacts(name="gfx950", arch="gfx950", cu_count=256, max_sclk_mhz=2200))
    assert spec is not None and spec.id == "mi350x"
    spec, _ = resolve_spec(DeviceFacts(name="AMD Instinct MI250X/MI250", arch="gfx90a", cu_count=110))
    assert spec is not None and spec.id == "mi250x-gcd"
    spec, _ = resolve_spec(DeviceFacts(name="MI300A_A1", arch="gfx942", cu_count=228))
    assert spec is not None and spec.id == "mi300a"


def test_ambiguous_device_gets_no_datasheet_peaks() -> None:
    spec, note = resolve_spec(DeviceFacts(name="gfx942", arch="gfx942", cu_count=304, max_sclk_mhz=2100))
    assert spec is None and note and "MI300X or AMD Instinct MI325X" in note
    info, notes = device_info(
        DeviceFacts(name="gfx942", arch="gfx942", cu_count=304, max_sclk_mhz=2100), None
    )
    assert info.peaks.source == "unknown" and notes


def test_partitioned_device_does_not_borrow_whole_chip_peaks() -> None:
    spec, note = resolve_spec(DeviceFacts(name="MI300X_A1", arch="gfx942", cu_count=38))
    assert spec is None and note and "partitioned" in note
