"""Workloads: what the user pointed perfagent at, one ``Workload`` class per kind.

- ``base.Workload`` — the questions every kind answers (``describe``, ``is_recorded``, ``runs_on_cpu``,
  ``verified_by``, ``timed_by``) instead of callers comparing ``kind`` strings.
- ``model`` — what verification and timing run: ``KernelBenchModel``, ``LaunchSpecKernel``, ``CudaProgram``,
  ``TritonScript``, ``PythonScript`` (pydantic: they cross into the worker).
- ``describe`` — ``describe_target``: the one classification of whatever a command was pointed at (reports,
  saved runs, sources, commands) into a ``perfagent.target.TargetDescription``, or ``BadInput`` with the
  next step; a description says, per capability, what cannot be done with the target and why.
- ``targets`` — ``ProfileTarget``: a description with the way ``profile``/``diagnose`` read or run its kind.
- ``optimizable`` — what the optimize loop rewrites (``LaunchSpecTarget``, ``KernelBenchTarget``,
  ``TritonScriptTarget``) with its oracle and candidates.
- ``detect`` — paths → reference / candidate workloads, and ``describe_source``: the description of a
  source the loop may rewrite (``.cu``, launch spec, Python), read on first use by ``describe``.
- ``registry`` — the one place a description's kind chooses its code: ``optimize_workload`` (the loop's
  ``OptimizeWorkload``) and ``profile_target`` (the ``ProfileTarget`` a profiler reads or runs), and
  ``resolve_profile_target`` (describe once, then choose).
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
    from perfagent.workloads.describe import describe_target
    from perfagent.workloads.detect import describe_source, detect_candidate, detect_reference, resolve
    from perfagent.workloads.model import RunnableWorkload, WorkloadKind
    from perfagent.workloads.optimizable import (
        KernelBenchTarget,
        LaunchSpecTarget,
        OptimizeWorkload,
        TritonScriptTarget,
    )
    from perfagent.workloads.registry import resolve_profile_target
    from perfagent.workloads.targets import ProfileTarget

# Imported on first use (PEP 562): reading a report needs only `describe` and `targets`, not the optimize
# loop's launch specs, KernelBench and Triton inspection (CLI start-up, tests/unit/test_import_cost.py);
# `describe` reaches `detect.describe_source` through this table when the target is a source.
_LAZY = {
    "Workload": "perfagent.workloads.base",
    "describe_target": "perfagent.workloads.describe",
    "describe_source": "perfagent.workloads.detect",
    "detect_candidate": "perfagent.workloads.detect",
    "detect_reference": "perfagent.workloads.detect",
    "resolve": "perfagent.workloads.detect",
    "RunnableWorkload": "perfagent.workloads.model",
    "WorkloadKind": "perfagent.workloads.model",
    "OptimizeWorkload": "perfagent.workloads.optimizable",
    "LaunchSpecTarget": "perfagent.workloads.optimizable",
    "KernelBenchTarget": "perfagent.workloads.optimizable",
    "TritonScriptTarget": "perfagent.workloads.optimizable",
    "ProfileTarget": "perfagent.workloads.targets",
    "resolve_profile_target": "perfagent.workloads.registry",
}

__all__ = [
    "KernelBenchTarget",
    "LaunchSpecTarget",
    "OptimizeWorkload",
    "TritonScriptTarget",
    "ProfileTarget",
    "RunnableWorkload",
    "Workload",
    "WorkloadKind",
    "describe_source",
    "describe_target",
    "detect_candidate",
    "detect_reference",
    "resolve",
    "resolve_profile_target",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'perfagent.workloads' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
