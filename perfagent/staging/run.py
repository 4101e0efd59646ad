"""Staged ncu profiling: where the time goes first, then the counters of the kernels that matter.

1. **Stage 1** (``NcuProfiler.time_launches``): every launch's duration, one replay pass, grouped by
   kernel name and launch configuration.
2. **Stage 2, tier A** (``profilers.ncu.tiers``): the kernels making 90 % of GPU time (``select``), one
   representative launch of each configuration.
3. **Stage 2, tier B**: only the tier-A kernels whose evidence calls for it
   (``perfagent.classifier.needs.tier_b_reason``), in a second run restricted to them; ncu cannot choose
   metrics per kernel inside one run.

The result is one Profile (``assemble``) whose kernels say which tiers they got and why
(``KernelProfile.tiers``, ``tier_reason``) and which lists the kernels below the line with their time.
A one-run targeted profile is used instead when the user chose launches themselves (launch skip/count),
the full set, or when stage 1's table cannot be read.
"""

from __future__ import annotations

from collections.abc import Callable

from perfagent.classifier.needs import tier_b_reason
from perfagent.models import Profile
from perfagent.staging.assemble import assemble, with_tier_b
from perfagent.staging.select import DEPTH_SHARE, KernelKey, exact_key, names_regex, select_kernels
from profilers.base import ProfileRequest
from profilers.errors import BadReport, NoKernelsProfiled
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
) -> Profile:
    """Profile ``request`` in stages (module docstring); raises as ``NcuProfiler.profile``."""
    progress("stage 1: timing every kernel launch (ncu, 1 replay pass) …")
    try:
        times = ncu.time_launches(request)
    except BadReport as exc:
        progress(f"stage 1's table could not be read ({exc.message}); one targeted run instead")
        return ncu.profile(request)
    selection = select_kernels(times, share=DEPTH_SHARE, all_kernels=all_kernels)
    chosen = len(selection.in_depth)
    progress(
        f"stage 2: tier A counters on {chosen} of {len(times.kernels)} kernel configuration(s), "
        f"{100 * selection.share_in_depth:.1f} % of GPU time …"
    )
    try:
        tier_a = ncu.profile(stage2_request(request, selection.kernel_regex(), selection.launch_skip, ("A",)))
    except NoKernelsProfiled as exc:  # stage 1 saw these launches: a filter quirk, not an empty program
        progress(f"stage 2 matched no launch ({exc.message}); one targeted run instead")
        return ncu.profile(request)
    reasons: dict[KernelKey, str] = {}
    wanted: set[str] = set()
    for kernel in tier_a.kernels:
        reason = tier_b_reason(kernel)
        if reason is not None:
            reasons[exact_key(kernel)] = reason
            wanted.add(kernel.base_name)
    tier_b = None
    if reasons:
        names = names_regex(wanted)
        progress(f"stage 2: tier B counters (stall reasons, scheduler state) on {len(reasons)} kernel(s) …")
        try:
            tier_b = ncu.profile(stage2_request(request, names, selection.launch_skip, ("B",)))
        except NoKernelsProfiled as exc:  # each such kernel says its stalls were not collected
            progress(f"tier B matched no launch ({exc.message}); stall reasons not collected")
    kernels = with_tier_b(tier_a, tier_b, reasons)
    launches = sum(k.invocations for k in times.kernels)
    notes = [
        f"staged profiling: stage 1 timed {launches} launch(es) of {len(times.kernels)} kernel configuration(s) "
        f"(duration only); tier A on the {chosen} making {100 * selection.share_in_depth:.1f} % of GPU time "
        f"({'every kernel asked for' if all_kernels else f'threshold {100 * DEPTH_SHARE:.0f} %'}); tier B on {len(reasons)}",
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
