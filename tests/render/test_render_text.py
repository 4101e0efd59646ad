"""The text report: content a performance engineer needs, plain when piped."""

from __future__ import annotations

import re

from perfagent.records import RunRecord
from perfagent.render import OutputFormat, TextRenderer, render
from profilers.model import KernelDiagnosis, KernelProfile
from tests.render.records import COALESCING_TITLE, NOTE, OCCUPANCY_TITLE, STATIC_NOTE, TIMING_NOTE

ANSI = re.compile(r"\x1b\[")


def test_header_and_notes(counters: RunRecord) -> None:
    text = render(counters, OutputFormat.TEXT)
    assert "examples/cuda/stencil.ncu-rep" in text
    assert "ncu 2025.1.1" in text
    assert "counters" in text
    assert NOTE in " ".join(text.split())


def test_kernels_in_record_order_with_duration_and_share(counters: RunRecord) -> None:
    text = render(counters, OutputFormat.TEXT)
    assert text.index("stencil_column") < text.index("gemm_tiled")
    assert "48.2 µs mean × 100 launches = 4.82 ms · 81.4 % of total" in text
    assert "1.1 ms · 18.6 % of total" in text


def test_launch_device_roofline_occupancy(counters: RunRecord) -> None:
    flat = " ".join(render(counters, OutputFormat.TEXT, width=200).split())
    assert "grid 128×4096×1 (524,288 blocks)" in flat
    assert "block 32×8×1 (256 threads)" in flat
    assert "32 registers/thread" in flat
    assert "NVIDIA H100 80GB HBM3" in flat
    assert (
        "DRAM-bound: 2.9 TB/s = 86.7 % of 3.35 TB/s peak; speed of light 41.8 µs vs 48.2 µs measured" in flat
    )
    assert "FP32-bound: 15.6 TFLOP/s = 23.3 % of 66.9 TFLOP/s peak" in flat
    assert "theoretical 37.5 %, achieved 31.2 %; limited by registers" in flat


def test_findings_evidence_and_estimates(counters: RunRecord) -> None:
    text = render(counters, OutputFormat.TEXT, width=200)
    assert COALESCING_TITLE in text
    assert OCCUPANCY_TITLE in text
    assert "[HIGH] global-coalescing" in text
    # Evidence rows: metric, value, threshold with comparison, unit (SI-scaled: 48.2 µs, 2.9 TB/s).
    assert re.search(r"global_load_bytes_per_sector\s+8\s+< 16\s+B", text)
    assert re.search(r"duration_s\s+48\.2\s+µs\s+per launch", text)
    assert re.search(r"dram_bytes_per_s\s+2\.9\s+> 2\.68\s+TB/s", text)
    assert "estimated speed-up ≈ 1.8× (estimate: DRAM bytes × 8/32" in text
    assert "recoverable ≈ 2.14 ms of kernel time (36.2 % of the total) — estimate" in text
    assert "suggested transforms: coalesce-access, smem-tiling, vectorize-access" in text
    assert "stencil.cu:28  float up = in[x * n + (y - 1)];" in text


def test_findings_keep_the_record_order(counters: RunRecord) -> None:
    text = render(counters, OutputFormat.TEXT)
    assert text.index(COALESCING_TITLE) < text.index("At 86.7 % of DRAM peak") < text.index(OCCUPANCY_TITLE)


def test_skipped_rules_and_tool_findings(counters: RunRecord) -> None:
    flat = " ".join(render(counters, OutputFormat.TEXT).split())
    assert "skipped: bank-conflicts rule — shared-memory metrics not collected" in flat
    assert "Nsight Compute says:" in flat
    assert "Uncoalesced Global Accesses (optimization; est. 62.3 % of kernel time, global)" in flat
    # Secondary evidence stays compact: only the first sentence of ncu's message.
    assert "Check the L2 Theoretical Sectors" not in flat
    assert flat.index("Nsight Compute says:") < flat.index("skipped: bank-conflicts")


def test_static_mode_is_stated(static: RunRecord) -> None:
    text = render(static, OutputFormat.TEXT)
    flat = " ".join(text.split())
    assert "static" in text
    assert "STATIC ANALYSIS — no kernel was run" in flat
    assert STATIC_NOTE in flat
    assert "n/a (not measured)" in flat
    assert "255 registers/thread" in flat
    assert "local memory 64 B/thread" in flat
    assert "ptxas reports 64 bytes of register spills per thread" in flat


def test_timing_only_mode_is_stated(timing_only: RunRecord) -> None:
    flat = " ".join(render(timing_only, OutputFormat.TEXT).split())
    assert "TIMING ONLY" in flat
    assert TIMING_NOTE in flat
    assert "No findings" in flat


def test_plain_when_not_coloured_and_ansi_when_asked(counters: RunRecord) -> None:
    assert not ANSI.search(render(counters, OutputFormat.TEXT))
    assert ANSI.search(render(counters, OutputFormat.TEXT, color=True))


def test_width_is_respected_and_lines_are_not_padded(counters: RunRecord) -> None:
    text = TextRenderer(width=72).render(counters)
    assert max(len(line) for line in text.splitlines()) <= 72
    assert all(line == line.rstrip() for line in text.splitlines())
    assert text.endswith("\n")


def test_names_print_verbatim_not_as_markup(counters: RunRecord) -> None:
    name = "void k<float>(float[4]) [bold]x[/bold]"
    kernel = counters.kernels[0]
    odd = kernel.model_copy(
        update={
            "name": name,
            "profile": KernelProfile(name=name, base_name="k[bold]", device=kernel.profile.device),
        }
    )
    text = render(counters.model_copy(update={"kernels": [odd]}), OutputFormat.TEXT, width=200)
    assert name in text
    assert "k[bold]" in text


def test_empty_record() -> None:
    text = render(RunRecord(target="t", tool="ncu"), OutputFormat.TEXT)
    assert "No kernels" in text


def test_missing_values_show_na() -> None:
    bare = KernelDiagnosis(name="k", duration_s=None, profile=KernelProfile(name="k", base_name="k"))
    flat = " ".join(render(RunRecord(target="t", tool="ncu", kernels=[bare]), OutputFormat.TEXT).split())
    assert "grid n/a" in flat
    assert "registers/thread n/a" in flat
    assert "Roofline n/a" in flat
