"""Which kernels staged profiling profiles in depth: the stage-1 time table in, a selection out (pure).

Stage 1 gives every kernel configuration (name, grid, block) its launches and summed time. The kernels
that make up ``DEPTH_SHARE`` of the GPU time, largest first (at least the top one; every kernel with
``all_kernels``), get counters; the rest are listed with their time and share. Stage 2 profiles one
representative launch of each chosen configuration (ncu ``--filter-mode per-launch-config
--launch-count 1``), skipping each configuration's first launch when every chosen one ran more than once
(first launches pay one-off costs: lazy module loading, caches, library heuristics).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from profilers.model import KernelProfile, Profile

DEPTH_SHARE = 0.90
"""Share of GPU time the kernels profiled in depth must cover (issue 27: 90 %)."""

KernelKey = tuple[str, tuple[int, int, int] | None, tuple[int, int, int] | None]


def kernel_key(kernel: KernelProfile) -> KernelKey:
    """The identity a stage-1 entry and a stage-2 kernel share: function name, grid, block."""
    return kernel.base_name, kernel.launch.grid, kernel.launch.block


def exact_key(kernel: KernelProfile) -> KernelKey:
    """One kernel of one report: demangled name (template arguments included), grid, block."""
    return kernel.name, kernel.launch.grid, kernel.launch.block


def total_time(kernel: KernelProfile) -> float:
    """Summed time of a stage-1 entry over its launches, s (0 when unmeasured)."""
    if kernel.total_duration_s is not None:
        return kernel.total_duration_s
    return (kernel.metrics.duration_s or 0.0) * kernel.invocations


@dataclass(frozen=True)
class TimedKernel:
    """One stage-1 entry with its share of the measured GPU time."""

    kernel: KernelProfile
    time_s: float
    share: float


@dataclass(frozen=True)
class Selection:
    """Stage 1's verdict: what gets counters and what is only listed."""

    in_depth: list[TimedKernel]
    shallow: list[TimedKernel]
    total_s: float
    launch_skip: int
    """Launches of each chosen configuration stage 2 skips before its representative one."""

    @property
    def share_in_depth(self) -> float:
        return sum(t.share for t in self.in_depth)

    def kernel_regex(self) -> str:
        """ncu ``--kernel-name regex:`` (function names, ``--kernel-name-base function``) of the chosen."""
        return names_regex(t.kernel.base_name for t in self.in_depth)


def names_regex(names: Iterable[str]) -> str:
    """A regex matching exactly these function names, e.g. ``(^|[: ])(gemm|softmax)(<|\\(|$)``.

    ncu searches (partial match) the name ``--kernel-name-base function`` gives; the guards on both sides
    keep ``gemm`` from matching ``sgemm_naive`` while tolerating a return type or namespace before the name, template
    arguments or parameters after it, should a release include them; the report reader applies the same
    search to the function and the demangled name.
    """
    unique = sorted(set(names))
    return "(^|[: ])(" + "|".join(re.escape(n) for n in unique) + ")(<|\\(|$)"


def select_kernels(times: Profile, *, share: float = DEPTH_SHARE, all_kernels: bool = False) -> Selection:
    """Choose the kernels to profile in depth from stage 1's time table.

    Args:
        times: stage 1's profile (durations and launch counts only).
        share: the share of GPU time the chosen kernels must cover.
        all_kernels: choose every kernel.

    Returns:
        The selection; kernels largest first in both lists.
    """
    ranked = sorted(times.kernels, key=total_time, reverse=True)
    total = sum(total_time(k) for k in ranked)
    timed = [TimedKernel(k, total_time(k), total_time(k) / total if total > 0 else 0.0) for k in ranked]
    chosen: list[TimedKernel] = []
    covered = 0.0
    for entry in timed:
        if not all_kernels and chosen and covered >= share:
            break
        chosen.append(entry)
        covered += entry.share
    rest = timed[len(chosen) :]
    skip = 1 if chosen and all(t.kernel.invocations >= 2 for t in chosen) else 0
    return Selection(in_depth=chosen, shallow=rest, total_s=total, launch_skip=skip)


def shallow_reason(entry: TimedKernel) -> str:
    """What the record says of a kernel below the line."""
    return f"not profiled in depth ({_pct(entry.share)} of GPU time)"


def _pct(share: float) -> str:
    value = 100.0 * share
    return f"{value:.1f} %" if value < 10 else f"{value:.0f} %"
