"""Widgets of the perfagent TUI: each shows one view-model (see ``tui.viewmodels``) and holds no logic."""

from __future__ import annotations

from tui.widgets.bars import BarPanel
from tui.widgets.candidates import CandidateReview
from tui.widgets.diff import DiffView
from tui.widgets.evidence import EvidenceTable
from tui.widgets.findings import FindingDetail, FindingsList
from tui.widgets.kernel_table import KernelTable
from tui.widgets.roofline import RooflineChart
from tui.widgets.row_table import RowTable
from tui.widgets.source import SourcePane
from tui.widgets.wrapped_log import WrappedLog

__all__ = [
    "BarPanel",
    "CandidateReview",
    "DiffView",
    "EvidenceTable",
    "FindingDetail",
    "FindingsList",
    "KernelTable",
    "RooflineChart",
    "RowTable",
    "SourcePane",
    "WrappedLog",
]
