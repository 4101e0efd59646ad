"""HTML: one self-contained, parseable page with every record string escaped."""

from __future__ import annotations

import base64

import lxml.html  # type: ignore[import-untyped]

import perfagent
from perfagent.records import RunRecord
from perfagent.render import OutputFormat, render
from profilers.model import KernelProfile
from tests.conftest import EXAMPLE_REPORTS
from tests.render.records import COALESCING_TITLE, NOTE


def test_html_parses_and_has_the_content(counters: RunRecord) -> None:
    page = render(counters, OutputFormat.HTML)
    assert page.startswith("<!DOCTYPE html>")
    doc = lxml.html.document_fromstring(page)
    text = doc.text_content()
    assert COALESCING_TITLE in text
    assert NOTE in text
    assert "DRAM-bound: 2.9 TB/s = 86.7 % of 3.35 TB/s peak" in text
    assert "estimated speed-up ≈ 1.8× (estimate:" in text
    assert len(doc.xpath("//section[@class='kernel']")) == 2
    # One evidence table per finding (3 findings, all with evidence).
    assert len(doc.xpath("//table[@class='evidence']")) == 3
    first = doc.xpath("//table[@class='evidence']")[0]
    cells = [td.text_content() for td in first.xpath(".//tbody/tr[1]/td")]
    assert cells[:4] == ["global_load_bytes_per_sector", "8", "< 16", "B"]


def test_html_is_self_contained(counters: RunRecord) -> None:
    page = render(counters, OutputFormat.HTML)
    doc = lxml.html.document_fromstring(page)
    assert doc.xpath("//style")
    assert not doc.xpath("//script | //link")
    sources = [img.get("src") for img in doc.xpath("//img")]
    assert len(sources) == 1
    assert sources[0].startswith("data:image/png;base64,")
    assert base64.b64decode(sources[0].split(",", 1)[1]).startswith(b"\x89PNG")
    assert "http://" not in page
    assert "https://" not in page


def test_html_escapes_kernel_names(static: RunRecord) -> None:
    page = render(static, OutputFormat.HTML)
    assert "void k&lt;float&gt;(float*)" in page
    assert "k<float>" not in page
    doc = lxml.html.document_fromstring(page)
    assert "void k<float>(float*)" in doc.text_content()
    assert "STATIC ANALYSIS" in doc.text_content()
    assert not doc.xpath("//img")


def test_html_escapes_hostile_text(counters: RunRecord) -> None:
    name = 'void k<float>(float*) </section><script>alert("x")</script>'
    kernel = counters.kernels[0]
    odd = kernel.model_copy(
        update={
            "name": name,
            "profile": KernelProfile(name=name, base_name="k<T>", device=kernel.profile.device),
        }
    )
    record = counters.model_copy(update={"kernels": [odd], "target": "a&b<c>.ncu-rep", "notes": ["<b>n</b>"]})
    page = render(record, OutputFormat.HTML)
    doc = lxml.html.document_fromstring(page)
    assert not doc.xpath("//script")
    assert name in doc.text_content()
    assert "<b>n</b>" in doc.text_content()
    assert "a&b<c>.ncu-rep" in doc.xpath("//title")[0].text_content()


def test_html_transpose_report_has_a_bandwidth_picture() -> None:
    """A recorded transpose (0 FLOP): no picture before issue 10, now the DRAM bandwidth bars."""
    record = perfagent.diagnose(EXAMPLE_REPORTS / "01_transpose_naive.ncu-rep")
    doc = lxml.html.document_fromstring(render(record, OutputFormat.HTML))
    (img,) = doc.xpath("//figure[contains(@class, 'chart')]/img")
    assert img.get("alt") == "DRAM bandwidth chart"
    assert base64.b64decode(img.get("src").split(",", 1)[1]).startswith(b"\x89PNG")
    caption = doc.xpath("//figure/figcaption")[0].text_content()
    assert "[1] transpose_naive: 596 GB/s = 12.4 % of 4.81 TB/s DRAM peak" in caption
    assert "[2] transpose_tiled_padded: 3.52 TB/s = 73.2 % of 4.81 TB/s DRAM peak" in caption
    assert "No roofline chart" not in doc.text_content()
