"""What the worker can be asked to do: job name → the ``"module:function"`` that does it.

The worker resolves a request's job through this table with ``importlib`` (``entry_point``), so the
sandbox never imports the verification or timing code it runs, and a request can only name one of
these entries: the worker executes no function a request file spells out itself.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

JobName = Literal["verify-kernelbench", "verify-cuda-kernel", "bench"]
Mode = Literal["verify", "bench"]


@dataclass(frozen=True)
class Job:
    """One kind of work the worker does."""

    mode: Mode
    """What the job is for, as messages name it ('the verify worker')."""
    entry: str
    """``"module:function"``: a function of the worker's ``Harness`` returning its ``WorkerResult``."""


JOBS: dict[JobName, Job] = {
    "verify-kernelbench": Job("verify", "perfagent.verify.kernelbench_protocol:run_kernelbench"),
    "verify-cuda-kernel": Job("verify", "perfagent.verify.cuda_protocol:run_cuda_kernel"),
    "bench": Job("bench", "perfagent.timing.bench_job:run_bench"),
}


def entry_point(name: JobName) -> Callable[[Any], Any]:
    """The function that runs job ``name`` (its module imported now).

    Raises:
        KeyError: no such job.
        ImportError, AttributeError: the table names a module or function that does not exist.
    """
    module_name, _, function = JOBS[name].entry.partition(":")
    fn: Callable[[Any], Any] = getattr(importlib.import_module(module_name), function)
    return fn
