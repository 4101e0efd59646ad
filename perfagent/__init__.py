"""perfagent: profiler-driven GPU kernel diagnosis and optimization.

Library API (the CLI and the TUI are thin clients of it)::

    import perfagent
    record = perfagent.diagnose("examples/cuda/transpose_naive.ncu-rep")
    for kernel in record.kernels:
        print(kernel.name, kernel.findings[0].title)
"""

from __future__ import annotations

from perfagent._version import __version__
from perfagent.api import diagnose, load, profile
from perfagent.models import (
    Evidence,
    Finding,
    KernelDiagnosis,
    KernelProfile,
    Metrics,
    Profile,
    Roofline,
)
from perfagent.optimize.api import optimize
from perfagent.records import RunRecord

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
