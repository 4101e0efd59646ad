"""Markdown: the same content, evidence as tables, the chart inline as a data URI."""

from __future__ import annotations

import base64
import re

import perfagent
from perfagent.records import RunRecord
from perfagent.render import OutputFormat, render
from perfagent.render.markdown import md_code, md_escape
from tests.conftest import EXAMPLE_REPORTS
from tests.render.records import COALESCING_TITLE, NOTE, STATIC_NOTE

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


def test_markdown_lists_kernels_without_flops_as_bandwidth(with_copy: RunRecord) -> None:
    md = render(with_copy, OutputFormat.MARKDOWN)
    assert len(IMAGE.findall(md)) == 1
    assert (
        "achieved DRAM bandwidth vs the DRAM roof: \\[3\\] copy_kernel: 3 TB/s = 89.6 % of 3.35 TB/s DRAM peak."
        in md
    )
    assert "Not on the chart" not in md


def test_markdown_transpose_report_has_a_bandwidth_picture() -> None:
    """A recorded transpose (0 FLOP): no picture before issue 10, now the DRAM bandwidth bars."""
    record = perfagent.diagnose(EXAMPLE_REPORTS / "01_transpose_naive.ncu-rep")
    md = render(record, OutputFormat.MARKDOWN)
    assert "No roofline chart" not in md
    (png,) = IMAGE.findall(md)
    assert base64.b64decode(png).startswith(b"\x89PNG")
    assert "![DRAM bandwidth chart](data:image/png;base64," in md
    assert "\\[1\\] transpose_naive: 596 GB/s = 12.4 % of 4.81 TB/s DRAM peak" in md
    assert "\\[2\\] transpose_tiled_padded: 3.52 TB/s = 73.2 % of 4.81 TB/s DRAM peak" in md


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
