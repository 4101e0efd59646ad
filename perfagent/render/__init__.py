"""Renderers: one per output format, chosen by ``OutputFormat``.

``render(record, fmt)`` is pure (record in, string out); ``write_output(text, path)`` is the only
function here that touches the outside world. Formats:

- ``text``: rich-rendered report for a terminal (colour only when asked) or a ``.txt`` file;
- ``json``: exactly ``RunRecord.model_dump_json(indent=2)``, the machine-readable contract;
- ``md``: the same content as the text report in Markdown, evidence as tables;
- ``html``: one self-contained page with inline CSS.

``md`` and ``html`` embed the roofline chart as a ``data:image/png;base64,`` URI rather than writing a
PNG beside the output, so each report is a single file that survives being moved, mailed or pasted.
"""

from __future__ import annotations

import importlib
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, assert_never

from perfagent.render.base import Renderer
from perfagent.render.json import JsonRenderer

if TYPE_CHECKING:
    from perfagent.records import RunRecord
    from perfagent.render.html import HtmlRenderer
    from perfagent.render.json import JsonRenderer
    from perfagent.render.markdown import MarkdownRenderer
    from perfagent.render.text import TextRenderer

# Each renderer is imported when its format is asked for: the text one loads rich, md/html the chart code;
# `--format json` needs neither (CLI start-up, tests/unit/test_import_cost.py).
_RENDERERS = {
    "TextRenderer": "perfagent.render.text",
    "JsonRenderer": "perfagent.render.json",
    "MarkdownRenderer": "perfagent.render.markdown",
    "HtmlRenderer": "perfagent.render.html",
}


def __getattr__(name: str) -> Any:
    module = _RENDERERS.get(name)
    if module is None:
        raise AttributeError(f"module 'perfagent.render' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "HtmlRenderer",
    "JsonRenderer",
    "MarkdownRenderer",
    "OutputFormat",
    "Renderer",
    "TextRenderer",
    "render",
    "write_output",
]


class OutputFormat(StrEnum):
    """The ``--format`` choices; the value is what users type (``str(fmt)`` gives it back).

    A ``StrEnum`` (a ``str, Enum`` subclass), so members compare equal to their values.
    """

    TEXT = "text"
    JSON = "json"
    MARKDOWN = "md"
    HTML = "html"

    @classmethod
    def _missing_(cls, value: object) -> OutputFormat | None:
        """Accept the obvious spellings: 'markdown', 'txt', 'htm', any case."""
        aliases = {"markdown": cls.MARKDOWN, "txt": cls.TEXT, "htm": cls.HTML}
        if isinstance(value, str):
            lowered = value.lower()
            for member in cls:
                if member.value == lowered:
                    return member
            return aliases.get(lowered)
        return None

    @property
    def suffix(self) -> str:
        """The usual file extension for this format (``.md``)."""
        return ".txt" if self is OutputFormat.TEXT else f".{self.value}"

    def renderer(self, *, color: bool = False, width: int | None = None) -> Renderer:
        """The renderer for this format.

        Args:
            color: ANSI colour (text format only; the caller decides, e.g. from ``isatty``).
            width: wrap width in columns (text format only).

        Returns:
            A ``Renderer`` whose ``render(record)`` returns the document.
        """
        if self is OutputFormat.TEXT:
            # each renderer loads with its format: text pulls in rich
            from perfagent.render.text import TextRenderer

            return TextRenderer(color=color, width=width)
        if self is OutputFormat.JSON:
            return JsonRenderer()
        if self is OutputFormat.MARKDOWN:
            # markdown and html pull in the chart's plan and drawing
            from perfagent.render.markdown import MarkdownRenderer

            return MarkdownRenderer()
        if self is OutputFormat.HTML:
            # as markdown: the chart's plan and drawing
            from perfagent.render.html import HtmlRenderer

            return HtmlRenderer()
        assert_never(self)


def render(record: RunRecord, fmt: OutputFormat, *, color: bool = False, width: int | None = None) -> str:
    """Render ``record`` in ``fmt``.

    Args:
        record: the run to show.
        fmt: the output format.
        color: ANSI colour for the text format (never for the others).
        width: wrap width for the text format.

    Returns:
        The document as a string.
    """
    return fmt.renderer(color=color, width=width).render(record)


def write_output(text: str, path: str) -> None:
    """Write a rendered document to ``path``, or to stdout when ``path`` is ``-``.

    A trailing newline is added if missing. Parent folders are created; an existing file is
    overwritten (the CLI decides whether that is allowed, e.g. ``--force``).

    Args:
        text: the document.
        path: a file path, or ``-`` for standard output.

    Raises:
        OSError: the file cannot be written.
    """
    if not text.endswith("\n"):
        text += "\n"
    if path == "-":
        try:
            sys.stdout.write(text)
        except UnicodeEncodeError:  # a non-UTF-8 terminal: keep the report, lose the odd glyph
            encoding = sys.stdout.encoding or "ascii"
            sys.stdout.write(text.encode(encoding, errors="replace").decode(encoding))
        sys.stdout.flush()
        return
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
