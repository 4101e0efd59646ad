"""Screens of the perfagent TUI: loading, kernel list, kernel detail, optimize walkthrough, saved optimize
run, help."""

from __future__ import annotations

from tui.screens.help import HelpScreen
from tui.screens.kernel_detail import KernelDetailScreen
from tui.screens.kernels import KernelsScreen
from tui.screens.loading import LoadingScreen
from tui.screens.optimize_run import OptimizeRunScreen
from tui.screens.walkthrough import WalkthroughScreen

__all__ = [
    "HelpScreen",
    "KernelDetailScreen",
    "KernelsScreen",
    "LoadingScreen",
    "OptimizeRunScreen",
    "WalkthroughScreen",
]
