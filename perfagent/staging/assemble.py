"""Put staged profiling's runs back together into one Profile (pure): tier B merged into tier A, stage-1
launch counts and times on every kernel, the kernels below the line listed with their time."""

from __future__ import annotations

from typing import Any

from perfagent.staging.select import KernelKey, Selection, TimedKernel, exact_key, kernel_key, shallow_reason
from profilers.model import KernelProfile, Metrics, Profile


def merge_tier_b(tier_a: KernelProfile, tier_b: KernelProfile) -> KernelProfile:
    """``tier_a`` with the metrics only ``tier_b``'s run measured (tier A's values win where both have one)."""
    a, b = tier_a.metrics.model_dump(), tier_b.metrics.model_dump()
    merged: dict[str, Any] = {}
    for name, value in a.items():
        other = b.get(name)
        if isinstance(value, dict):
            merged[name] = {**(other or {}), **value}
        else:
            merged[name] = value if value is not None else other
    seen = {f.rule_id for f in tier_a.tool_findings}
    findings = [*tier_a.tool_findings, *(f for f in tier_b.tool_findings if f.rule_id not in seen)]
    counts = [c for c in (tier_a.raw_metric_count, tier_b.raw_metric_count) if c is not None]
    return tier_a.model_copy(
        update={
            "metrics": Metrics.model_validate(merged),
            "tool_findings": findings,
            "raw_metric_count": sum(counts) if counts else None,
        }
    )


def find_same(kernel: KernelProfile, others: list[KernelProfile]) -> KernelProfile | None:
    """The kernel of another run that is ``kernel``: same demangled name, grid and block; else the one
    with the same function name, grid and block."""
    exact = [k for k in others if exact_key(k) == exact_key(kernel)]
    if exact:
        return exact[0]
    loose = [k for k in others if kernel_key(k) == kernel_key(kernel)]
    return loose[0] if len(loose) == 1 else None


def with_tier_b(
    tier_a: Profile, tier_b: Profile | None, reasons: dict[KernelKey, str]
) -> list[KernelProfile]:
    """Tier A's kernels (``reasons`` keyed by ``exact_key``), each with tier B merged in where it was asked
    for, and its tiers and reason."""
    others = tier_b.kernels if tier_b else []
    out: list[KernelProfile] = []
    for kernel in tier_a.kernels:
        reason = reasons.get(exact_key(kernel))
        match = find_same(kernel, others) if reason is not None else None
        if reason is not None and match is not None:
            merged = merge_tier_b(kernel, match)
            out.append(merged.model_copy(update={"tiers": ["duration", "A", "B"], "tier_reason": reason}))
        elif reason is not None:
            why = f"{reason}; but tier B's run did not profile it, so its stalls are not collected"
            out.append(kernel.model_copy(update={"tiers": ["duration", "A"], "tier_reason": why}))
        else:
            out.append(kernel.model_copy(update={"tiers": ["duration", "A"]}))
    return out


def stage1_entry(kernel: KernelProfile, entries: list[TimedKernel]) -> TimedKernel | None:
    """The stage-1 entry of a stage-2 kernel: same demangled name, grid and block; else the one entry
    with the same function name, grid and block (template instantiations share a function name)."""
    exact = [
        e
        for e in entries
        if (e.kernel.name, e.kernel.launch.grid, e.kernel.launch.block)
        == (kernel.name, kernel.launch.grid, kernel.launch.block)
    ]
    if exact:
        return exact[0]
    loose = [e for e in entries if kernel_key(e.kernel) == kernel_key(kernel)]
    return loose[0] if len(loose) == 1 else None


def assemble(
    times: Profile,
    selection: Selection,
    kernels: list[KernelProfile],
    *,
    notes: list[str],
) -> Profile:
    """The staged Profile: in-depth kernels carry stage 1's launch count and summed time (the whole
    program's, not the representative launch's); kernels below the line follow with their time only."""
    entries = [*selection.in_depth, *selection.shallow]
    profiled: set[int] = set()
    out: list[KernelProfile] = []
    for kernel in kernels:
        entry = stage1_entry(kernel, entries)
        reason = _depth_reason(entry, kernel.tier_reason, selection.share_in_depth)
        update: dict[str, Any] = {"tier_reason": reason}
        if entry is not None:
            profiled.add(id(entry))
            update |= {"invocations": entry.kernel.invocations, "total_duration_s": entry.time_s}
        out.append(kernel.model_copy(update=update))
    missed = "chosen, but stage 2 profiled no launch of it; "
    out += [_listed(e, missed + shallow_reason(e)) for e in selection.in_depth if id(e) not in profiled]
    out += [_listed(e, shallow_reason(e)) for e in selection.shallow if id(e) not in profiled]
    return Profile(
        tool="ncu",
        tool_version=times.tool_version,
        mode="counters",
        source=times.source,
        command=times.command,
        kernels=out,
        notes=notes,
    )


def _depth_reason(entry: TimedKernel | None, tier_b_reason: str | None, covered: float) -> str:
    head = (
        f"tier A: one of the kernels making {100 * covered:.1f} % of GPU time ({100 * entry.share:.1f} % itself)"
        if entry is not None
        else "tier A: another launch configuration of a chosen kernel"
    )
    if tier_b_reason:
        return f"{head}; tier B: {tier_b_reason}"
    return f"{head}; tier B not needed (tier A shows a busy unit, not waiting)"


def _listed(entry: TimedKernel, reason: str) -> KernelProfile:
    return entry.kernel.model_copy(
        update={"tiers": ["duration"], "tier_reason": reason, "total_duration_s": entry.time_s}
    )
