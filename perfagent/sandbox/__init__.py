"""The sandbox: the one place that runs untrusted candidate (and reference) code, in a child process.

- ``runner.run_worker`` (parent side) starts ``python -m perfagent.sandbox.worker`` with a request and
  turns every way the child can end (crash, hang, forged result) into data.
- ``worker`` (child side) runs the request's job from the job registry (``jobs``, filled by
  verification and timing) under the ``harness``: guarded calls, per-call watchdog, progress lines;
  ``integrity`` notices monkey-patched harness functions and leftover threads.
- ``wire``: the request and result files (pydantic), with the ``Check``s and ``TimingSamples`` they carry.

Verification and timing build on this package and register
their worker-side protocols as jobs; the sandbox imports neither. Importing it does not import torch.
"""

from __future__ import annotations

from perfagent.sandbox.runner import run_worker
from perfagent.sandbox.wire import Check, TimingSamples, WorkerRequest, WorkerResult
from perfagent.sandbox.worker_outcome import WorkerOutcome

__all__ = ["Check", "TimingSamples", "WorkerOutcome", "WorkerRequest", "WorkerResult", "run_worker"]
