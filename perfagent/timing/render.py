"""Text rendering of a ``BenchResult`` (JSON is ``model_dump_json``)."""

from __future__ import annotations

from perfagent.timing.models import BenchEntry, BenchResult


def fmt_time(seconds: float) -> str:
    """'1.234 ms', '12.3 us', '2.01 s'."""
    if seconds >= 1:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds * 1e6:.2f} us"


def fmt_rate(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.1f} {prefix}{unit}"
    return f"{value:.1f} {unit}"


def _row(kind: str, entry: BenchEntry) -> str:
    t = entry.timing
    roof = entry.roofline
    bw = fmt_rate(roof.achieved_bytes_per_s if roof else None, "B/s")
    fl = fmt_rate(roof.achieved_flops_per_s if roof else None, "FLOP/s")
    pct = f"{roof.pct_of_roofline:.1f} %" if roof and roof.pct_of_roofline is not None else "-"
    return f"{kind:<10} {fmt_time(t.median_s):>11} {fmt_time(t.iqr_s):>11} {bw:>12} {fl:>14} {pct:>9}   {entry.workload}"


def render_text(result: BenchResult) -> str:
    """Times, achieved rates, % of roofline, the comparison and flags."""
    how = (
        "CUDA events around the call queued behind the L2 flush (GPU time, no host latency)"
        if result.timer == "cuda-events"
        else "perf_counter (CPU timing)"
    )
    flush = (
        f", L2 flushed ({result.l2_flush_bytes // (1024 * 1024)} MiB zeroed)" if result.l2_flush_bytes else ""
    )
    lines = [
        f"device     {result.device_name or result.device} ({result.device})",
        f"timing     {how}{flush}; {_rounds(result)}, {result.warmup} warm-up calls",
        "",
        f"{'':<10} {'median':>11} {'IQR':>11} {'bandwidth':>12} {'FLOP rate':>14} {'% roofline':>9}",
        _row("baseline", result.baseline),
    ]
    if result.baseline_repeat is not None:
        r = result.baseline_repeat
        lines.append(f"{'(repeat)':<10} {fmt_time(r.median_s):>11} {fmt_time(r.iqr_s):>11}")
    if result.candidate is not None:
        lines.append(_row("candidate", result.candidate))
    roof = result.baseline.roofline
    if roof is not None and roof.sol_time_s is not None:
        lines.append(
            f"speed of light {fmt_time(roof.sol_time_s)} ({roof.bound}-bound; peaks {roof.peaks_source})"
        )
    c = result.comparison
    if c is not None:
        lines.append("")
        if c.significant:
            verdict = f"significant: {c.verdict}"
        else:
            verdict = "within noise: no change"
        lines.append(
            f"speed-up   {c.speedup:.3f}x — {verdict} (noise threshold {100 * c.noise_threshold:.1f} %, "
            f"baseline drift {100 * c.baseline_drift:.1f} %)"
        )
    lines += _compile_lines(result)
    lines.append(f"flags      {', '.join(result.flags) if result.flags else 'none'}")
    if result.notes:
        lines.append("notes:")
        lines.extend(f"  - {n}" for n in result.notes)
    return "\n".join(lines)


def _compile_lines(result: BenchResult) -> list[str]:
    """The torch.compile baseline: its time and speed-up over eager, and the candidate's over it."""
    compiled = result.compiled
    if compiled is None:
        return []
    if compiled.time_s is None:
        return [f"torch.compile  unavailable: {compiled.unavailable or 'not timed'}"]
    line = f"torch.compile  {fmt_time(compiled.time_s)} ({compiled.mode} mode; {compiled.speedup_over_eager:.3f}x over eager"
    line += f", {compiled.timer} in its own run; compile time excluded)"
    lines = [line]
    if result.speedup_over_compile is not None:
        lines.append(f"speed-up over torch.compile  {result.speedup_over_compile:.3f}x")
    return lines


def _rounds(result: BenchResult) -> str:
    """'N interleaved rounds', and why when the time budget took fewer than asked for."""
    said = f"{result.runs} interleaved rounds"
    if result.runs_asked is not None and result.runs < result.runs_asked:
        said += f" (of {result.runs_asked}: the {result.timing_budget_s or 0:g} s timing budget was filled)"
    return said
