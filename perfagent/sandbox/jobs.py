"""The job registry: what the worker can be asked to do, filled from above.

Verification and timing register their jobs (``register``) from a ``jobs`` module of their own;
the sandbox names none of them, not even as a string. A job carries its typed request (a ``WorkerRequest`` subclass), the module that registered it
(the worker imports that module, which fills the registry in the child too) and its entry
(``"module:function"``, imported only in the worker, where torch may load).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from perfagent.sandbox.wire import WorkerRequest

Mode = Literal["verify", "bench"]


@dataclass(frozen=True)
class Job:
    """One kind of work the worker does."""

    name: str
    """What a request's ``job`` says, e.g. 'verify-kernelbench'."""
    mode: Mode
    """What the job is for, as messages name it ('the verify worker')."""
    request_type: type[WorkerRequest]
    """The job's request model; the worker validates the request file with it."""
    registered_by: str
    """The module whose import registers this job (the worker imports it before looking the job up)."""
    entry: str
    """``"module:function"``: a function of the worker's ``Harness`` returning its ``WorkerResult``."""


_REGISTRY: dict[str, Job] = {}


def register(job: Job) -> Job:
    """Add ``job`` (the same job registered twice is one entry; another under its name is a bug)."""
    known = _REGISTRY.setdefault(job.name, job)
    if known != job:
        raise ValueError(f"job {job.name!r} is registered twice, differently")
    return job


def job_for(name: str) -> Job:
    """The registered job called ``name``.

    Raises:
        KeyError: no module registered such a job (in the worker: its module was not imported).
    """
    return _REGISTRY[name]


def registered() -> dict[str, Job]:
    """Every job registered so far, by name."""
    return dict(_REGISTRY)


def job_of(request: WorkerRequest) -> Job:
    """The job that ``request`` asks for, checked against the request's type.

    Raises:
        KeyError: no such job; TypeError: the request is not that job's request type.
    """
    job = job_for(request.job)
    if not isinstance(request, job.request_type):
        raise TypeError(f"job {job.name} takes a {job.request_type.__name__}, got {type(request).__name__}")
    return job


def entry_point(job: Job) -> Callable[[Any], Any]:
    """The function that runs ``job`` (its module imported now).

    Raises:
        ImportError, AttributeError: the entry names a module or function that does not exist.
    """
    module_name, _, function = job.entry.partition(":")
    fn: Callable[[Any], Any] = getattr(importlib.import_module(module_name), function)
    return fn
