"""The format enum, the renderer interface and ``write_output``."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.records import RunRecord
from perfagent.render import (
    HtmlRenderer,
    JsonRenderer,
    MarkdownRenderer,
    OutputFormat,
    Renderer,
    TextRenderer,
    render,
    write_output,
)


def test_every_format_has_a_renderer(counters: RunRecord) -> None:
    expected = {
        OutputFormat.TEXT: TextRenderer,
        OutputFormat.JSON: JsonRenderer,
        OutputFormat.MARKDOWN: MarkdownRenderer,
        OutputFormat.HTML: HtmlRenderer,
    }
    assert set(expected) == set(OutputFormat)
    for fmt, cls in expected.items():
        renderer = fmt.renderer()
        assert isinstance(renderer, Renderer)
        assert type(renderer) is cls
        assert renderer.render(counters) == render(counters, fmt)


def test_values_and_aliases() -> None:
    assert [f.value for f in OutputFormat] == ["text", "json", "md", "html"]
    assert OutputFormat("md") is OutputFormat.MARKDOWN
    assert OutputFormat("markdown") is OutputFormat.MARKDOWN
    assert OutputFormat("HTML") is OutputFormat.HTML
    assert OutputFormat.MARKDOWN.suffix == ".md"
    assert OutputFormat.TEXT.suffix == ".txt"
    assert str(OutputFormat.JSON) == "json"
    with pytest.raises(ValueError):
        OutputFormat("yaml")


def test_render_is_pure(counters: RunRecord) -> None:
    before = counters.model_dump()
    for fmt in OutputFormat:
        assert render(counters, fmt) == render(counters, fmt)
    assert counters.model_dump() == before


def test_write_output_creates_parents(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "report.md"
    write_output("# hi", str(target))
    assert target.read_text(encoding="utf-8") == "# hi\n"
    write_output("µs\n", str(target))  # overwrites: the CLI decides the policy
    assert target.read_text(encoding="utf-8") == "µs\n"


def test_write_output_dash_is_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    write_output('{"kernels": []}', "-")
    assert capsys.readouterr().out == '{"kernels": []}\n'
