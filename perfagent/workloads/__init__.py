"""Workloads: what perfagent runs to verify and time a kernel.

- ``model.Workload`` — the resolved workload (kind, path, spec, entry, backend).
- ``detect`` — paths → reference / candidate ``Workload`` (or ``BadInput`` with the next step).
- ``launch_spec`` — the TOML launch contract of a bare ``__global__`` kernel; ``expr`` evaluates
  its expressions safely.
- ``kernelbench`` / ``triton_script`` — static inspection of Python sources.
- ``cuda_launch`` — NVRTC compile + launch through ``cuda.core`` (GPU worker only, imported lazily).

Nothing here imports torch, triton or cuda at import time.
"""

from __future__ import annotations

from perfagent.workloads.detect import detect_candidate, detect_reference
from perfagent.workloads.model import Workload, WorkloadKind

__all__ = ["Workload", "WorkloadKind", "detect_candidate", "detect_reference"]
