"""perfagent: profiler-driven GPU kernel diagnosis and optimization.

Library API (the CLI and the TUI are thin clients of it)::

    import perfagent
    record = perfagent.diagnose("examples/cuda/transpose_naive.ncu-rep")
    for kernel in record.kernels:
        print(kernel.name, kernel.findings[0].title)
"""

from __future__ import annotations

__version__ = "0.1.0"

from perfagent.api import diagnose, load, profile  # noqa: E402
from perfagent.models import (  # noqa: E402
    Evidence,
    Finding,
    KernelDiagnosis,
    KernelProfile,
    Metrics,
    Profile,
    Roofline,
    RunRecord,
)
from perfagent.optimize.api import optimize  # noqa: E402

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
