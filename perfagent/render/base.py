"""The renderer interface: a ``RunRecord`` in, a string out.

Every output format (text, JSON, Markdown, HTML) implements ``Renderer``. Renderers are pure: they
never write files, read the clock or look at the terminal; options such as colour and width are
given to the constructor. ``perfagent.render.OutputFormat`` picks one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from perfagent.records import RunRecord

__all__ = ["Renderer"]


class Renderer(ABC):
    """Turns a ``RunRecord`` into the text of one output format."""

    @abstractmethod
    def render(self, record: RunRecord) -> str:
        """Render ``record``.

        Args:
            record: the run to show (a diagnosis or an optimization run).

        Returns:
            The whole document, ending with a newline where the format allows one.
        """
