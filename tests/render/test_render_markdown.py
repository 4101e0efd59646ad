"""Markdown: the same content, evidence as tables, the chart inline as a data URI."""

from __future__ import annotations

import base64
import re

from perfagent.models import RunRecord
from perfagent.render import OutputFormat, render
from perfagent.render.markdown import md_code, md_escape

from .records import COALESCING_TITLE, NOTE, STATIC_NOTE

IMAGE = re.compile(r"!\[[^\]]*\]\(data:image/png;base64,([A-Za-z0-9+/=]+)\)")


def test_markdown_has_evidence_tables_and_content(counters: RunRecord) -> None:
    md = render(counters, OutputFormat.MARKDOWN)
    assert md.startswith("# perfagent diagnosis")
    assert "| Metric | Value | Threshold | Unit | Note |" in md
    assert "| `global_load_bytes_per_sector` | 8 | \\< 16 | B |  |" in md
    assert "| `dram_bytes_per_s` | 2.9 | \\> 2.68 | TB/s |" in md
    assert COALESCING_TITLE in md
    assert "estimated speed-up ≈ 1.8× (estimate:" in md
    assert NOTE in md
    assert "DRAM-bound: 2.9 TB/s = 86.7 % of 3.35 TB/s peak" in md
    assert "`void stencil_column<float>(float*, const float*, int, int)`" in md
    assert "**Nsight Compute says:**" in md
    assert "skipped: bank-conflicts rule" in md


def test_markdown_embeds_the_chart(counters: RunRecord) -> None:
    md = render(counters, OutputFormat.MARKDOWN)
    assert "data:image/png;base64," in md
    match = IMAGE.search(md)
    assert match is not None
    assert base64.b64decode(match.group(1)).startswith(b"\x89PNG")


def test_markdown_lists_kernels_not_on_the_chart(with_copy: RunRecord) -> None:
    md = render(with_copy, OutputFormat.MARKDOWN)
    assert "Not on the chart: \\[3\\] copy_kernel (no FLOPs measured" in md


def test_markdown_static(static: RunRecord) -> None:
    md = render(static, OutputFormat.MARKDOWN)
    assert "data:image/png" not in md
    assert "No roofline chart: static mode measures nothing." in md
    assert "**Mode: static.** STATIC ANALYSIS" in md
    assert md_escape(STATIC_NOTE) in md
    assert "`void k<float>(float*)`" in md


def test_md_escape_and_code() -> None:
    assert md_escape("a|b <t> *x*") == "a\\|b \\<t\\> \\*x\\*"
    assert md_escape("sm_90") == "sm_90"
    assert md_escape("line\nbreak") == "line break"
    assert md_code("a`b") == "``a`b``"
    assert md_code("k<float>") == "`k<float>`"
