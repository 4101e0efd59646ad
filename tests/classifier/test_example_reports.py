"""Diagnoses of the bundled example reports (recorded on an H200, see examples/reports/MANIFEST.md):
each slow kernel's first finding names the bottleneck the example was written to have, and its
textbook fix no longer has it."""

from __future__ import annotations

from pathlib import Path

import pytest

import perfagent
from profilers.model import KernelDiagnosis

REPORTS = Path(__file__).resolve().parents[2] / "examples" / "reports"

# report, slow kernel, expected category of its first finding, rule, fixed kernel (or None)
CASES = [
    (
        "01_transpose_naive",
        "transpose_naive",
        "global-coalescing",
        "uncoalesced_global_access",
        "transpose_tiled_padded",
    ),
    (
        "02_transpose_bank_conflicts",
        "transpose_smem_conflicts",
        "shared-bank-conflicts",
        "shared_bank_conflicts",
        "transpose_smem_padded",
    ),
    # On Hopper the interleaved reduction shows up as XU/ALU issue pressure from `tid % (2*s)`.
    (
        "03_reduction_divergent",
        "reduce_interleaved_divergent",
        "compute-bound",
        "instruction_overhead",
        "reduce_sequential_shfl",
    ),
    (
        "04_small_grid",
        "saxpy_gridstride_small_grid",
        "launch-config",
        "small_grid",
        "saxpy_gridstride_full_grid",
    ),
    (
        "05_low_occupancy_smem",
        "scale_bias_smem_oversized",
        "low-occupancy",
        "low_occupancy",
        "scale_bias_smem_rightsized",
    ),
    (
        "06_register_spills",
        "smooth_ring_spill",
        "register-spills",
        "local_memory_spills",
        "smooth_ring_nospill",
    ),
    ("07_compute_bound_fma", "fma_chains_compute_bound", "compute-bound", "at_roofline_bound", None),
    ("08_vector_copy_near_peak", "scale_copy_float4", "dram-bandwidth", "at_roofline_bound", None),
    (
        "09_histogram_atomics",
        "histogram_global_atomics",
        "atomic-contention",
        "atomic_contention",
        "histogram_smem_privatized",
    ),
    ("10_sgemm_naive", "sgemm_naive", "global-coalescing", "uncoalesced_global_access", "sgemm_smem_tiled"),
    (
        "11_strided_access",
        "particles_advance_aos",
        "global-coalescing",
        "uncoalesced_global_access",
        "particles_advance_soa",
    ),
    ("triton_matmul", "matmul_kernel", "onchip-bandwidth", "onchip_bandwidth_saturated", None),
]


def _kernel(record: perfagent.RunRecord, base: str) -> KernelDiagnosis:
    return next(k for k in record.kernels if k.profile.base_name == base)


@pytest.mark.parametrize(("report", "slow", "category", "rule", "fixed"), CASES, ids=[c[0] for c in CASES])
def test_example_first_finding(report: str, slow: str, category: str, rule: str, fixed: str | None) -> None:
    record = perfagent.diagnose(REPORTS / f"{report}.ncu-rep")
    assert record.tool == "ncu" and record.tool_version and record.tool_version.startswith("2025.3.1")
    kernel = _kernel(record, slow)
    first = kernel.findings[0]
    assert (first.category, first.rule) == (category, rule), [f.title for f in kernel.findings]
    assert kernel.profile.device.name == "NVIDIA H200"
    if first.severity == "info":
        assert "little headroom" in first.title
    else:
        assert first.estimated_speedup is not None and first.estimated_speedup > 1.5
    if fixed is not None:
        fix = _kernel(record, fixed)
        assert fix.duration_s is not None and kernel.duration_s is not None
        assert fix.duration_s < kernel.duration_s
        assert fix.findings[0].category != category or fix.findings[0].severity in ("info", "low")
    if len(record.kernels) > 1:
        assert record.kernels[0].profile.base_name == slow  # the slow kernel ranks first


def test_examples_cover_at_least_six_categories() -> None:
    assert len({c[2] for c in CASES}) >= 6


def test_suite_report_ranks_twenty_kernels_by_recoverable_time() -> None:
    record = perfagent.diagnose(REPORTS / "suite.ncu-rep")
    assert len(record.kernels) == 20
    rec = [k.recoverable_s or 0.0 for k in record.kernels]
    assert rec == sorted(rec, reverse=True)
    assert record.kernels[0].profile.base_name == "sgemm_naive"
