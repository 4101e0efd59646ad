"""Readers for a rocprof-compute (formerly Omniperf) workload folder: pmc_perf.csv, sysinfo.csv, roofline.csv.

``rocprof-compute profile -n NAME -- app`` writes ``workloads/NAME/<gpu_model>/`` with ``pmc_perf.csv``
(every replay pass joined into one wide row per dispatch: ``*_sum`` totals, per-instance ``X[i]``
columns, duplicated join columns ``Wave_Size_1``, ``XCC_Index_5``, ...), ``sysinfo.csv`` (one row of
GPU facts: CUs, clocks, XCDs, HBM bandwidth) and, unless ``--no-roof``, ``roofline.csv`` (the measured
empirical peaks, one row per device). See rocprof.md section 2.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from profilers.model import DevicePeaks
from profilers.rocprof.csv import first, iter_rows, norm, numeric_columns, read_header, to_float, to_int
from profilers.rocprof.dispatch import Dispatch

PMC_PERF = "pmc_perf.csv"
SYSINFO = "sysinfo.csv"
ROOFLINE = "roofline.csv"

_META = {
    norm(c)
    for c in (
        "Dispatch_ID",
        "GPU_ID",
        "Grid_Size",
        "Workgroup_Size",
        "LDS_Per_Workgroup",
        "Scratch_Per_Workitem",
        "Arch_VGPR",
        "Accum_VGPR",
        "SGPR",
        "Wave_Size",
        "Kernel_Name",
        "Correlation_ID",
        "Start_Timestamp",
        "End_Timestamp",
        "Node",
        "PID",
        "TID",
        "Queue_ID",
        "Kernel_ID",
        "GUID",
        "XCC_Index",
    )
}
_DUPLICATE_JOIN = re.compile(r"^(Wave_Size|Correlation_ID|XCC_Index|Dispatch_ID|GPU_ID|Kernel_Name)_\d+$")


def looks_like_pmc_perf(header: list[str]) -> bool:
    """A rocprof-compute joined ``pmc_perf.csv`` (wide, one row per dispatch)."""
    keys = {norm(c) for c in header}
    return {"dispatchid", "kernelname", "gpuid"} <= keys and "countername" not in keys


def find_workload_dir(path: Path) -> Path | None:
    """The folder holding ``pmc_perf.csv``: ``path`` itself or its only sub-folder that has one
    (``workloads/NAME`` vs ``workloads/NAME/MI300X_A1``)."""
    if not path.is_dir():
        return None
    if (path / PMC_PERF).is_file():
        return path
    candidates = [p for p in sorted(path.iterdir()) if p.is_dir() and (p / PMC_PERF).is_file()]
    return candidates[0] if len(candidates) == 1 else None


def read_pmc_perf(path: Path) -> list[Dispatch]:
    """One ``Dispatch`` per row, with every ``*_sum`` and scalar counter column (per-instance ``X[i]``
    columns and duplicated join columns skipped)."""
    header = read_header(path)
    counter_columns = [
        c for c in header if "[" not in c and norm(c) not in _META and not _DUPLICATE_JOIN.match(c)
    ]
    out: list[Dispatch] = []
    for position, rec in enumerate(iter_rows(path)):
        name = first(rec, "Kernel_Name")
        if name is None:
            continue
        values = numeric_columns(rec, counter_columns)
        out.append(
            Dispatch(
                kernel=name,
                index=position,
                dispatch_id=to_int(first(rec, "Dispatch_ID")),
                start_ns=to_int(first(rec, "Start_Timestamp")),
                end_ns=to_int(first(rec, "End_Timestamp")),
                grid_size=to_int(first(rec, "Grid_Size")),
                workgroup_size=to_int(first(rec, "Workgroup_Size")),
                lds_bytes=to_int(first(rec, "LDS_Per_Workgroup")),
                scratch_bytes=to_int(first(rec, "Scratch_Per_Workitem")),
                arch_vgpr=to_int(first(rec, "Arch_VGPR")),
                accum_vgpr=to_int(first(rec, "Accum_VGPR")),
                sgpr=to_int(first(rec, "SGPR")),
                wave_size=to_int(first(rec, "Wave_Size")),
                agent=first(rec, "GPU_ID"),
                counters=values,
            )
        )
    return out


@dataclass(frozen=True)
class SysInfo:
    """The fields of ``sysinfo.csv`` perfagent uses (None when absent)."""

    gpu_model: str | None
    gpu_arch: str | None
    cu_per_gpu: int | None
    simd_per_cu: int | None
    max_waves_per_cu: int | None
    wave_size: int | None
    max_sclk_mhz: float | None
    cur_sclk_mhz: float | None
    max_mclk_mhz: float | None
    cur_mclk_mhz: float | None
    total_l2_chan: int | None
    lds_banks_per_cu: int | None
    hbm_bw_gbs: float | None
    num_xcd: int | None
    gpu_l2_kib: int | None
    """L2 size as sysinfo prints it (KiB; per XCD on MI300)."""
    rocm_version: str | None
    version: str | None
    """rocprof-compute/Omniperf version field."""
    command: str | None
    workload_name: str | None
    compute_partition: str | None


def read_sysinfo(path: Path) -> SysInfo:
    """The first row of a ``sysinfo.csv``.

    Raises:
        BadReport: unreadable file.
    """
    rec = next(iter_rows(path), {})
    return SysInfo(
        gpu_model=first(rec, "gpu_model", "gpu_series"),
        gpu_arch=first(rec, "gpu_arch"),
        cu_per_gpu=to_int(first(rec, "cu_per_gpu")),
        simd_per_cu=to_int(first(rec, "simd_per_cu")),
        max_waves_per_cu=to_int(first(rec, "max_waves_per_cu")),
        wave_size=to_int(first(rec, "wave_size")),
        max_sclk_mhz=to_float(first(rec, "max_sclk")),
        cur_sclk_mhz=to_float(first(rec, "cur_sclk")),
        max_mclk_mhz=to_float(first(rec, "max_mclk")),
        cur_mclk_mhz=to_float(first(rec, "cur_mclk")),
        total_l2_chan=to_int(first(rec, "total_l2_chan")),
        lds_banks_per_cu=to_int(first(rec, "lds_banks_per_cu")),
        hbm_bw_gbs=to_float(first(rec, "hbm_bw")),
        num_xcd=to_int(first(rec, "num_xcd")),
        gpu_l2_kib=to_int(first(rec, "gpu_l2")),
        rocm_version=first(rec, "rocm_version"),
        version=first(rec, "version"),
        command=first(rec, "command"),
        workload_name=first(rec, "workload_name"),
        compute_partition=first(rec, "compute_partition"),
    )


def looks_like_roofline(header: list[str]) -> bool:
    """rocprof-compute's empirical ``roofline.csv``."""
    keys = {norm(c) for c in header}
    return {"device", "hbmbw", "l2bw", "fp32flops"} <= keys


@dataclass(frozen=True)
class RooflineRow:
    """One device's measured peaks from ``roofline.csv`` (GB/s and GFLOP/s as written)."""

    device: int | None
    hbm_gbs: float | None
    l2_gbs: float | None
    l1_gbs: float | None
    lds_gbs: float | None
    fp32_gflops: float | None
    fp64_gflops: float | None
    mfma_f16_gflops: float | None
    mfma_bf16_gflops: float | None
    mfma_f32_gflops: float | None
    mfma_f64_gflops: float | None
    mfma_i8_gops: float | None

    def peaks(self) -> DevicePeaks:
        """The canonical ``DevicePeaks`` (byte/s, FLOP/s). fp64/fp32 are the VALU ceilings; 'tensor' is
        the larger of MFMA F16 and BF16."""
        flops: dict[str, float] = {}
        if self.fp64_gflops is not None:
            flops["fp64"] = self.fp64_gflops * 1e9
        if self.fp32_gflops is not None:
            flops["fp32"] = self.fp32_gflops * 1e9
        tensor = [v for v in (self.mfma_f16_gflops, self.mfma_bf16_gflops) if v is not None]
        if tensor:
            flops["tensor"] = max(tensor) * 1e9
        return DevicePeaks(
            dram_bytes_per_s=None if self.hbm_gbs is None else self.hbm_gbs * 1e9,
            l2_bytes_per_s=None if self.l2_gbs is None else self.l2_gbs * 1e9,
            l1_bytes_per_s=None if self.l1_gbs is None else self.l1_gbs * 1e9,
            flops_per_s=flops,
            source="empirical:roofline.csv",
        )


def read_roofline(path: Path) -> list[RooflineRow]:
    """Every device row of a ``roofline.csv`` (header typos such as ``hbmBwHigh`` are harmless: columns
    are looked up case-insensitively and only the central values are read)."""
    return [
        RooflineRow(
            device=to_int(first(rec, "device")),
            hbm_gbs=to_float(first(rec, "HBMBw")),
            l2_gbs=to_float(first(rec, "L2Bw")),
            l1_gbs=to_float(first(rec, "L1Bw")),
            lds_gbs=to_float(first(rec, "LDSBw")),
            fp32_gflops=to_float(first(rec, "FP32Flops")),
            fp64_gflops=to_float(first(rec, "FP64Flops")),
            mfma_f16_gflops=to_float(first(rec, "MFMAF16Flops")),
            mfma_bf16_gflops=to_float(first(rec, "MFMABF16Flops")),
            mfma_f32_gflops=to_float(first(rec, "MFMAF32Flops")),
            mfma_f64_gflops=to_float(first(rec, "MFMAF64Flops")),
            mfma_i8_gops=to_float(first(rec, "MFMAI8Ops")),
        )
        for rec in iter_rows(path)
    ]


def read_roofline_peaks(path: Path, device: int = 0) -> DevicePeaks:
    """The empirical peaks of ``device`` (default 0; the first row when no row carries that number).

    Raises:
        BadReport: unreadable file.
        ValueError: the file has no device rows.
    """
    rows = read_roofline(path)
    if not rows:
        raise ValueError(f"{path} has no device rows")
    chosen = next((r for r in rows if r.device == device), rows[0])
    return chosen.peaks()
