"""What the TUI shows, as plain data: pure functions of a ``RunRecord``, no Textual.

Widgets only lay these out. Every number goes through ``perfagent.render.units`` and every sentence that the
text report also says comes from ``perfagent.render.view``, so the TUI and ``perfagent diagnose`` never
disagree. Nothing here ranks, classifies or estimates: the record arrives ranked from the library.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from perfagent.optimize.render import change, fmt_value, headline
from perfagent.records import OptimizeResult, RunRecord
from perfagent.render.roofline_text import roofline_summary
from perfagent.render.units import (
    NA,
    fmt_bytes,
    fmt_count,
    fmt_number,
    fmt_pct,
    fmt_seconds,
    fmt_share,
    fmt_speedup,
    sig,
)
from perfagent.render.view import FindingView, build_view, mode_statement, tool_label
from profilers.model import Finding, KernelDiagnosis, KernelProfile

__all__ = [
    "BarRow",
    "FindingItem",
    "KernelRow",
    "SOL_NOTE",
    "RunSummary",
    "bar",
    "compact_share",
    "finding_items",
    "kernel_headline",
    "kernel_rows",
    "launch_rows",
    "occupancy_rows",
    "run_facts",
    "run_summary",
    "saved_run_facts",
    "severity_label",
    "short_name",
    "sol_rows",
    "top_finding",
]

_EIGHTHS = " ▏▎▍▌▋▊▉█"
"""Partial block characters, index = eighths filled."""
SEVERITY_LABELS = {"high": "HIGH", "medium": "MED", "low": "LOW", "info": "INFO"}


def bar(pct: float | None, width: int) -> str:
    """A horizontal bar ``width`` cells wide, filled to ``pct`` percent with eighth-block precision.

    ``None`` gives a blank bar (the caller shows ``n/a`` beside it); values are clamped to 0..100.
    """
    if width <= 0:
        return ""
    if pct is None or math.isnan(pct):
        return " " * width
    eighths = round(max(0.0, min(100.0, pct)) / 100.0 * width * 8)
    full, part = divmod(eighths, 8)
    text = "█" * full + (_EIGHTHS[part] if part else "")
    return text.ljust(width)


SHARE_WIDTH = 6
"""Cells the kernel list gives a share; ``compact_share`` never needs more."""


def compact_share(fraction: float | None) -> str:
    """A share of the total in at most ``SHARE_WIDTH`` cells, always with its unit.

    ``fmt_share`` gives 3 significant figures, which below 1 % no longer fit the column and lost the
    ``%`` to the cell's crop (``0.554``): ``64.3 %``, ``5.97 %``, ``0.55 %``, ``<0.1 %``, ``0 %``.
    """
    if fraction is None or math.isnan(fraction):
        return NA
    pct = fraction * 100.0
    if pct >= 1.0 or pct <= 0.0:
        return fmt_share(fraction)
    if pct < 0.1:
        return "<0.1 %"
    return f"{sig(pct, 2)} %"


def short_name(kd: KernelDiagnosis, limit: int | None = None) -> str:
    """The kernel's base name (no signature), cut to ``limit`` characters with '…'."""
    name = kd.profile.base_name or kd.name
    if limit is not None and len(name) > limit:
        return name[: max(1, limit - 1)] + "…"
    return name


def severity_label(severity: str) -> str:
    """``high -> HIGH``, ``medium -> MED``."""
    return SEVERITY_LABELS.get(severity, severity.upper())


def top_finding(kd: KernelDiagnosis) -> Finding | None:
    """The kernel's first finding (the classifier already ranked them), or None."""
    return kd.findings[0] if kd.findings else None


def _total_s(kp: KernelProfile) -> float | None:
    if kp.total_duration_s is not None:
        return kp.total_duration_s
    if kp.metrics.duration_s is not None:
        return kp.metrics.duration_s * kp.invocations
    return None


@dataclass(frozen=True)
class RunSummary:
    """The lines at the top of the kernel list."""

    title: str
    """``ncu 2023.1.1 · counters · 4 kernels · 12.3 ms kernel time · NVIDIA A10G``."""
    target: str
    mode_statement: str | None
    """What a static or timing-only record lacks, said plainly; None for counters."""
    notes: tuple[str, ...]


def run_summary(record: RunRecord) -> RunSummary:
    """One line of facts about the run, its mode statement and its notes."""
    parts = [record.tool + (f" {record.tool_version}" if record.tool_version else ""), record.mode]
    parts.append(f"{len(record.kernels)} kernel{'s' if len(record.kernels) != 1 else ''}")
    totals = [t for t in (_total_s(k.profile) for k in record.kernels) if t is not None]
    if totals:
        parts.append(f"{fmt_seconds(sum(totals))} kernel time")
    devices = sorted({k.profile.device.name for k in record.kernels if k.profile.device.name})
    if devices:
        parts.append(", ".join(devices))
    return RunSummary(
        title=" · ".join(parts),
        target=record.target,
        mode_statement=mode_statement(record.mode),
        notes=tuple(record.notes),
    )


def run_facts(record: RunRecord) -> tuple[tuple[str, str], ...]:
    """(label, text) facts about the run, as the text report's header gives them."""
    return build_view(record).facts


@dataclass(frozen=True)
class KernelRow:
    """One row of the kernel list."""

    index: int
    """Position in ``record.kernels`` (the library's priority order)."""
    rank: int
    name: str
    full_name: str
    duration: str
    """Total time of the kernel's profiled launches (mean × launches)."""
    launches: int
    share: str
    share_pct: float | None
    sm_pct: float | None
    """Compute (SM) throughput, % of peak."""
    memory_pct: float | None
    """Memory throughput, % of peak (busiest of DRAM, L2, L1)."""
    category: str
    """The top finding's category id, or '' when there is none."""
    severity: str
    title: str
    """The top finding's title ('no findings' when none)."""
    recoverable: str
    """ESTIMATE of the time the top finding could save, or ''."""


def kernel_rows(record: RunRecord) -> list[KernelRow]:
    """The kernel list, in the record's order (ranked by recoverable time by the classifier)."""
    rows = []
    for i, kd in enumerate(record.kernels):
        kp = kd.profile
        top = top_finding(kd)
        share = kd.share_of_total
        recoverable = ""
        if kd.recoverable_s is not None:
            recoverable = f"≈{fmt_seconds(kd.recoverable_s)}"
        rows.append(
            KernelRow(
                index=i,
                rank=i + 1,
                name=short_name(kd),
                full_name=kd.name,
                duration=fmt_seconds(_total_s(kp) if _total_s(kp) is not None else kd.duration_s),
                launches=kp.invocations,
                share=compact_share(share),
                share_pct=None if share is None else share * 100.0,
                sm_pct=kp.metrics.sm_throughput_pct,
                memory_pct=kp.metrics.memory_throughput_pct,
                category=top.category if top else "",
                severity=top.severity if top else "",
                title=top.title
                if top
                else ("harness kernel: not diagnosed" if kp.harness else "no findings"),
                recoverable=recoverable,
            )
        )
    return rows


def kernel_headline(record: RunRecord, index: int) -> tuple[str, str]:
    """The detail screen's two header lines: who and how long; where it sits against the roofline."""
    kd = record.kernels[index]
    view = build_view(record).kernels[index]
    duration = dict(view.facts).get("Duration", NA)
    first = f"[{index + 1}] {short_name(kd)} · {duration}"
    return first, roofline_summary(kd)


@dataclass(frozen=True)
class BarRow:
    """A labelled percentage shown as a bar, or a labelled fact (``pct`` None, ``text`` set)."""

    label: str
    pct: float | None
    text: str
    indent: int = 0
    emphasis: bool = False


SOL_NOTE = "how busy each unit is, % of its peak (the roofline above rates bytes/s moved)"
"""Said under the speed-of-light panel: its L1 (say) can be 99 % busy while the header's roofline puts the
L1 traffic at 6 % of the L1 bandwidth peak (uncoalesced accesses keep the unit busy moving few bytes)."""


def sol_rows(kd: KernelDiagnosis) -> list[BarRow]:
    """Speed-of-light rows: compute and memory throughput (and each memory level), issue slots.

    These are the profiler's throughput percentages (how busy each unit is), not the roofline's achieved
    bandwidth: the L1 row is labelled ``L1/TEX`` as the profiler names that unit (``SOL_NOTE``)."""
    m = kd.profile.metrics
    rows = [
        BarRow("Compute (SM)", m.sm_throughput_pct, fmt_pct(m.sm_throughput_pct)),
        BarRow("Memory", m.memory_throughput_pct, fmt_pct(m.memory_throughput_pct)),
    ]
    rows.extend(
        BarRow(label, value, fmt_pct(value), indent=1)
        for label, value in (
            ("DRAM", m.dram_throughput_pct),
            ("L2", m.l2_throughput_pct),
            ("L1/TEX", m.l1_throughput_pct),
        )
        if value is not None
    )
    if m.issue_slot_utilization_pct is not None:
        rows.append(
            BarRow("Issue slots", m.issue_slot_utilization_pct, fmt_pct(m.issue_slot_utilization_pct))
        )
    busiest = max(
        (r for r in rows if r.pct is not None and r.indent == 0), key=lambda r: r.pct or 0.0, default=None
    )
    if busiest is not None:
        rows = [BarRow(r.label, r.pct, r.text, r.indent, r is busiest) for r in rows]
    return rows


def occupancy_rows(kd: KernelDiagnosis) -> list[BarRow]:
    """Occupancy rows: theoretical and achieved (bars), the limiter and the blocks/SM each resource allows."""
    occ = kd.profile.occupancy
    rows = [
        BarRow("Theoretical", occ.theoretical_pct, fmt_pct(occ.theoretical_pct)),
        BarRow("Achieved", occ.achieved_pct, fmt_pct(occ.achieved_pct)),
    ]
    if occ.theoretical_pct is None and occ.achieved_pct is None and occ.limiter is None:
        return rows
    limiter = occ.limiter or "none (no resource limits it)"
    rows.append(BarRow("Limiter", None, limiter, emphasis=occ.limiter is not None))
    if occ.blocks_per_sm_limits:
        limits = ", ".join(f"{k} {v}" for k, v in occ.blocks_per_sm_limits.items())
        rows.append(BarRow("Blocks/SM", None, limits))
    return rows


def launch_rows(kd: KernelDiagnosis) -> list[BarRow]:
    """Launch facts: grid, block, registers, shared memory, waves."""
    lc = kd.profile.launch

    def dims(d: tuple[int, int, int] | None, total: int | None) -> str:
        if d is None:
            return fmt_count(total)
        return (
            "×".join(str(x) for x in d)
            + f" ({fmt_count(total if total is not None else d[0] * d[1] * d[2])})"
        )

    def per(text: str, unit: str) -> str:
        return text if text == NA else f"{text}/{unit}"

    shared = fmt_bytes(lc.shared_memory_static_bytes, binary=True)
    if lc.shared_memory_dynamic_bytes:
        shared += f" + {fmt_bytes(lc.shared_memory_dynamic_bytes, binary=True)} dyn"
    rows = [
        BarRow("Grid", None, dims(lc.grid, lc.grid_size)),
        BarRow("Block", None, dims(lc.block, lc.block_size)),
        BarRow("Registers", None, per(fmt_count(lc.registers_per_thread), "thread")),
        BarRow("Shared", None, per(shared, "block")),
    ]
    if lc.local_memory_per_thread_bytes is not None:
        rows.append(
            BarRow("Local", None, f"{fmt_bytes(lc.local_memory_per_thread_bytes, binary=True)}/thread")
        )
    if lc.waves_per_sm is not None:
        rows.append(BarRow("Waves/SM", None, fmt_number(lc.waves_per_sm)))
    return rows


@dataclass(frozen=True)
class FindingItem:
    """One entry of the findings list: a finding, the profiler's own rules, or the rules that were skipped."""

    kind: str
    """'finding', 'tool' (the profiler's own rule results) or 'skipped'."""
    label: str
    """One line for the list: ``1 HIGH global-coalescing ≤1.8× Global loads use …``."""
    severity: str
    view: FindingView | None
    """The finding as the text report shows it (kind 'finding' only)."""
    lines: tuple[str, ...] = ()
    speedup: str = ""
    """``≤1.48×`` (an estimate) or ''."""
    """Body lines for 'tool' and 'skipped' items."""


def finding_items(record: RunRecord, index: int) -> list[FindingItem]:
    """The kernel's findings in ranked order, then the profiler's own rules, then skipped rules."""
    kd = record.kernels[index]
    kv = build_view(record).kernels[index]
    items = []
    for fv, f in zip(kv.findings, kd.findings, strict=True):
        speed = f" ≈{fmt_speedup(f.estimated_speedup)}" if f.estimated_speedup is not None else ""
        label = f"{fv.rank} {severity_label(f.severity):4} {f.category}{speed}  {f.title}"
        items.append(FindingItem("finding", label, f.severity, fv, speedup=speed.strip()))
    if kv.tool_findings:
        label = f"{tool_label(record.tool)}'s own rules ({len(kv.tool_findings)})"
        items.append(FindingItem("tool", label, "info", None, kv.tool_findings))
    if kv.skipped:
        items.append(FindingItem("skipped", f"Rules skipped ({len(kv.skipped)})", "info", None, kv.skipped))
    return items


def samples_text(samples: float | None) -> str:
    """Samples of a hot line, compact (``1,520``, ``2.3 M``)."""
    return "" if samples is None else fmt_count(samples)


def percent_text(value: float | None) -> str:
    """A percentage with 3 significant figures, or ``n/a``."""
    return NA if value is None else f"{sig(value)} %"


def saved_run_facts(result: OptimizeResult) -> list[tuple[str, str]]:
    """(label, text) lines heading a saved optimize run, most telling first: the outcome, the baseline, the
    original → best rows that were measured, why it stopped, what ran where (as ``perfagent report``)."""
    b = result.baseline
    device = result.device + (
        "" if result.gpu else " (no GPU: candidates verified where possible, never timed)"
    )
    baseline = fmt_seconds(b.time_s) + (f" ({b.timer})" if b.timer else " (not timed)")
    if b.pct_of_roofline is not None:
        baseline += f" · {fmt_pct(b.pct_of_roofline)} of roofline"
    if b.kernel:
        baseline += f" · kernel {b.kernel}"
    facts = [("Outcome", headline(result)), ("Baseline", baseline)]
    if b.findings:
        f = b.findings[0]
        facts.append(("Finding", f"[{f.severity}] {f.category}: {f.title}"))
    for row in result.table:
        if row.before is None and row.after is None:
            continue
        moved = change(row)
        text = f"{fmt_value(row.before, row.unit)} → {fmt_value(row.after, row.unit)}"
        facts.append((row.quantity, text + (f" ({moved})" if moved else "")))
    if result.stopped:
        facts.append(("Stopped", result.stopped))
    facts.append(("Ran", f"{result.workload} · {result.language} · {result.backend} backend · {device}"))
    facts.append(("Target", result.target))
    facts += [("Note", n) for n in dict.fromkeys([*b.notes, *result.notes])]
    return facts
