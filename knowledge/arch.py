"""Per-architecture SM limits: the inputs of the theoretical-occupancy calculator.

Numbers live in ``knowledge/data/arch_limits.toml`` (CUDA Programming Guide compute-capability table and
the ``cuda_occupancy.h`` formulas of the toolkit). Architectures are keyed by their plain ``sm_XY`` name;
``limits_for`` accepts the spellings users and tools write ('sm_90a', '9.0', 'compute_90').
"""

from __future__ import annotations

import re
from functools import cache
from typing import Literal

from pydantic import Field

from knowledge import KnowledgeError, KnowledgeModel, load_toml

# sm_90, sm_90a, sm_100f, compute_90, 90 — or a compute capability '9.0'.
_ARCH_RE = re.compile(r"^(?:sm_|compute_)?(?P<num>\d{2,3})(?P<suffix>[af]?)$")
_CC_RE = re.compile(r"^(?P<major>\d{1,2})\.(?P<minor>\d)$")


class ArchLimits(KnowledgeModel):
    """Resource limits of one SM architecture, as the occupancy calculator needs them."""

    arch: str
    """Plain architecture name, 'sm_90' (no 'a'/'f' suffix)."""
    name: str = ""
    """Architecture family and example GPUs, for people."""
    warp_size: int = 32
    """Threads per warp."""
    max_warps_per_sm: int
    """Resident warps per SM (maximum threads per SM / 32)."""
    max_threads_per_block: int
    """Threads a block may have."""
    max_blocks_per_sm: int
    """Resident blocks per SM (block slots)."""
    registers_per_sm: int
    """32-bit registers in one SM's register file."""
    max_registers_per_block: int
    """32-bit registers one block may hold."""
    max_registers_per_thread: int
    """Registers ptxas may give one thread."""
    register_allocation_unit: int
    """Registers are given to a warp in multiples of this many, register."""
    register_allocation_granularity: Literal["warp"] = "warp"
    """What registers are allocated to: whole warps on every architecture since compute capability 2.0."""
    warp_allocation_granularity: int
    """Warps are placed in this many SM sub-partitions; each holds registers_per_sm / this many registers."""
    shared_memory_per_sm_bytes: int
    """Largest shared-memory carveout of an SM, byte."""
    max_shared_memory_per_block_bytes: int
    """Shared memory one block may use after opting in (cudaFuncAttributeMaxDynamicSharedMemorySize), byte."""
    default_shared_memory_per_block_bytes: int = 49152
    """Shared memory one block may use without opting in (static shared memory is capped here), byte."""
    shared_memory_allocation_unit_bytes: int
    """A block's shared memory is rounded up to a multiple of this, byte."""
    reserved_shared_memory_per_block_bytes: int
    """Shared memory the driver reserves per block (1 KiB since compute capability 8.0), byte."""
    notes: str = ""
    sources: list[str] = Field(default_factory=list)
    """Documents the numbers come from."""

    @property
    def compute_capability(self) -> str:
        """Compute capability of the architecture, '9.0' for 'sm_90'."""
        digits = self.arch.removeprefix("sm_")
        return f"{digits[:-1]}.{digits[-1]}"


def normalize_arch(arch: str, *, keep_suffix: bool = False) -> str:
    """Canonical ``sm_XY`` spelling of an architecture.

    Args:
        arch: 'sm_90', 'sm_90a', 'SM_90', 'compute_90', '90' or a compute capability '9.0'.
        keep_suffix: keep an 'a'/'f' feature suffix ('sm_90a'), as nvcc needs it to target that
            feature set; the limits are those of the plain architecture either way.

    Returns:
        'sm_90' (or 'sm_90a' with ``keep_suffix``).

    Raises:
        KnowledgeError: ``arch`` is not an architecture spelling.
    """
    text = arch.strip().lower()
    cc = _CC_RE.match(text)
    if cc:
        return f"sm_{cc['major']}{cc['minor']}"
    match = _ARCH_RE.match(text)
    if not match:
        raise KnowledgeError(f"'{arch}' is not an NVIDIA architecture (expected e.g. sm_90, sm_90a, 9.0)")
    return f"sm_{match['num']}{match['suffix'] if keep_suffix else ''}"


@cache
def all_arch_limits() -> dict[str, ArchLimits]:
    """Every architecture in the knowledge base, keyed by plain name ('sm_90')."""
    entries = (ArchLimits(**entry) for entry in load_toml("arch_limits.toml").get("arch", []))
    return {limits.arch: limits for limits in entries}


def limits_for(arch: str) -> ArchLimits:
    """The SM limits of ``arch``.

    Args:
        arch: any spelling ``normalize_arch`` accepts ('sm_90', 'sm_90a', '9.0', 'compute_90').

    Returns:
        The architecture's limits.

    Raises:
        KnowledgeError: ``arch`` is not an architecture spelling, or the knowledge base has no limits
            for it (the message lists the known ones).
    """
    key = normalize_arch(arch)
    known = all_arch_limits()
    try:
        return known[key]
    except KeyError:
        raise KnowledgeError(
            f"no SM limits for '{arch}' ({key}); known: {', '.join(sorted(known, key=_arch_number))}"
        ) from None


def _arch_number(arch: str) -> int:
    return int(arch.removeprefix("sm_"))
