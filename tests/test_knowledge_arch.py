"""Per-architecture SM limits: every entry validates and the arch spellings resolve."""

from __future__ import annotations

import pytest

from knowledge import KnowledgeError
from knowledge.arch import all_arch_limits, limits_for, normalize_arch

REQUIRED = ["sm_70", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_100", "sm_120"]


def test_required_architectures_present() -> None:
    assert set(REQUIRED) <= set(all_arch_limits())


@pytest.mark.parametrize("arch", REQUIRED)
def test_limits_are_consistent(arch: str) -> None:
    limits = limits_for(arch)
    assert limits.arch == arch
    assert limits.sources
    assert limits.max_threads_per_block == 1024
    assert limits.registers_per_sm == 65536 and limits.register_allocation_unit == 256
    assert limits.max_shared_memory_per_block_bytes <= limits.shared_memory_per_sm_bytes
    assert limits.max_warps_per_sm * limits.warp_size >= limits.max_threads_per_block
    # The driver reserves 1 KiB per block since Ampere; allocation unit 128 B there, 256 B before.
    major = int(limits.compute_capability.split(".")[0])
    assert limits.reserved_shared_memory_per_block_bytes == (1024 if major >= 8 else 0)
    assert limits.shared_memory_allocation_unit_bytes == (128 if major >= 8 else 256)


@pytest.mark.parametrize("spelling", ["sm_90", "sm_90a", "SM_90", "9.0", "compute_90", "90"])
def test_spellings_resolve_to_sm90(spelling: str) -> None:
    assert limits_for(spelling).arch == "sm_90"


def test_normalize_keeps_suffix_on_request() -> None:
    assert normalize_arch("sm_90a", keep_suffix=True) == "sm_90a"
    assert normalize_arch("sm_100f") == "sm_100"
    assert normalize_arch("12.0") == "sm_120"


def test_hopper_numbers() -> None:
    limits = limits_for("sm_90")
    assert (limits.max_warps_per_sm, limits.max_blocks_per_sm) == (64, 32)
    assert limits.shared_memory_per_sm_bytes == 228 * 1024
    assert limits.max_shared_memory_per_block_bytes == 227 * 1024
    assert limits.compute_capability == "9.0"


@pytest.mark.parametrize("bad", ["gfx942", "sm_x", ""])
def test_bad_spelling(bad: str) -> None:
    with pytest.raises(KnowledgeError):
        limits_for(bad)


def test_unknown_architecture_lists_known() -> None:
    with pytest.raises(KnowledgeError, match="sm_90"):
        limits_for("sm_61")
