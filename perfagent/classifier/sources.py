"""Attach the profiler's source lines (hot lines, rule markers) to the findings they explain."""

from __future__ import annotations

from profilers.model import Finding, KernelProfile, SourceLine

# Words in a profiler's source-marker message that tie it to a category.
_KEYWORDS = {
    "global-coalescing": ("uncoalesced", "sector", "excessive", "global"),
    "shared-bank-conflicts": ("bank", "shared", "wavefront"),
    "warp-divergence": ("diverg", "branch"),
    "register-spills": ("local", "spill"),
    "latency-bound": ("stall", "scoreboard", "latency"),
}
HOT_LINES = 5


def attach_source_lines(findings: list[Finding], kernel: KernelProfile) -> list[Finding]:
    """Give each finding the source lines whose marker mentions its category; the top finding
    also gets the hottest sampled lines when nothing matched."""
    if not kernel.source_lines or not findings:
        return findings
    out: list[Finding] = []
    for i, f in enumerate(findings):
        words = _KEYWORDS.get(f.category, ())
        lines = [s for s in kernel.source_lines if s.note and any(w in s.note.lower() for w in words)]
        if not lines and i == 0:
            lines = _hottest(kernel.source_lines)
        out.append(f.model_copy(update={"source_lines": lines[:10]}) if lines else f)
    return out


def _hottest(lines: list[SourceLine]) -> list[SourceLine]:
    sampled = [s for s in lines if s.samples]
    return sorted(sampled, key=lambda s: s.samples or 0.0, reverse=True)[:HOT_LINES]
