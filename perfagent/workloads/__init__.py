"""Workloads: what the user pointed perfagent at, one ``Workload`` class per kind.

- ``base.Workload`` — the questions every kind answers (``describe``, ``is_recorded``, ``runs_on_cpu``,
  ``verified_by``, ``timed_by``) instead of callers comparing ``kind`` strings.
- ``model`` — what verification and timing run: ``KernelBenchModel``, ``LaunchSpecKernel``, ``CudaProgram``,
  ``TritonScript``, ``PythonScript`` (pydantic: they cross into the worker).
- ``targets`` — what ``profile``/``diagnose`` read or run (reports, saved runs, sources, commands) and
  ``resolve_target``.
- ``optimizable`` — what the optimize loop rewrites (``LaunchSpecTarget``, ``KernelBenchTarget``,
  ``TritonScriptTarget``) with its oracle and candidates.
- ``detect`` — paths → reference / candidate workloads, and ``describe_target``: an optimize target's one
  resolution into a ``perfagent.target.TargetDescription`` (or ``BadInput`` with the next step).
- ``registry`` — the one place a description's kind chooses its code: ``optimize_workload`` (the loop's
  ``OptimizeWorkload``) and ``profile_target`` (the ``ProfileTarget`` a profiler reads or runs).
- ``launch_spec`` — the TOML launch contract of a bare ``__global__`` kernel; ``launch_resolve`` evaluates
  it for one kernel file and parameter set (``expr`` evaluates its expressions safely).
- ``kernelbench`` / ``triton_script`` — static inspection of Python sources.
- ``inputs`` — seeded inputs (seeds, distributions, clones, allocator poisoning).
- ``cuda_launch`` — NVRTC compile + launch through ``cuda.core``; ``launch_prep`` — the launch preparation
  of a launch-spec kernel (compile, seeded inputs, poisoned outputs, arguments), written once.
- ``run_spec`` — ``python -m perfagent.workloads.run_spec``: launches a workload N times for a profiler.
- ``torch_free_harness`` — the same for a launch-spec kernel without torch (``numpy_inputs`` draws the
  inputs, ``nvrtc_kernel`` builds and launches); ``harness_choice`` says which of the two ncu starts.

Importing this package does not import torch, triton or cuda: ``inputs``, ``cuda_launch``,
``launch_prep`` and ``run_spec`` do, and only worker processes (``perfagent.sandbox``) and the torch
profiling harness import them; ``torch_free_harness`` and what it imports never do (an import-linter
contract).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from perfagent.workloads.base import Workload
    from perfagent.workloads.detect import describe_target, detect_candidate, detect_reference, resolve
    from perfagent.workloads.model import RunnableWorkload, WorkloadKind
    from perfagent.workloads.optimizable import OptimizeWorkload
    from perfagent.workloads.targets import ProfileTarget, resolve_target

# Imported on first use (PEP 562): `diagnose` needs only `targets`, not the optimize loop's launch specs,
# KernelBench and Triton inspection (CLI start-up, tests/unit/test_import_cost.py).
_LAZY = {
    "Workload": "perfagent.workloads.base",
    "describe_target": "perfagent.workloads.detect",
    "detect_candidate": "perfagent.workloads.detect",
    "detect_reference": "perfagent.workloads.detect",
    "resolve": "perfagent.workloads.detect",
    "RunnableWorkload": "perfagent.workloads.model",
    "WorkloadKind": "perfagent.workloads.model",
    "OptimizeWorkload": "perfagent.workloads.optimizable",
    "ProfileTarget": "perfagent.workloads.targets",
    "resolve_target": "perfagent.workloads.targets",
}

__all__ = [
    "OptimizeWorkload",
    "ProfileTarget",
    "RunnableWorkload",
    "Workload",
    "WorkloadKind",
    "describe_target",
    "detect_candidate",
    "detect_reference",
    "resolve",
    "resolve_target",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'perfagent.workloads' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
