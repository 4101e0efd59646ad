"""perfagent: profiler-driven GPU kernel diagnosis and optimization.

Library API (the CLI and the TUI are thin clients of it)::

    import perfagent
    record = perfagent.diagnose("examples/cuda/transpose_naive.ncu-rep")
    for kernel in record.kernels:
        print(kernel.name, kernel.findings[0].title)
"""

from __future__ import annotations

__version__ = "0.1.0"
