"""End-to-end diagnoses of real reports: the first finding is the actionable root cause."""

from __future__ import annotations

import pytest

import perfagent
from tests.conftest import NCU_FIXTURES, ncu_fixture

MEMCPY = "a100_memcpyasync_matrixtransfer_pd1_ncu2023.3.1_full.ncu-rep"
MMA = "a100_mmaptx_full_tensorcore_ncu2023.3.1_full.ncu-rep"
SGEMM = "a10g_sgemm_4kernels_ncu2023.1.1_roofline.ncu-rep"
VEC_ADD = "gtx1660s_vec_add_ncu2024.1.1_full.ncu-rep"


def test_memcpy_small_grid_beats_ncus_unactionable_top_rule() -> None:
    record = perfagent.diagnose(ncu_fixture(MEMCPY))
    (kernel,) = record.kernels
    # ncu's own highest estimate is HighPipeUtilization "Low Utilization" (95 %): not actionable.
    ncu_top = max(kernel.profile.tool_findings, key=lambda t: t.estimated_speedup_pct or 0.0)
    assert (ncu_top.rule_id, ncu_top.title) == ("HighPipeUtilization", "Low Utilization")
    first = kernel.findings[0]
    assert first.category == "launch-config" and first.rule == "small_grid"
    assert "128 blocks" in first.title
    assert "LaunchConfiguration" in first.tool_rules
    # 80 % of DRAM peak caps what more blocks can buy.
    assert first.estimated_speedup == pytest.approx(1.0 / 0.7995, rel=1e-2)
    assert any(f.category == "dram-bandwidth" and f.severity == "info" for f in kernel.findings)


def test_tensor_core_stress_kernel_is_at_its_compute_roof() -> None:
    record = perfagent.diagnose(ncu_fixture(MMA))
    first = record.kernels[0].findings[0]
    assert first.category == "compute-bound" and first.severity == "info"
    # Tensor FLOPs priced from the SASS opcode counts: 304 TFLOP/s, 97 % of the A100-PCIe datasheet peak
    # (312 TFLOP/s at the 1.41 GHz boost clock; it was profiled at 1.39 GHz).
    assert "97% of TENSOR compute peak" in first.title and "little headroom" in first.title
    # The 33 % shared-conflict result is kept, but ranked after the roof statement: it buys nothing here.
    conflicts = [f for f in record.kernels[0].findings if f.category == "shared-bank-conflicts"]
    assert conflicts and conflicts[0].estimated_speedup is not None and conflicts[0].estimated_speedup < 1.05


def test_vec_add_near_dram_peak_is_reported_as_such() -> None:
    record = perfagent.diagnose(ncu_fixture(VEC_ADD))
    findings = record.kernels[0].findings
    assert [f.category for f in findings] == ["dram-bandwidth"]
    assert findings[0].severity == "info" and "92% of DRAM" in findings[0].title
    roof = record.kernels[0].roofline
    assert roof is not None and roof.bounding_resource == "dram"
    assert roof.fraction_of_sol == pytest.approx(0.917, abs=0.005)


def test_sgemm_kernels_ranked_by_recoverable_time_with_small_grid_and_tail() -> None:
    record = perfagent.diagnose(ncu_fixture(SGEMM))
    assert len(record.kernels) == 4
    recoverable = [k.recoverable_s or 0.0 for k in record.kernels]
    assert recoverable == sorted(recoverable, reverse=True)
    by_name = {k.profile.base_name: k for k in record.kernels}
    for name in ("two_blocktiling", "vectorized_blocktiling", "warptiling"):
        first = by_name[name].findings[0]
        assert first.rule == "small_grid" and "64 blocks for 80 SMs" in first.title
        # With every block resident at once, more occupancy cannot help: no low-occupancy finding.
        assert all(f.category != "low-occupancy" for f in by_name[name].findings)
    # 1D block tiling saturates L1/shared (77 %) with DRAM at 8 %: the next step is register tiling
    # (siboehm's kernel 4 -> 5); the 1.6-wave tail comes second.
    onchip, tail = by_name["one_blocktiling"].findings[:2]
    assert onchip.category == "onchip-bandwidth" and "register-tiling" in onchip.transforms
    assert "77 %" in onchip.title
    assert tail.rule == "tail_effect" and tail.estimated_speedup == pytest.approx(2 / 1.6, rel=1e-3)
    # The roofline-set report lacks stall and shared-memory metrics: those rules say so.
    reasons = {s.rule: s.reason for s in by_name["one_blocktiling"].skipped}
    assert "shared_bank_conflict_pct" in reasons["shared_bank_conflicts"]


@pytest.mark.parametrize("report", sorted(p.name for p in NCU_FIXTURES.glob("*.ncu-rep")) or ["<none>"])
def test_every_public_report_diagnoses_with_a_finding_per_kernel(report: str) -> None:
    record = perfagent.diagnose(ncu_fixture(report))
    assert record.kernels
    for kernel in record.kernels:
        assert kernel.findings, kernel.name
        for f in kernel.findings:
            if f.estimated_speedup is not None:
                assert f.speedup_formula, f.title
                assert f.estimated_speedup >= 1.0
        shares = [k.share_of_total for k in record.kernels]
        assert sum(s or 0 for s in shares) == pytest.approx(1.0)
