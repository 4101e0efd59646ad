"""AMD evidence in the shared taxonomy, on the real rocprof fixtures (and edits of them)."""

from __future__ import annotations

from pathlib import Path

import pytest

import perfagent
from perfagent.classifier.context import RuleContext
from perfagent.classifier.memory_rules import xcd_unaware_block_order
from perfagent.roofline import roofline
from profilers.model import Finding, Profile
from tests.conftest import ROCPROF_FIXTURES


def _fixture(name: str) -> Path:
    path = ROCPROF_FIXTURES / name
    if not path.exists():
        pytest.skip(f"rocprof fixture {name} not found: ../shared/fixtures is absent in this checkout")
    return path


def test_lds_bank_conflicts_are_shared_bank_conflicts() -> None:
    record = perfagent.diagnose(_fixture("rocprofv3_gfx950_lds_conflict_counter_collection.csv"))
    first = record.kernels[0]
    assert first.profile.base_name == "micro_tk"
    assert first.findings[0].category == "shared-bank-conflicts" and first.findings[0].severity == "high"
    # No L1/LDS throughput in the file: the time share of the conflicts is unknown, so no estimate.
    assert first.findings[0].estimated_speedup is None


def test_streaming_copy_on_mi300x_gets_no_swizzle_busywork() -> None:
    prof = perfagent.load(_fixture("rocprof_compute_mi300x_vcopy_pmc_perf.csv"))
    assert isinstance(prof, Profile)
    kernel = prof.kernels[0]
    assert kernel.device.xcd_count == 8
    ctx = RuleContext(kernel=kernel, roofline=roofline(kernel), static=False)
    assert xcd_unaware_block_order(ctx) is None  # L2 bytes ≈ HBM bytes: nothing is reused


def test_reused_data_with_low_l2_hit_rate_on_mi300x_advises_xcd_swizzle() -> None:
    prof = perfagent.load(_fixture("rocprof_compute_mi300x_vcopy_pmc_perf.csv"))
    assert isinstance(prof, Profile)
    kernel = prof.kernels[0]
    reused = kernel.model_copy(
        update={
            "metrics": kernel.metrics.model_copy(update={"l2_bytes": 4 * (kernel.metrics.dram_bytes or 0)})
        }
    )
    f = xcd_unaware_block_order(RuleContext(kernel=reused, roofline=roofline(reused), static=False))
    assert isinstance(f, Finding) and f.transforms == ["grid-swizzle"] and "8 XCDs" in f.title
