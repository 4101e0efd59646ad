"""Counter tiers of staged ncu profiling: which raw metrics each tier collects and what they provide.

Staged profiling (``perfagent.staging``) first times every launch (``STAGE1_METRICS``, one replay pass),
then profiles the kernels that matter with tier A and, only where tier A's evidence calls for it, tier B:

- **A**, always in depth: the SpeedOfLight, LaunchStats and Occupancy sections plus every targeted metric
  not in tier B: roofline FLOP and byte counts (tensor paths included), coalescing (bytes per sector),
  shared-memory conflicts, local (spill) traffic, atomics, predication, cache hit rates and pipe
  utilisation. About the ``basic`` set's 10 passes plus the SASS-count and L1TEX passes (issue 10's pass
  study, tests/gpu/profiling_groups_h100.md: SASS op counts +1 alone, L1TEX +2, pipes and L2 +0).
- **B**, on demand: warp-stall reasons and scheduler/issue state (the stall group alone costs 5 passes,
  the scheduler state 1 more; same study): what the latency rules read when SM and memory throughput do
  not name the limiter.

Two placements differ from the issue's sketch, on measurement and on what the numbers feed: pipe
utilisation stays in A because it added no replay pass to the sections; the tensor op paths and pipe
(2 passes) stay in A because the roofline's tensor FLOPs are speed-of-light evidence for every kernel
that uses tensor cores, whatever its tier-B verdict. They are still left out whenever the program's
SASS shows no tensor-core instruction (``profilers.static.sass_scan``), as before staging.
"""

from __future__ import annotations

import re
from functools import cache

from profilers.model import MetricTier
from profilers.ncu.mapping import ncu_metric_map

STAGE1_METRICS: tuple[str, ...] = (
    "gpu__time_duration.sum",
    "launch__block_size",
    "launch__grid_size",
    "launch__registers_per_thread",
    "launch__shared_mem_per_block_dynamic",
    "launch__shared_mem_per_block_static",
)
"""What stage 1 asks of every launch: its duration (the one replay pass) and its launch configuration
(launch attributes, read without replay), so that a kernel below the line is still listed with its
time, grid, block, registers and shared memory."""

_TIER_B = re.compile(
    r"issue_stalled"  # the 18 stall reasons (5 passes)
    r"|^smsp__issue_active|^smsp__warps_eligible|^smsp__average_warp_latency"  # scheduler state
    r"|^smsp__warps_active\.avg\.per_cycle_active"
)
LAUNCH_IDENTITY_METRICS: tuple[str, ...] = (
    "launch__grid_dim_x",
    "launch__grid_dim_y",
    "launch__grid_dim_z",
    "launch__block_dim_x",
    "launch__block_dim_y",
    "launch__block_dim_z",
)
"""Launch attributes (no replay pass) a tier-B-only run adds so its launches match tier A's kernels."""


def is_tier_b(metric: str) -> bool:
    """True when ``metric`` belongs to tier B (stall reasons, scheduler state)."""
    return _TIER_B.search(metric) is not None


@cache
def tier_metrics(tier: MetricTier) -> tuple[str, ...]:
    """The ``--metrics`` list of one tier (sorted); 'duration' is stage 1's list."""
    if tier == "duration":
        return STAGE1_METRICS
    wanted = tier == "B"
    return tuple(m for m in ncu_metric_map().collected_metric_names() if is_tier_b(m) == wanted)


def metrics_for(tiers: tuple[MetricTier, ...]) -> tuple[str, ...]:
    """The ``--metrics`` list of a run collecting ``tiers`` (a B-only run adds the launch dimensions)."""
    names: set[str] = set()
    for tier in tiers:
        names |= set(tier_metrics(tier))
    if "B" in tiers and "A" not in tiers:
        names |= set(LAUNCH_IDENTITY_METRICS)
    return tuple(sorted(names))


@cache
def fields_provided(tiers: tuple[MetricTier, ...]) -> frozenset[str]:
    """Canonical keys (``metrics.warp_stalls.barrier``, ...) a report of ``tiers`` can fill.

    Found by evaluating the metric map over the tiers' metric names, each set to 1.0: a key whose
    expression then evaluates is computable from what the tiers collect (an availability probe of the
    map's expressions, not a profile).
    """
    probe = dict.fromkeys(metrics_for(tiers), 1.0)
    evaluator = ncu_metric_map().evaluator(probe)
    return frozenset(evaluator.all_fields())
