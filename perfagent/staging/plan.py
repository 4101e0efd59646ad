"""How many ncu runs stage 2 takes, decided from stage 1's table and wall time (pure): the pass accounting.

Each ncu run starts the application again: process start, CUDA context, ncu's injection, library loading
(a PyTorch script's imports: 6-8 s of an 8 s stage 1 on the transformer block), and perfagent reads one
more report. Each profiled launch then costs its replay passes. Stage 2 can collect tier B (stall reasons,
8 passes) in two ways:

- **separate**: tier A on the chosen launches, then a second run with tier B only on those whose tier-A
  evidence calls for it: one more application start, B passes only where needed;
- **folded**: tiers A and B in one run on every chosen launch: B passes also where not needed, no start.

Folding pays when the B passes it may waste are cheaper than one application start. Stage 1 measures
both sides: its wall time is one application start plus a small cost per timed launch, and its table gives
each chosen configuration's launch time. The estimate assumes no chosen kernel needs tier B (the worst
case for folding), so a fold is chosen only when it cannot cost more than a start.

Measured (tests/gpu/h200x4_2026-11-26d/profcost/): transformer block, stage 1 8.09 s for 22 launches,
6 configurations chosen, 5 needing tier B: separate = 3 runs (22x1 + 6x15 + 6x8 launch-passes) in 32.26 s;
folded = 2 runs, the same 160 launch-passes, one application start (~7 s) fewer. Unseen long tail:
stage 1 4.72 s for 107 launches: start ~1.5 s against 8 x 8 passes at ~15 ms; a program with hundreds of
configurations (``--all-kernels``) keeps the separate run.
"""

from __future__ import annotations

from dataclasses import dataclass

from perfagent.staging.select import Selection

TIER_PASSES = {"duration": 1, "A": 15, "B": 8}
"""Replay passes per launch of each tier (ncu 2025.3.1 logs, H100/H200: tier A 13 without the tensor
counters, 15 with them; tier B 8; stage 1's duration metric 1)."""

PASS_S = 0.015
"""Replay cost of one more pass of one launch beyond the kernel's own time, s (issue 10's pass study on
an H100: 10 more passes over the suite's 20 launches cost 3.06 s; BENCHMARKS.md)."""

STAGE1_LAUNCH_S = 0.03
"""Stage 1's cost per timed launch beyond the kernel's own time, s (unseen long tail: 4.72 s for 107
launches with the program alone at 0.49 s, ncu's start included, so an upper bound: the start estimate
stays low and a fold is not chosen on an overestimated start)."""


@dataclass(frozen=True)
class StagePlan:
    """Stage 2's runs: whether tier B is folded into tier A's run, and the estimates behind it."""

    fold_tier_b: bool
    start_s: float
    """Estimated cost of one more application start under ncu, s."""
    fold_extra_s: float
    """Estimated cost of tier B's passes on every chosen launch, s (what a fold may waste)."""
    stage1_launches: int
    chosen: int

    def tier_a_run(self) -> tuple[str, ...]:
        """The tiers of stage 2's first run."""
        return ("A", "B") if self.fold_tier_b else ("A",)

    def why(self) -> str:
        """One line for the record's notes: the decision and its numbers."""
        passes = f"{TIER_PASSES['B']} tier-B passes on {self.chosen} launch(es) ~{self.fold_extra_s:.1f} s"
        start = f"one more application start ~{self.start_s:.1f} s"
        if self.fold_tier_b:
            return f"tier B collected in tier A's run ({passes} <= {start})"
        return f"tier B in a second run where tier A calls for it ({passes} > {start})"

    def passes(self, needing_b: int | None = None) -> tuple[int, int]:
        """(application runs, launch-passes) of the whole staged profile; ``needing_b`` = chosen launches
        needing tier B (None: every chosen one, the most a separate run profiles)."""
        b = self.chosen if needing_b is None else needing_b
        stage1 = self.stage1_launches * TIER_PASSES["duration"]
        if self.fold_tier_b:
            return 2, stage1 + self.chosen * (TIER_PASSES["A"] + TIER_PASSES["B"])
        runs = 3 if b else 2
        return runs, stage1 + self.chosen * TIER_PASSES["A"] + b * TIER_PASSES["B"]


def launch_time(entry_time_s: float, invocations: int) -> float:
    """One launch's time of a stage-1 entry, s."""
    return entry_time_s / max(invocations, 1)


def plan_stage2(selection: Selection, stage1_wall_s: float) -> StagePlan:
    """Fold tier B into tier A's run when its passes on every chosen launch cost no more than one more
    application start (module docstring).

    Args:
        selection: stage 1's verdict (``select_kernels``).
        stage1_wall_s: stage 1's wall time, s (its ncu run, the application's start included).
    """
    entries = [*selection.in_depth, *selection.shallow]
    launches = sum(t.kernel.invocations for t in entries)
    start = stage1_wall_s - launches * STAGE1_LAUNCH_S - selection.total_s
    fold_extra = sum(
        TIER_PASSES["B"] * (PASS_S + launch_time(t.time_s, t.kernel.invocations)) for t in selection.in_depth
    )
    start = max(start, 0.0)
    return StagePlan(
        fold_tier_b=bool(selection.in_depth) and fold_extra <= start,
        start_s=start,
        fold_extra_s=fold_extra,
        stage1_launches=launches,
        chosen=len(selection.in_depth),
    )
