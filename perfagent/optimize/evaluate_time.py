"""The evaluate step's GPU half: time a verified candidate against the baseline, re-profile a winner.

Timing is CUDA events (``Services.time``), or, for a Triton script, ncu kernel durations against the
baseline's repeated runs. A candidate that could win is re-profiled (one ncu run of its changed kernel)
and its targeted metric compared with the profile it was proposed from, unless nothing would read that
profile (a faster candidate of its batch replaces it, or no iteration is left, or none fits
``--time-budget``).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from knowledge.transforms import catalog
from perfagent.optimize import measure, reprofile
from perfagent.optimize.context import RunContext
from perfagent.optimize.events import Info, Profiled, Timed
from perfagent.optimize.loop_state import profile_pcts
from perfagent.optimize.outcome import MetricCheck, check_metric, would_accept
from perfagent.optimize.reprofile_tiers import tiers_for_candidate
from perfagent.optimize.staged import Measured, Staged

__all__ = ["Timer"]

Timed_ = tuple[measure.Timing, float]
"""A timing taken with its batch, and its share of that worker's wall time, s."""


class Timer:
    """Times and re-profiles the candidates of one loop (``ctx``)."""

    def __init__(self, ctx: RunContext, *, plans_past_budget: bool = False) -> None:
        self.ctx = ctx
        self.plans_past_budget = plans_past_budget
        """Whether the best's profile is planned from after the iteration budget is spent (a two-machine
        evaluate: the next ``--propose-only --from`` round plans from it)."""

    def time_and_reprofile(
        self, staged: Staged, measured: Measured, ahead: Timed_ | None, replaced_by: str | None
    ) -> None:
        """Time a verified candidate (or take its batch's timing, ``ahead``); re-profile it when it could win."""
        ctx, cid, transform = self.ctx, staged.cid, staged.fields["transform"]
        clock = time.monotonic()
        if ahead is not None:  # timed with its batch
            timing, staged.stages["time"] = ahead
            if timing.bench is not None:
                measure.write_json(staged.folder / "bench.json", timing.bench)
        else:
            with ctx.tally.clock.stage("time"):
                timing, measured.reprofiled = self.time_candidate(
                    cid, staged.source_path, staged.spec, staged.folder
                )
            staged.stages["time"] = round(time.monotonic() - clock, 3)
        measured.timing = timing
        said = f"{timing.speedup:.3g}x vs the original" if timing.speedup else f"not timed: {timing.error}"
        ctx.tell(Timed, f"{cid}: {said}", speedup=timing.speedup, candidate=cid, transform=transform)
        if not would_accept(timing, ctx.state.best_speedup):
            return
        note = self._why_not_reprofile(measured, replaced_by)
        if note is not None:
            effect = catalog()[transform].effect_for(
                staged.step.finding.category if staged.step.finding else None
            )
            measured.metric = MetricCheck(effect.metric, effect.direction, note=note)
            ctx.tally.clock.count("reprofiles-skipped")
            return
        measured.metric = self._check_metric(staged, measured)

    def _why_not_reprofile(self, measured: Measured, replaced_by: str | None) -> str | None:
        """Why a winner is not re-profiled (None: it is): nothing would read its profile. The accept rule
        does not (the targeted metric only says how a win was won); the next plan does, unless a faster
        candidate of the batch replaces it or no iteration is left (or fits ``--time-budget``)."""
        ctx = self.ctx
        if replaced_by is not None:
            return f"not re-profiled: {replaced_by} of the same batch is faster and replaces it"
        if measured.reprofiled is not None or not ctx.baseline.can_profile:
            return None  # profiled already (a Triton script's timing), or the note says why not
        if ctx.tally.step >= ctx.limits.iterations and not (
            ctx.limits.profile_best or self.plans_past_budget
        ):
            return "not re-profiled: the last iteration's winner, no later plan reads its profile (--profile-best re-profiles it)"
        if ctx.limits.profile_best or self.plans_past_budget:
            return None
        return ctx.tally.budget.why_not_reprofile(ctx.tally.iteration_walls())

    def _check_metric(self, staged: Staged, measured: Measured) -> MetricCheck:
        """The targeted metric of the candidate against the profile it was proposed from."""
        ctx, step = self.ctx, staged.step
        category = step.finding.category if step.finding else None
        entry = catalog()[staged.fields["transform"]]
        if not ctx.baseline.can_profile:
            effect = entry.effect_for(category)
            return MetricCheck(effect.metric, effect.direction, note=ctx.baseline.profile_note)
        if measured.reprofiled is None:
            clock = time.monotonic()
            ctx.tally.clock.count("reprofiles")
            with ctx.tally.clock.stage("profile"):
                measured.reprofiled = self._reprofile(staged, category, entry)
            staged.stages["profile"] = round(time.monotonic() - clock, 3)
        rp = measured.reprofiled
        metric = check_metric(entry, ctx.state.before, rp.kernel, unavailable=rp.note, category=category)
        ctx.tell(
            Profiled,
            f"{staged.cid}: {metric.metric} {_num(metric.before)} -> {_num(metric.after)}",
            metric=metric.metric,
            before=metric.before,
            after=metric.after,
            candidate=staged.cid,
            transform=staged.fields["transform"],
        )
        return metric

    def _reprofile(self, staged: Staged, category: str | None, entry: Any) -> reprofile.Reprofile:
        """One ncu re-profile of the candidate's changed kernel (the tiers the check and the plan need)."""
        ctx = self.ctx
        return ctx.services.reprofile(
            ctx.wl,
            staged.source_path,
            staged.spec,
            workdir=staged.folder / "profile",
            target_kernel=ctx.baseline.kernel_name,
            arch=ctx.measuring.arch,
            timeout_s=ctx.measuring.profile_timeout_s,
            tiers=tiers_for_candidate(ctx.state.before, entry.effect_for(category).metric),
            candidate=True,
        )

    def time_candidate(
        self, cid: str, source: Path, spec: Path | None, folder: Path
    ) -> tuple[measure.Timing, reprofile.Reprofile | None]:
        """The candidate against the baseline: CUDA events, or ncu kernel durations for a Triton script."""
        ctx, s = self.ctx, self.ctx.measuring
        if ctx.wl.timed_by == "ncu":
            return self._time_script(source, folder)
        ctx.tell(
            Info, f"{cid}: timing against the baseline (up to {s.runs} interleaved rounds) …", candidate=cid
        )
        timing = ctx.services.time(
            ctx.wl,
            source,
            spec,
            runs=s.runs,
            warmup=s.warmup,
            timeout_s=s.timeout_s,
            compile_timeout_s=s.compile_timeout_s,
        )
        if timing.bench is not None:
            measure.write_json(folder / "bench.json", timing.bench)
        return self.relative_to_start(timing), None

    def relative_to_start(self, timing: measure.Timing) -> measure.Timing:
        """KernelBench with a starting ``ModelNew``: timed against ``Model``, judged against the start."""
        start = self.ctx.baseline.start_speedup
        return measure.relative_to_start(timing, start, self.ctx.baseline.time_s) if start else timing

    def _time_script(self, source: Path, folder: Path) -> tuple[measure.Timing, reprofile.Reprofile | None]:
        """A Triton script is timed by ncu kernel durations against the baseline's repeated runs."""
        ctx, base = self.ctx, self.ctx.baseline
        if not base.can_profile or not base.script_durations:
            why = base.profile_note or "no baseline durations"
            return measure.Timing(error=f"a Triton script is timed through ncu kernel durations: {why}"), None
        rp = ctx.services.reprofile(
            ctx.wl,
            source,
            None,
            workdir=folder / "profile",
            target_kernel=base.kernel_name,
            arch=ctx.measuring.arch,
            timeout_s=ctx.measuring.profile_timeout_s,
            candidate=True,
        )
        duration = rp.kernel.metrics.duration_s if rp.kernel else None
        if duration is None:
            return measure.Timing(error=rp.note or "ncu measured no duration", timer="ncu"), rp
        timing = measure.profile_timing(base.script_durations, duration)
        if rp.kernel is not None:
            timing.pct_of_roofline, timing.pct_of_dram_peak = profile_pcts(rp.kernel)
        return timing, rp


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4g}"
