"""Each classifier rule on real metric values from recorded reports (and small edits of them to
cross a threshold)."""

from __future__ import annotations

import pytest

import perfagent
from perfagent.classifier.bound_rules import at_roofline_bound
from perfagent.classifier.context import RuleContext, Skip
from perfagent.classifier.execution_rules import latency_bound, warp_divergence
from perfagent.classifier.launch_rules import (
    block_size_not_warp_multiple,
    low_occupancy,
    small_grid,
    tail_effect,
)
from perfagent.classifier.memory_rules import (
    atomic_contention,
    local_memory_spills,
    shared_bank_conflicts,
    uncoalesced_global_access,
)
from perfagent.roofline import roofline
from profilers.model import Finding, KernelProfile, Profile
from tests.conftest import ncu_fixture


def _kernel(report: str, index: int = 0) -> KernelProfile:
    prof = perfagent.load(ncu_fixture(report))
    assert isinstance(prof, Profile)
    return prof.kernels[index]


def _ctx(kernel: KernelProfile) -> RuleContext:
    return RuleContext(kernel=kernel, roofline=roofline(kernel), static=False)


def _with_metrics(kernel: KernelProfile, **changes: object) -> KernelProfile:
    return kernel.model_copy(update={"metrics": kernel.metrics.model_copy(update=changes)})


@pytest.fixture(scope="module")
def memcpy() -> KernelProfile:
    return _kernel("a100_memcpyasync_matrixtransfer_pd1_ncu2023.3.1_full.ncu-rep")


@pytest.fixture(scope="module")
def mma() -> KernelProfile:
    return _kernel("a100_mmaptx_full_tensorcore_ncu2023.3.1_full.ncu-rep")


@pytest.fixture(scope="module")
def vec_add() -> KernelProfile:
    return _kernel("gtx1660s_vec_add_ncu2024.1.1_full.ncu-rep")


def test_coalescing_skips_on_2023_reports_without_bytes_per_sector(memcpy: KernelProfile) -> None:
    result = uncoalesced_global_access(_ctx(memcpy))
    assert isinstance(result, Skip) and "bytes-per-sector" in result.reason


def test_coalescing_quiet_on_fully_coalesced_vec_add(vec_add: KernelProfile) -> None:
    assert vec_add.metrics.global_load_bytes_per_sector == pytest.approx(32.0)
    assert uncoalesced_global_access(_ctx(vec_add)) is None


def test_coalescing_fires_when_a_quarter_of_each_sector_is_used(vec_add: KernelProfile) -> None:
    # vec_add's real traffic, with its loads made 4-of-32-bytes-per-sector (a stride-8 float gather).
    k = _with_metrics(vec_add, global_load_bytes_per_sector=4.0)
    f = uncoalesced_global_access(_ctx(k))
    assert isinstance(f, Finding) and f.category == "global-coalescing"
    assert f.transforms[0] == "coalesce-access"
    assert f.estimated_speedup is not None and f.estimated_speedup > 1.5
    assert f.evidence[0].value == 4.0 and f.evidence[0].threshold == 24.0


def test_bank_conflicts_from_the_tensor_core_report(mma: KernelProfile) -> None:
    assert mma.metrics.shared_bank_conflict_pct == pytest.approx(33.3, abs=0.1)
    f = shared_bank_conflicts(_ctx(mma))
    assert isinstance(f, Finding) and f.category == "shared-bank-conflicts"
    assert f.transforms == ["smem-padding", "smem-swizzle"]
    assert "SharedMemoryConflicts" in f.tool_rules


def test_bank_conflicts_below_ncu_threshold_are_quiet(mma: KernelProfile) -> None:
    assert shared_bank_conflicts(_ctx(_with_metrics(mma, shared_bank_conflict_pct=9.9))) is None


def test_no_local_memory_no_finding(memcpy: KernelProfile) -> None:
    assert memcpy.metrics.local_load_bytes == 0.0
    assert local_memory_spills(_ctx(memcpy)) is None


def test_local_memory_traffic_reported(memcpy: KernelProfile) -> None:
    k = _with_metrics(memcpy, local_load_bytes=4e6, local_store_bytes=4e6)
    f = local_memory_spills(_ctx(k))
    assert isinstance(f, Finding) and f.category == "register-spills"


def test_atomics_rare_in_memcpy_kernel(memcpy: KernelProfile) -> None:
    # 512 atomics among 4.0 M instructions: far below the contention threshold.
    assert atomic_contention(_ctx(memcpy)) is None
    busy_atomics = _with_metrics(
        memcpy, atomic_instructions=0.1 * 4041216, memory_throughput_pct=20.0, dram_throughput_pct=20.0
    )
    f = atomic_contention(_ctx(busy_atomics))
    assert isinstance(f, Finding) and f.transforms[0] == "privatize-atomics"


def test_divergence_uses_predicated_threads(memcpy: KernelProfile) -> None:
    # 32 active, ~25 predicated-on threads per instruction: above ncu's 24 threshold.
    assert warp_divergence(_ctx(memcpy)) is None
    f = warp_divergence(_ctx(_with_metrics(memcpy, predicated_threads_per_instruction=9.5)))
    assert isinstance(f, Finding) and f.category == "warp-divergence" and "9.5 of 32" in f.title


def test_small_grid_on_memcpy(memcpy: KernelProfile) -> None:
    f = small_grid(_ctx(memcpy))
    assert isinstance(f, Finding)
    assert [e.value for e in f.evidence[:3]] == [128, 108, pytest.approx(0.132, abs=1e-3)]


def test_tail_effect_quiet_without_full_waves(memcpy: KernelProfile) -> None:
    assert tail_effect(_ctx(memcpy)) is None


def test_block_size_multiple_of_32(memcpy: KernelProfile) -> None:
    assert block_size_not_warp_multiple(_ctx(memcpy)) is None
    odd = memcpy.model_copy(update={"launch": memcpy.launch.model_copy(update={"block_size": 100})})
    f = block_size_not_warp_multiple(_ctx(odd))
    # 128/100 lanes, but capped by the speed of light (80 % of DRAM peak already).
    assert isinstance(f, Finding) and f.estimated_speedup == pytest.approx(
        min(128 / 100, 1 / 0.7995), rel=1e-3
    )


def test_low_occupancy_deferred_to_small_grid_when_all_blocks_fit(memcpy: KernelProfile) -> None:
    # Theoretical 56 % (shared memory), achieved 7.5 %, but only 0.13 waves: the grid is the cap.
    assert memcpy.occupancy.limiter == "shared-memory"
    assert low_occupancy(_ctx(memcpy)) is None


def test_low_occupancy_with_many_waves_names_limiter(memcpy: KernelProfile) -> None:
    k = memcpy.model_copy(
        update={
            "launch": memcpy.launch.model_copy(update={"waves_per_sm": 12.0}),
            "occupancy": memcpy.occupancy.model_copy(update={"theoretical_pct": 25.0}),
            "metrics": memcpy.metrics.model_copy(
                update={"memory_throughput_pct": 30.0, "sm_throughput_pct": 6.6}
            ),
        }
    )
    f = low_occupancy(_ctx(k))
    assert isinstance(f, Finding) and "limited by shared-memory" in f.title
    assert f.transforms == ["launch-config", "smem-tiling"]


def test_latency_bound_names_long_scoreboard(memcpy: KernelProfile) -> None:
    assert latency_bound(_ctx(memcpy)) is None  # 0.13 waves: small_grid explains it
    k = memcpy.model_copy(
        update={
            "launch": memcpy.launch.model_copy(update={"waves_per_sm": 4.0}),
            "metrics": memcpy.metrics.model_copy(
                update={"memory_throughput_pct": 30.0, "dram_throughput_pct": 30.0}
            ),
        }
    )
    f = latency_bound(_ctx(k))
    assert isinstance(f, Finding) and "long scoreboard" in f.title
    assert any(
        e.metric == "stall_long_scoreboard" and e.value == pytest.approx(13.73, abs=0.01) for e in f.evidence
    )


def test_at_bound_uses_sm_throughput_when_flops_are_uncounted(mma: KernelProfile) -> None:
    f = at_roofline_bound(_ctx(mma))
    assert isinstance(f, Finding) and f.category == "compute-bound" and f.severity == "info"


def test_at_bound_quiet_for_latency_kernel(memcpy: KernelProfile) -> None:
    k = _with_metrics(memcpy, dram_bytes=1e6, dram_throughput_pct=10.0, sm_throughput_pct=7.0)
    assert at_roofline_bound(_ctx(k)) is None
