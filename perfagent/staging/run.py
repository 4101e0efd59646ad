"""Staged ncu profiling: where the time goes first, then the counters of the kernels that matter.

1. **Stage 1** (``NcuProfiler.time_launches``): every launch's duration, one replay pass, grouped by
   kernel name and launch configuration.
2. **Stage 2, tier A** (``profilers.ncu.tiers``): the kernels making 90 % of GPU time (``select``), one
   representative launch of each configuration.
3. **Stage 2, tier B**: only the tier-A kernels whose evidence calls for it
   (``perfagent.classifier.needs.tier_b_reason``), in a second run restricted to them (ncu cannot choose
   metrics per kernel inside one run), or, when ``plan.plan_stage2`` finds tier B's passes on every chosen
   launch cheaper than one more application start (a PyTorch script with a few kernel configurations),
   in tier A's own run.

The result is one Profile (``assemble``) whose kernels say which tiers they got and why
(``KernelProfile.tiers``, ``tier_reason``) and which lists the kernels below the line with their time.
A one-run targeted profile is used instead when the user chose launches themselves (launch skip/count),
the full set, or when stage 1's table cannot be read.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from perfagent.classifier.needs import tier_b_reason
from perfagent.staging.assemble import assemble, with_tier_b
from perfagent.staging.plan import StagePlan, plan_stage2
from perfagent.staging.select import DEPTH_SHARE, KernelKey, exact_key, names_regex, select_kernels
from profilers.base import ProfileRequest
from profilers.errors import BadReport, NoKernelsProfiled
from profilers.model import KernelProfile, Profile
from profilers.ncu.profiler import NcuProfiler

Progress = Callable[[str], None]


def can_stage(request: ProfileRequest) -> bool:
    """Whether ``request`` may be profiled in stages (the user did not pick launches or the full set)."""
    return (
        not request.full_set
        and request.launch_skip == 0
        and request.launch_count is None
        and not request.per_launch_config
        and tuple(request.metric_tiers) == ("A", "B")
    )


def stage2_request(request: ProfileRequest, regex: str, skip: int, tiers: tuple[str, ...]) -> ProfileRequest:
    """Stage 2's request: the chosen kernels' names, one launch per configuration, ``tiers``."""
    return request.model_copy(
        update={
            "kernel_regex": regex,
            "per_launch_config": True,
            "launch_skip": skip,
            "launch_count": 1,
            "metric_tiers": tiers,
            # per-line counters come with tier A's run; the tier-B run would only repeat their passes
            "source_counters": request.source_counters and "A" in tiers,
        }
    )


def staged_profile(
    ncu: NcuProfiler,
    request: ProfileRequest,
    *,
    all_kernels: bool = False,
    progress: Progress,
    clock: Callable[[], float] = time.monotonic,
) -> Profile:
    """Profile ``request`` in stages (module docstring); raises as ``NcuProfiler.profile``.

    ``clock`` times stage 1, whose wall time is ``plan.plan_stage2``'s measure of an application start.
    """
    progress("stage 1: timing every kernel launch (ncu, 1 replay pass) …")
    started = clock()
    try:
        times = ncu.time_launches(request)
    except BadReport as exc:
        progress(f"stage 1's table could not be read ({exc.message}); one targeted run instead")
        return ncu.profile(request)
    stage1_s = clock() - started
    selection = select_kernels(times, share=DEPTH_SHARE, all_kernels=all_kernels)
    plan = plan_stage2(selection, stage1_s)
    progress(
        f"stage 2: tier {'+'.join(plan.tier_a_run())} counters on {plan.chosen} of {len(times.kernels)} kernel "
        f"configuration(s), {100 * selection.share_in_depth:.1f} % of GPU time …"
    )
    try:
        tier_a = ncu.profile(
            stage2_request(request, selection.kernel_regex(), selection.launch_skip, plan.tier_a_run())
        )
    except NoKernelsProfiled as exc:  # stage 1 saw these launches: a filter quirk, not an empty program
        progress(f"stage 2 matched no launch ({exc.message}); one targeted run instead")
        return ncu.profile(request)
    reasons = {exact_key(k): r for k in tier_a.kernels if (r := tier_b_reason(k)) is not None}
    if plan.fold_tier_b:
        kernels, tier_b = _folded(tier_a.kernels, reasons), None
    else:
        tier_b = _tier_b_run(ncu, request, selection.launch_skip, tier_a, reasons, progress)
        kernels = with_tier_b(tier_a, tier_b, reasons)
    notes = [
        f"staged profiling: stage 1 timed {sum(k.invocations for k in times.kernels)} launch(es) of "
        f"{len(times.kernels)} kernel configuration(s) (duration only); tier A on the {plan.chosen} making "
        f"{100 * selection.share_in_depth:.1f} % of GPU time "
        f"({'every kernel asked for' if all_kernels else f'threshold {100 * DEPTH_SHARE:.0f} %'}); "
        f"tier B on {_tier_b_count(plan, len(reasons))}",
        _plan_note(plan, stage1_s, len(reasons)),
        *times.notes,
        *tier_a.notes,
        *(tier_b.notes if tier_b else []),
    ]
    if selection.shallow:
        notes.append(
            f"{len(selection.shallow)} kernel configuration(s) below the line are listed with their time only "
            "(--all-kernels profiles every kernel in depth)"
        )
    staged = assemble(times, selection, kernels, notes=list(dict.fromkeys(notes)))
    return staged.model_copy(update={"tool_version": tier_a.tool_version, "command": tier_a.command})


FOLDED_NOT_NEEDED = "not called for by its tier-A evidence; collected anyway in tier A's run (cheaper than a second program run)"


def _folded(kernels: list[KernelProfile], reasons: dict[KernelKey, str]) -> list[KernelProfile]:
    """Tier A's kernels of a run that collected tier B too: every one has both, with the tier-B reason."""
    out = []
    for kernel in kernels:
        reason = reasons.get(exact_key(kernel))
        why = f"{reason} (collected in tier A's run)" if reason else FOLDED_NOT_NEEDED
        out.append(kernel.model_copy(update={"tiers": ["duration", "A", "B"], "tier_reason": why}))
    return out


def _tier_b_run(
    ncu: NcuProfiler,
    request: ProfileRequest,
    skip: int,
    tier_a: Profile,
    reasons: dict[KernelKey, str],
    progress: Progress,
) -> Profile | None:
    """Tier B's own run on the kernels whose tier-A evidence calls for it (None: none does, or it matched
    no launch, and each such kernel then says its stalls were not collected)."""
    if not reasons:
        return None
    wanted = {k.base_name for k in tier_a.kernels if exact_key(k) in reasons}
    progress(f"stage 2: tier B counters (stall reasons, scheduler state) on {len(reasons)} kernel(s) …")
    try:
        return ncu.profile(stage2_request(request, names_regex(wanted), skip, ("B",)))
    except NoKernelsProfiled as exc:
        progress(f"tier B matched no launch ({exc.message}); stall reasons not collected")
        return None


def _tier_b_count(plan: StagePlan, needing_b: int) -> str:
    if plan.fold_tier_b:
        return f"{plan.chosen} (in tier A's run; {needing_b} called for by their tier-A evidence)"
    return str(needing_b)


def _plan_note(plan: StagePlan, stage1_s: float, needing_b: int) -> str:
    runs, passes = plan.passes(needing_b)
    return (
        f"stage plan: {plan.why()}; stage 1 took {stage1_s:.2f} s; "
        f"{runs} ncu run(s), about {passes} launch-passes in all"
    )
