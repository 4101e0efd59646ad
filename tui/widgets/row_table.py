"""A row-cursor table whose Home and End go to the first and the last row."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import DataTable


class RowTable(DataTable[Text]):
    """``DataTable`` with Home/End moving the row cursor (Textual's own Home/End scroll sideways)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("home", "scroll_top", "First row", show=False),
        Binding("end", "scroll_bottom", "Last row", show=False),
    ]
