"""perfagent: profiler-driven GPU kernel diagnosis and optimization.

Library API (the CLI and the TUI are thin clients of it)::

    import perfagent
    record = perfagent.diagnose("examples/cuda/transpose_naive.ncu-rep")
    for kernel in record.kernels:
        print(kernel.name, kernel.findings[0].title)

The names below are imported on first use (PEP 562 ``__getattr__``): ``import perfagent`` loads only the
version, so the CLI starts fast and a command imports only what it runs (tests/unit/test_import_cost.py).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from perfagent._version import __version__

if TYPE_CHECKING:
    from perfagent.api import diagnose, load, profile
    from perfagent.optimize.api import optimize
    from perfagent.records import RunRecord
    from profilers.model import (
        Evidence,
        Finding,
        KernelDiagnosis,
        KernelProfile,
        Metrics,
        Profile,
        Roofline,
    )

_LAZY = {
    # `optimize` is the subpackage perfagent/optimize/, callable as the library function (its __init__)
    "diagnose": "perfagent.api",
    "load": "perfagent.api",
    "profile": "perfagent.api",
    "RunRecord": "perfagent.records",
    **dict.fromkeys(
        ("Evidence", "Finding", "KernelDiagnosis", "KernelProfile", "Metrics", "Profile", "Roofline"),
        "profilers.model",
    ),
}

__all__ = [
    "Evidence",
    "Finding",
    "KernelDiagnosis",
    "KernelProfile",
    "Metrics",
    "Profile",
    "Roofline",
    "RunRecord",
    "__version__",
    "diagnose",
    "load",
    "optimize",
    "profile",
]


def __getattr__(name: str) -> Any:
    if name == "optimize":
        return importlib.import_module("perfagent.optimize")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'perfagent' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
