"""The report as plain strings: what every human-readable format shows, computed once.

``build_view(record)`` turns a ``RunRecord`` into small frozen dataclasses of already-formatted text
(numbers through ``perfagent.render.units``). The text, Markdown and HTML renderers only lay this
out, so the three formats always say the same thing; the TUI can reuse it too. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from perfagent.records import RunRecord
from perfagent.render.roofline_text import LEVEL_LABELS, roofline_summary
from perfagent.render.units import (
    NA,
    fmt_bandwidth,
    fmt_bytes,
    fmt_count,
    fmt_flop,
    fmt_flops,
    fmt_hz,
    fmt_number,
    fmt_pct,
    fmt_seconds,
    fmt_share,
    fmt_speedup,
    sig,
    split_quantity,
)
from profilers.model import (
    DeviceInfo,
    Finding,
    KernelDiagnosis,
    KernelProfile,
    SourceLine,
    ToolFinding,
)

__all__ = [
    "EvidenceRow",
    "FindingView",
    "KernelView",
    "ReportView",
    "build_view",
    "first_sentence",
    "mode_statement",
    "tool_label",
]

MODE_STATEMENTS = {
    "static": (
        "STATIC ANALYSIS — no kernel was run. Everything below comes from the compiler (registers, "
        "shared memory, local memory/spills); there are no durations, throughputs or roofline, and "
        "only findings the compiler output can support."
    ),
    "timing-only": (
        "TIMING ONLY — kernels were timed but no hardware counters were collected. Durations are "
        "real; throughput, roofline and counter-based findings are not available."
    ),
}
"""What a non-counters mode means, said plainly at the top of every report."""

_TOOL_LABELS = {
    "ncu": "Nsight Compute",
    "rocprofv3": "rocprofv3",
    "rocprof-compute": "rocprof-compute",
    "static": "the compiler",
}
_HOT_LINES = 5
"""Kernel-level source lines shown (hottest first as the profiler ordered them)."""


@dataclass(frozen=True)
class EvidenceRow:
    """One evidence row, every cell already text."""

    metric: str
    value: str
    threshold: str
    """Comparison and threshold in the value's unit prefix: ``< 16``; empty when none."""
    unit: str
    note: str


@dataclass(frozen=True)
class FindingView:
    """One finding, ready to lay out."""

    rank: int
    severity: str
    category: str
    title: str
    explanation: str
    evidence: tuple[EvidenceRow, ...]
    speedup: str | None
    """``estimated speed-up ≈ 1.8× (estimate: formula)``; None for info findings without one."""
    recoverable: str | None
    transforms: tuple[str, ...]
    source: tuple[str, ...]
    """``file:line  code  (samples; note)`` lines."""
    rule: str
    tool_rules: tuple[str, ...]


@dataclass(frozen=True)
class KernelView:
    """One kernel: labelled facts, findings, skipped rules, the tool's own verdicts."""

    rank: int
    name: str
    short_name: str
    facts: tuple[tuple[str, str], ...]
    """(label, text) in display order: Duration, Launch, Device, Roofline, Work, Occupancy, Stalls."""
    findings: tuple[FindingView, ...]
    hot_lines: tuple[str, ...]
    skipped: tuple[str, ...]
    tool_findings: tuple[str, ...]
    harness: bool = False
    """Launched by perfagent's harness outside the workload: not diagnosed (``KernelProfile.harness``)."""
    timed_only: str | None = None
    """Why a kernel below staged profiling's line has only its time (``KernelProfile.tier_reason``)."""


@dataclass(frozen=True)
class ReportView:
    """The whole report."""

    title: str
    facts: tuple[tuple[str, str], ...]
    mode: str
    mode_statement: str | None
    notes: tuple[str, ...]
    kernels: tuple[KernelView, ...]
    tool_label: str
    """How to name the profiler in 'X says:' lines ('Nsight Compute')."""


# Recorded profiler command lines can list a hundred metrics; show the start only.
COMMAND_CHARS = 160


def tool_label(tool: str) -> str:
    """The profiler's display name: ``ncu -> Nsight Compute``."""
    return _TOOL_LABELS.get(tool, tool)


def mode_statement(mode: str) -> str | None:
    """The plain statement of what a non-counters mode means, or None for 'counters'."""
    return MODE_STATEMENTS.get(mode)


def first_sentence(text: str, limit: int = 200) -> str:
    """The first sentence of ``text`` (at most ``limit`` characters, '…' when cut)."""
    flat = " ".join(text.split())
    for end in (". ", "! ", "? "):
        cut = flat.find(end)
        if 0 < cut < limit:
            flat = flat[: cut + 1]
            break
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _total_s(kp: KernelProfile) -> float | None:
    if kp.total_duration_s is not None:
        return kp.total_duration_s
    if kp.metrics.duration_s is not None:
        return kp.metrics.duration_s * kp.invocations
    return None


def _duration(kd: KernelDiagnosis) -> str:
    kp = kd.profile
    duration = kd.duration_s if kd.duration_s is not None else kp.metrics.duration_s
    if duration is None:
        return "n/a (not measured)"
    if kp.invocations > 1:
        text = f"{fmt_seconds(duration)} mean × {kp.invocations} launches = {fmt_seconds(_total_s(kp))}"
    else:
        text = fmt_seconds(duration)
    if kd.share_of_total is not None:
        text += f" · {fmt_share(kd.share_of_total)} of total"
    return text


def _dims(dims: tuple[int, int, int] | None, total: int | None, what: str) -> str:
    if dims is None and total is None:
        return NA
    if dims is None:
        return f"{fmt_count(total)} {what}"
    shown = "×".join(str(d) for d in dims)
    if total is None:
        total = dims[0] * dims[1] * dims[2]
    return f"{shown} ({fmt_count(total)} {what})"


def _launch(kp: KernelProfile) -> str:
    lc = kp.launch
    parts = [
        f"grid {_dims(lc.grid, lc.grid_size, 'blocks')}",
        f"block {_dims(lc.block, lc.block_size, 'threads')}",
        f"{fmt_count(lc.registers_per_thread)} registers/thread"
        if lc.registers_per_thread is not None
        else f"registers/thread {NA}",
    ]
    static, dynamic = lc.shared_memory_static_bytes, lc.shared_memory_dynamic_bytes
    if static is None and dynamic is None:
        parts.append(f"shared memory {NA}")
    else:
        shared = f"shared {fmt_bytes(static, binary=True)} static"
        if dynamic is not None:
            shared += f" + {fmt_bytes(dynamic, binary=True)} dynamic"
        parts.append(shared)
    if lc.local_memory_per_thread_bytes is not None:
        parts.append(f"local memory {fmt_bytes(lc.local_memory_per_thread_bytes, binary=True)}/thread")
    if lc.waves_per_sm is not None:
        parts.append(f"{fmt_number(lc.waves_per_sm)} waves/SM")
    return " · ".join(parts)


def _device(dev: DeviceInfo, used_precisions: set[str]) -> str:
    """Name, architecture, size, clock, and the peaks that matter (DRAM + precisions the kernel uses)."""
    arch = dev.arch or NA
    if dev.compute_capability:
        arch += f" (CC {dev.compute_capability})"
    parts = [dev.name or "unknown device", arch]
    if dev.sm_count is not None:
        parts.append(f"{dev.sm_count} {'CUs' if dev.vendor == 'amd' else 'SMs'}")
    if dev.sm_clock_hz is not None:
        parts.append(f"SM clock {fmt_hz(dev.sm_clock_hz)}")
    if dev.l2_cache_bytes is not None:
        parts.append(f"L2 {fmt_bytes(dev.l2_cache_bytes, binary=True)}")
    peaks = dev.peaks
    peak_parts = []
    if peaks.dram_bytes_per_s is not None:
        peak_parts.append(f"DRAM {fmt_bandwidth(peaks.dram_bytes_per_s)}")
    used = [p for p in peaks.flops_per_s if p in used_precisions] or list(peaks.flops_per_s)
    peak_parts.extend(f"{prec.upper()} {fmt_flops(peaks.flops_per_s[prec])}" for prec in used)
    if peak_parts:
        parts.append(f"peaks {', '.join(peak_parts)} (from {peaks.source})")
    return " · ".join(parts)


def _work(kp: KernelProfile) -> str | None:
    m = kp.metrics
    parts = [
        f"{LEVEL_LABELS[level]} {fmt_bytes(moved)}"
        for level, moved in (("dram", m.dram_bytes), ("l2", m.l2_bytes), ("l1", m.l1_bytes))
        if moved is not None
    ]
    flops = [f"{prec.upper()} {fmt_flop(v)}" for prec, v in m.flops.items()]
    if not parts and not flops:
        return None
    text = "moved " + ", ".join(parts) if parts else ""
    if flops:
        text += ("; " if text else "") + "computed " + ", ".join(flops)
    return text


def _occupancy(kp: KernelProfile) -> str | None:
    occ = kp.occupancy
    if occ.theoretical_pct is None and occ.achieved_pct is None and occ.limiter is None:
        return None
    text = f"theoretical {fmt_pct(occ.theoretical_pct)}, achieved {fmt_pct(occ.achieved_pct)}"
    text += f"; limited by {occ.limiter}" if occ.limiter else "; no resource limiter"
    if occ.blocks_per_sm_limits:
        limits = ", ".join(f"{k} {v}" for k, v in occ.blocks_per_sm_limits.items())
        text += f" (blocks/SM allowed by {limits})"
    return text


def _stalls(kp: KernelProfile) -> str | None:
    stalls = sorted(kp.metrics.warp_stalls.items(), key=lambda kv: -kv[1])[:3]
    if not stalls:
        return None
    return "top warp stalls " + ", ".join(f"{name} {sig(v)}" for name, v in stalls) + " cycles/instruction"


def _evidence(finding: Finding) -> tuple[EvidenceRow, ...]:
    rows = []
    for ev in finding.evidence:
        value, unit = split_quantity(ev.value, ev.unit)
        reference = ev.value if isinstance(ev.value, float | int) else None
        threshold = ""
        if ev.threshold is not None:
            number, _ = split_quantity(ev.threshold, ev.unit, scale_like=reference)
            threshold = f"{ev.comparison} {number}" if ev.comparison else number
        rows.append(EvidenceRow(ev.metric, value, threshold, unit, ev.note or ""))
    return tuple(rows)


def _source_line(line: SourceLine) -> str:
    text = f"{line.file}:{line.line}"
    if line.text:
        text += f"  {line.text.strip()}"
    extra = []
    if line.samples is not None:
        extra.append(f"{fmt_count(line.samples)} samples")
    if line.note:
        extra.append(line.note)
    if extra:
        text += f"  ({'; '.join(extra)})"
    return text


def _finding(rank: int, f: Finding) -> FindingView:
    speedup: str | None = None
    if f.estimated_speedup is not None:
        how = f"estimate: {f.speedup_formula}" if f.speedup_formula else "estimate"
        speedup = f"estimated speed-up ≈ {fmt_speedup(f.estimated_speedup)} ({how})"
    elif f.severity != "info":
        speedup = "estimated speed-up: n/a (not estimable from the collected metrics)"
    recoverable: str | None = None
    if f.recoverable_s is not None:
        recoverable = f"recoverable ≈ {fmt_seconds(f.recoverable_s)} of kernel time"
        if f.recoverable_share is not None:
            recoverable += f" ({fmt_share(f.recoverable_share)} of the total)"
        recoverable += " — estimate"
    return FindingView(
        rank=rank,
        severity=f.severity,
        category=f.category,
        title=f.title,
        explanation=f.explanation,
        evidence=_evidence(f),
        speedup=speedup,
        recoverable=recoverable,
        transforms=tuple(f.transforms),
        source=tuple(_source_line(s) for s in f.source_lines),
        rule=f.rule,
        tool_rules=tuple(f.tool_rules),
    )


def _tool_finding(t: ToolFinding) -> str:
    detail: str = t.kind
    if t.estimated_speedup_pct is not None:
        scope = f", {t.speedup_scope}" if t.speedup_scope else ""
        detail += f"; est. {fmt_pct(t.estimated_speedup_pct)} of kernel time{scope}"
    text = f"{t.title} ({detail})"
    if t.message:
        text += f": {first_sentence(t.message)}"
    return f"{text} [{t.rule_id}]"


def no_findings(k: KernelView) -> str:
    """What a kernel without findings says: why there are none."""
    if k.harness:
        return "Not diagnosed: a harness kernel, outside the workload's forward()."
    if k.timed_only:
        return f"Not diagnosed: {k.timed_only}."
    return "No findings: no rule fired on the collected metrics."


HARNESS_ROLE = (
    "harness: launched by perfagent's harness outside the workload's forward() (e.g. to prepare inputs); "
    "not diagnosed or ranked"
)


def _kernel(rank: int, kd: KernelDiagnosis) -> KernelView:
    kp = kd.profile
    facts: list[tuple[str, str]] = [
        ("Duration", _duration(kd)),
        ("Launch", _launch(kp)),
        ("Device", _device(kp.device, {p for p, v in kp.metrics.flops.items() if v})),
        ("Roofline", roofline_summary(kd)),
    ]
    for label, text in (("Work", _work(kp)), ("Occupancy", _occupancy(kp)), ("Stalls", _stalls(kp))):
        if text is not None:
            facts.append((label, text))
    if kp.harness:
        facts.insert(0, ("Role", HARNESS_ROLE))
    if kp.tiers:
        facts.append(("Profiled", _depth(kp.tiers, kp.tier_reason)))
    shown_in_findings = {(s.file, s.line) for f in kd.findings for s in f.source_lines}
    hot = [s for s in kp.source_lines if (s.file, s.line) not in shown_in_findings][:_HOT_LINES]
    return KernelView(
        rank=rank,
        name=kd.name,
        short_name=(kp.base_name or kd.name) + (" (harness)" if kp.harness else ""),
        facts=tuple(facts),
        findings=tuple(_finding(i, f) for i, f in enumerate(kd.findings, 1)),
        hot_lines=tuple(_source_line(s) for s in hot),
        skipped=tuple(f"skipped: {s.rule} rule — {s.reason}" for s in kd.skipped),
        tool_findings=tuple(_tool_finding(t) for t in kp.tool_findings),
        harness=kp.harness,
        timed_only=(kp.tier_reason or "durations only") if kp.tiers == ["duration"] else None,
    )


def _depth(tiers: Sequence[str], reason: str | None) -> str:
    """Staged profiling's verdict for one kernel: its counter tiers and why."""
    counters = [t for t in tiers if t != "duration"]
    head = f"tiers {'+'.join(counters)}" if counters else "durations only"
    return f"{head} — {reason}" if reason else head


def build_view(record: RunRecord) -> ReportView:
    """Everything the human-readable formats show, as text."""
    tool = record.tool + (f" {record.tool_version}" if record.tool_version else "")
    totals = [t for t in (_total_s(k.profile) for k in record.kernels) if t is not None]
    kernels = f"{len(record.kernels)}"
    harness = sum(1 for k in record.kernels if k.profile.harness)
    if harness:
        kernels += f" ({harness} of the harness, not ranked)"
    if totals:
        kernels += f" · {fmt_seconds(sum(totals))} total kernel time"
    facts = [("Target", record.target), ("Tool", tool), ("Mode", record.mode), ("Kernels", kernels)]
    if record.command:
        cmd = record.command
        if len(cmd) > COMMAND_CHARS:
            cmd = cmd[:COMMAND_CHARS] + f" … ({len(record.command)} characters; the JSON record has all)"
        facts.append(("Command", cmd))
    created = record.created + (
        f" · perfagent {record.perfagent_version}" if record.perfagent_version else ""
    )
    facts.append(("Recorded", created + (f" · run {record.id}" if record.id else "")))
    verb = "optimization" if record.kind == "optimize" else "diagnosis"
    return ReportView(
        title=f"perfagent {verb}",
        facts=tuple(facts),
        mode=record.mode,
        mode_statement=mode_statement(record.mode),
        notes=tuple(record.notes),
        kernels=tuple(_kernel(i, kd) for i, kd in enumerate(record.kernels, 1)),
        tool_label=tool_label(record.tool),
    )
