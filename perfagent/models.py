"""Diagnosis-side models: findings, roofline and kernel diagnoses (the saved ``RunRecord`` is in ``perfagent.records``).

The profile-side models (``Profile``, ``KernelProfile``, ``Metrics`` ...) live in
``profilers.model`` because the profiler layer produces them and may not import perfagent;
they are re-exported here so that library users import everything from one place.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from profilers.model import (
    SCHEMA_VERSION,
    DeviceInfo,
    DevicePeaks,
    Frozen,
    KernelProfile,
    LaunchConfig,
    Metrics,
    Occupancy,
    Profile,
    SourceLine,
    ToolFinding,
)

__all__ = [
    "SCHEMA_VERSION",
    "DeviceInfo",
    "DevicePeaks",
    "Evidence",
    "Finding",
    "Frozen",
    "KernelDiagnosis",
    "KernelProfile",
    "LaunchConfig",
    "Metrics",
    "Occupancy",
    "Profile",
    "Roofline",
    "RooflinePoint",
    "Severity",
    "SkippedRule",
    "SourceLine",
    "ToolFinding",
]

Severity = Literal["high", "medium", "low", "info"]


class Evidence(Frozen):
    """One measured fact behind a finding."""

    metric: str
    """Canonical metric name (see ``profilers.model.Metrics``) or a derived quantity."""
    value: float | str | None
    threshold: float | None = None
    """The value the rule compares against."""
    comparison: str | None = None
    """How value relates to threshold: '<', '<=', '>', '>='."""
    unit: str = ""
    note: str | None = None


class Finding(Frozen):
    """One diagnosed problem (or an at-its-bound statement) of one kernel."""

    category: str
    """Bottleneck taxonomy id (knowledge/data/taxonomy.toml)."""
    severity: Severity
    title: str
    explanation: str
    """Plain words with the numbers in."""
    evidence: list[Evidence] = Field(default_factory=list)
    estimated_speedup: float | None = None
    """ESTIMATE of the kernel's speed-up if this is fixed (x), by ``speedup_formula``. None when not estimable."""
    speedup_formula: str | None = None
    """How ``estimated_speedup`` was computed, so that readers can judge it."""
    recoverable_s: float | None = None
    """ESTIMATE: kernel time this could save, s = duration x (1 - 1/estimated_speedup)."""
    recoverable_share: float | None = None
    """ESTIMATE: share of the whole profile's time this could save (ranks findings across kernels)."""
    transforms: list[str] = Field(default_factory=list)
    """Transform catalog ids, best first."""
    source_lines: list[SourceLine] = Field(default_factory=list)
    rule: str
    """The classifier rule that produced this finding."""
    tool_rules: list[str] = Field(default_factory=list)
    """The profiler's own rules that agree (secondary evidence)."""


class SkippedRule(Frozen):
    """A classifier rule that could not run, and why (usually a missing metric)."""

    rule: str
    reason: str


class RooflinePoint(Frozen):
    """A kernel placed on one roofline (one memory level, one precision)."""

    level: Literal["dram", "l2", "l1"]
    precision: str
    arithmetic_intensity: float | None
    """FLOP per byte moved at this level."""
    achieved_flops_per_s: float | None
    achieved_bytes_per_s: float | None
    peak_flops_per_s: float | None
    peak_bytes_per_s: float | None
    ridge_intensity: float | None
    """Intensity where the memory roof meets the compute roof, FLOP/byte."""
    bound: Literal["memory", "compute"] | None
    """Which roof the kernel sits under at this level."""
    attainable_flops_per_s: float | None
    """min(peak FLOP/s, intensity x peak B/s)."""
    fraction_of_roof: float | None
    """Achieved / attainable (0..1)."""


class Roofline(Frozen):
    """Speed-of-light summary of a kernel."""

    points: list[RooflinePoint] = Field(default_factory=list)
    bound: Literal["memory", "compute", "unknown"] = "unknown"
    bounding_resource: str | None = None
    """What the speed of light is set by: 'dram', 'l2', 'l1', 'fp32', 'tensor', ..."""
    speed_of_light_s: float | None = None
    """max(FLOP / peak FLOP/s, bytes / peak B/s) over levels and precisions, s."""
    fraction_of_sol: float | None = None
    """speed_of_light_s / duration (1.0 = at the roofline)."""
    headroom_s: float | None = None
    """duration - speed_of_light_s, s."""
    floors_s: dict[str, float] = Field(default_factory=dict)
    """Lower bound on the time from each resource alone (bytes / peak B/s per level, FLOP / peak per precision), s."""
    peaks_source: str = "unknown"


class KernelDiagnosis(Frozen):
    """One kernel with its roofline and ranked findings."""

    name: str
    duration_s: float | None
    share_of_total: float | None = None
    """This kernel's share of the summed kernel time (None without durations)."""
    recoverable_s: float | None = None
    """ESTIMATE: best finding's recoverable time, s."""
    findings: list[Finding] = Field(default_factory=list)
    skipped: list[SkippedRule] = Field(default_factory=list)
    roofline: Roofline | None = None
    profile: KernelProfile
