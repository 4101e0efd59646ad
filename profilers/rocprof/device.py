"""The device an AMD profile ran on: facts from agent_info/sysinfo/rocpd, the knowledge spec, and peaks.

Peaks, in order of preference: rocprof-compute's measured ``roofline.csv`` (``empirical:roofline.csv``),
then the datasheet entry of ``knowledge/data/gpus/amd.toml`` (``knowledge:<id>``). The spec is found by
the reported name first (``MI300X_A1`` -> mi300x); a bare ``gfx950`` / 'AMD Radeon Graphics' is resolved
by architecture, CU count and engine clock (the gfx950 fixture: 256 CUs at 2400 MHz -> MI355X). When the
CU count contradicts the spec (a CPX partition shows 38 of the MI300X's 304 CUs) the datasheet peaks are
not used, and a note says why.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from knowledge.gpus import GpuSpec, all_gpus, spec_for
from profilers.model import DeviceInfo, DevicePeaks
from profilers.rocprof.compute import SysInfo
from profilers.rocprof.csv import AgentRow
from profilers.rocprof.rocpd import RocpdAgent

LDS_BYTES_PER_CU = {"gfx90a": 64 * 1024, "gfx940": 64 * 1024, "gfx941": 64 * 1024, "gfx942": 64 * 1024}
"""LDS per CU where the files do not say (gfx950: 160 KiB, reported by agent info)."""
DEFAULT_MAX_WAVES_PER_CU = 32
"""CDNA2/3/4: 4 SIMDs x 8 wave slots."""
_UNINFORMATIVE = ("amd radeon graphics", "ip discovery", "")


@dataclass(frozen=True)
class DeviceFacts:
    """What a profile's files say about its GPU (None = not recorded)."""

    name: str | None = None
    """The most specific name recorded (sysinfo gpu_model, agent Product_Name, rocpd product name)."""
    arch: str | None = None
    cu_count: int | None = None
    num_xcd: int | None = None
    max_sclk_mhz: float | None = None
    cur_sclk_mhz: float | None = None
    cur_mclk_mhz: float | None = None
    lds_bytes_per_cu: int | None = None
    max_waves_per_cu: int | None = None
    simd_per_cu: int | None = None
    wave_size: int | None = None
    l2_bytes: int | None = None
    """Total L2 of the device, byte."""
    total_l2_chan: int | None = None
    hbm_bw_gbs: float | None = None
    lds_banks_per_cu: int | None = None
    source: str = ""
    """Which file the facts came from."""

    @property
    def sclk_mhz(self) -> float | None:
        """The clock to convert durations to cycles: the current clock if recorded, else the maximum."""
        return self.cur_sclk_mhz or self.max_sclk_mhz


def _arch_from_version(version: int | None) -> str | None:
    """Agent info's Gfx_Target_Version (90500) -> 'gfx950'; 90010 -> 'gfx90a'."""
    if not version:
        return None
    major, minor, step = version // 10000, (version // 100) % 100, version % 100
    return f"gfx{major}{minor}{step:x}"


def facts_from_agent(agent: AgentRow) -> DeviceFacts:
    """Device facts from a rocprofv3 agent-info row."""
    name = agent.name or ""
    arch = name if name.startswith("gfx") else _arch_from_version(agent.gfx_target_version)
    product = agent.product_name if (agent.product_name or "").strip().lower() not in _UNINFORMATIVE else None
    return DeviceFacts(
        name=product or agent.name,
        arch=arch,
        cu_count=agent.cu_count,
        num_xcd=agent.num_xcc,
        max_sclk_mhz=float(agent.max_engine_clk_mhz) if agent.max_engine_clk_mhz else None,
        lds_bytes_per_cu=agent.lds_kib * 1024 if agent.lds_kib else None,
        max_waves_per_cu=agent.max_waves_per_cu,
        simd_per_cu=agent.simd_per_cu,
        wave_size=agent.wave_front_size,
        source="agent_info.csv",
    )


def facts_from_sysinfo(info: SysInfo) -> DeviceFacts:
    """Device facts from a rocprof-compute ``sysinfo.csv``."""
    l2 = None
    if info.gpu_l2_kib:
        # sysinfo prints the L2 of one XCD on MI300 (4096 KiB); the device total spans all XCDs.
        l2 = info.gpu_l2_kib * 1024 * (info.num_xcd or 1)
    return DeviceFacts(
        name=info.gpu_model,
        arch=info.gpu_arch,
        cu_count=info.cu_per_gpu,
        num_xcd=info.num_xcd,
        max_sclk_mhz=info.max_sclk_mhz,
        cur_sclk_mhz=info.cur_sclk_mhz,
        cur_mclk_mhz=info.cur_mclk_mhz,
        lds_bytes_per_cu=LDS_BYTES_PER_CU.get(info.gpu_arch or ""),
        max_waves_per_cu=info.max_waves_per_cu,
        simd_per_cu=info.simd_per_cu,
        wave_size=info.wave_size,
        l2_bytes=l2,
        total_l2_chan=info.total_l2_chan,
        hbm_bw_gbs=info.hbm_bw_gbs,
        lds_banks_per_cu=info.lds_banks_per_cu,
        source="sysinfo.csv",
    )


def facts_from_rocpd(agent: RocpdAgent) -> DeviceFacts:
    """Device facts from a rocpd agent (extdata key names follow agent_info's, lower-cased: unverified)."""
    ext = {str(k).lower(): v for k, v in agent.extdata.items()}

    def number(*keys: str) -> int | None:
        for key in keys:
            value = ext.get(key)
            if isinstance(value, int | float) and value:
                return int(value)
        return None

    name = agent.name or ""
    product = agent.product_name if (agent.product_name or "").strip().lower() not in _UNINFORMATIVE else None
    lds_kib = number("lds_size_in_kb")
    clock = number("max_engine_clk_fcompute")
    return DeviceFacts(
        name=product or agent.model_name or agent.name,
        arch=name if name.startswith("gfx") else None,
        cu_count=number("cu_count"),
        num_xcd=number("num_xcc"),
        max_sclk_mhz=float(clock) if clock else None,
        lds_bytes_per_cu=lds_kib * 1024 if lds_kib else None,
        max_waves_per_cu=number("max_waves_per_cu"),
        simd_per_cu=number("simd_per_cu"),
        wave_size=number("wave_front_size"),
        source="rocpd",
    )


def resolve_spec(facts: DeviceFacts) -> tuple[GpuSpec | None, str | None]:
    """The knowledge spec of the device and, when it needs saying, a note on how it was chosen.

    Returns:
        (spec or None, note or None).
    """
    amd = [s for s in all_gpus() if s.vendor == "amd"]
    by_name = spec_for(facts.name) if facts.name else None
    if by_name is not None and by_name.vendor == "amd":
        if facts.cu_count and facts.cu_count != by_name.sm_count:
            return None, (
                f"device '{facts.name}' reports {facts.cu_count} CUs but the {by_name.name} has "
                f"{by_name.sm_count} (partitioned?): datasheet peaks not used"
            )
        return by_name, None
    if not facts.arch:
        return None, None
    candidates = [s for s in amd if s.arch == facts.arch]
    if facts.cu_count:
        candidates = [s for s in candidates if s.sm_count == facts.cu_count]
    if len(candidates) > 1 and facts.max_sclk_mhz:
        clocked = [s for s in candidates if s.boost_clock_mhz == facts.max_sclk_mhz]
        candidates = clocked or candidates
    if len(candidates) == 1:
        spec = candidates[0]
        clock = f", {facts.max_sclk_mhz:g} MHz" if facts.max_sclk_mhz else ""
        return spec, (
            f"device identified as {spec.name} from {facts.arch}, {facts.cu_count} CUs{clock} "
            f"(the profile names it '{facts.name or 'unknown'}')"
        )
    if len(candidates) > 1:
        names = " or ".join(s.name for s in candidates)
        return (
            None,
            f"device {facts.arch} with {facts.cu_count} CUs could be {names}: datasheet peaks not used",
        )
    return None, None


def spec_peaks(spec: GpuSpec) -> DevicePeaks:
    """Datasheet peaks of ``spec`` in canonical units."""
    flops: dict[str, float] = {}
    for key, value in (
        ("fp64", spec.fp64_tflops),
        ("fp32", spec.fp32_tflops),
        ("fp16", spec.fp16_tflops),
        ("tensor", spec.tensor_fp16_tflops),
    ):
        if value is not None:
            flops[key] = value * 1e12
    return DevicePeaks(
        dram_bytes_per_s=spec.dram_bandwidth_gbs * 1e9,
        l2_bytes_per_s=None if spec.l2_bandwidth_gbs is None else spec.l2_bandwidth_gbs * 1e9,
        flops_per_s=flops,
        source=f"knowledge:{spec.id}",
    )


def device_info(facts: DeviceFacts | None, empirical: DevicePeaks | None) -> tuple[DeviceInfo, list[str]]:
    """The canonical ``DeviceInfo`` and the notes its construction warrants.

    Args:
        facts: what the files recorded (None: nothing).
        empirical: peaks from a ``roofline.csv``, preferred over the datasheet.
    """
    notes: list[str] = []
    facts = facts or DeviceFacts()
    spec, note = resolve_spec(facts)
    if note:
        notes.append(note)
    if spec is not None:
        facts = replace(
            facts,
            num_xcd=facts.num_xcd or spec.xcd_count,
            cu_count=facts.cu_count or spec.sm_count,
            max_sclk_mhz=facts.max_sclk_mhz or spec.boost_clock_mhz,
            arch=facts.arch or spec.arch,
        )
    peaks = empirical or (spec_peaks(spec) if spec is not None else DevicePeaks())
    name = facts.name
    if spec is not None and (name is None or spec_for(name) is None):
        name = spec.name
    l2 = facts.l2_bytes
    if l2 is None and spec is not None and spec.l2_cache_mib is not None:
        l2 = int(spec.l2_cache_mib * 1024 * 1024)
    lds = facts.lds_bytes_per_cu or LDS_BYTES_PER_CU.get(facts.arch or "")
    info = DeviceInfo(
        name=name,
        vendor="amd",
        arch=facts.arch,
        sm_count=facts.cu_count,
        sm_clock_hz=facts.sclk_mhz * 1e6 if facts.sclk_mhz else None,
        dram_clock_hz=facts.cur_mclk_mhz * 1e6 if facts.cur_mclk_mhz else None,
        l2_cache_bytes=l2,
        max_shared_memory_per_sm_bytes=lds,
        xcd_count=facts.num_xcd,
        peaks=peaks,
    )
    return info, notes
