"""Profiler backends behind one Protocol (``profilers.base.Profiler``).

Listing names imports nothing heavy; ``get_profiler`` imports the backend on demand.
This package knows nothing of ``perfagent``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from profilers.base import Profiler

# name -> "module:factory"
_BUILTIN: dict[str, str] = {
    "ncu": "profilers.ncu.profiler:NcuProfiler",
    "static": "profilers.static.profiler:StaticProfiler",
    "rocprof": "profilers.rocprof.profiler:RocprofProfiler",
}


def available_profilers() -> list[str]:
    """Names of the built-in backends (no backend module is imported)."""
    return list(_BUILTIN)


def get_profiler(name: str) -> Profiler:
    """Instantiate the backend called ``name``.

    Raises:
        KeyError: unknown name (the message lists the known ones).
    """
    try:
        target = _BUILTIN[name]
    except KeyError:
        raise KeyError(f"unknown profiler '{name}'; known: {', '.join(_BUILTIN)}") from None
    module_name, factory = target.split(":")
    module = importlib.import_module(module_name)
    profiler: Profiler = getattr(module, factory)()
    return profiler
