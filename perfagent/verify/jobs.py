"""Verification's worker jobs and their typed request, registered with the sandbox's job registry.

Importing this module registers the jobs (the parent imports it through ``verify.api``; the worker
imports it by the name the job carries). It does not import torch: the protocols it names load only in
the worker.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from perfagent.sandbox.jobs import Job, register
from perfagent.sandbox.wire import Tolerance, WorkerRequest


class VerifyRequest(WorkerRequest):
    """Verify a candidate against its reference."""

    job: Literal["verify-kernelbench", "verify-cuda-kernel"]
    seeds: int = 5
    """Number of seeds; each gives a get_inputs() draw and a re-drawn distribution."""
    tolerance: Tolerance = Field(default_factory=Tolerance)


KERNELBENCH = register(
    Job(
        name="verify-kernelbench",
        mode="verify",
        request_type=VerifyRequest,
        registered_by=__name__,
        entry=f"{__package__}.kernelbench_protocol:run_kernelbench",
    )
)
CUDA_KERNEL = register(
    Job(
        name="verify-cuda-kernel",
        mode="verify",
        request_type=VerifyRequest,
        registered_by=__name__,
        entry=f"{__package__}.cuda_protocol:run_cuda_kernel",
    )
)
