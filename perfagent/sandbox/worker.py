"""The child-process entry point: ``python -m perfagent.sandbox.worker REQUEST.json`` (nonce on stdin).

Runs reference and candidate code that perfagent does not trust, so it lives in its own process:
a crash, an ``os._exit``, an illegal CUDA address or a hang ends this process, never perfagent.
It writes a ``WorkerResult`` JSON to the request file's ``result_path`` and leaves with ``os._exit``
(threads a candidate left behind cannot keep it alive). What it runs is the request's job, looked up
in the job registry (``jobs``) after importing the module that registers it: verification and timing
protocols live above the sandbox, which names none of them.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from pathlib import Path

from perfagent.sandbox.device import NoCudaDevice, resolve_device
from perfagent.sandbox.harness import CandidateFailure, Harness, ReferenceFailure, write_result
from perfagent.sandbox.jobs import entry_point, job_for
from perfagent.sandbox.watch import install, restrict
from perfagent.sandbox.wire import WorkerCall, WorkerRequest, WorkerResult


def _run_job(h: Harness[WorkerRequest]) -> WorkerResult:
    result = entry_point(job_for(h.request.job))(h)
    assert isinstance(result, WorkerResult), f"job {h.request.job} returned {type(result).__name__}"
    return result


_OWN_PACKAGE = (__package__ or "perfagent").split(".")[0]
"""The top package (``__package__``: ``__name__`` is ``__main__`` under ``python -m``)."""


def read_call(path: Path) -> tuple[WorkerCall, WorkerRequest]:
    """The request file and its job's typed request (the registering module imported first).

    The file is written by the parent before any user code runs; still, only a module of this
    package may be imported by name from it.
    """
    call = WorkerCall.model_validate_json(path.read_text())
    if call.registry.split(".")[0] != _OWN_PACKAGE:
        raise ValueError(f"the request names a job registry outside {_OWN_PACKAGE}: {call.registry}")
    importlib.import_module(call.registry)
    job = job_for(str(call.request.get("job")))
    return call, job.request_type.model_validate(call.request)


STANDBY_FLAG = "--standby"
"""``--standby MODULES REQUEST``: a worker started ahead (``perfagent.sandbox.standby``) imports MODULES
(comma-separated) first, then waits for its nonce: the parent writes REQUEST before it sends the nonce."""
_PRELOAD_OUTSIDE = ("torch", "cuda.core")
"""What a standby worker may import ahead besides this package's modules."""


def preload(modules: str) -> None:
    """Import a standby worker's modules before its request exists (only this package's, torch, cuda.core:
    the list comes from the command line, never from a file a candidate could write)."""
    for name in filter(None, modules.split(",")):
        if name.split(".")[0] != _OWN_PACKAGE and name not in _PRELOAD_OUTSIDE:
            raise ValueError(f"a standby worker imports only {_OWN_PACKAGE} modules ahead, not {name}")
        try:
            importlib.import_module(name)
        except ImportError:  # cuda.core missing: the job says so when it needs it, as without a standby
            if name not in _PRELOAD_OUTSIDE:
                raise


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    # No __pycache__ beside the problem or candidate: their folders are read-only to a confined worker,
    # and a forked worker inherits the warm server's flag, not PYTHONDONTWRITEBYTECODE from its request.
    sys.dont_write_bytecode = True
    if args[0] == STANDBY_FLAG:
        preload(args[1])
        args = args[2:]
    # the nonce first: a standby worker's request is written only then (a fresh one's is there already)
    nonce = sys.stdin.readline().strip()
    call, request = read_call(Path(args[0]))
    h = Harness(request=request, nonce=nonce, result_path=call.result_path, progress_path=call.progress_path)
    # Landlock binds the calling thread and those it starts later: apply it before the watchdog thread
    if call.watch.landlock:
        applied = restrict(call.watch)
        if not applied.startswith("Landlock ABI"):
            h.notes.append(applied)
    h.start()
    watch = install(call.watch, phase=lambda: h.last_progress)
    try:
        try:
            h.device, h.device_name = resolve_device(request.device)
        except NoCudaDevice as exc:
            raise ReferenceFailure(str(exc)) from None
        if request.device != "cpu" and h.device == "cpu":
            h.notes.append("no CUDA device visible to torch: ran on the CPU (Triton through its interpreter)")
        import torch  # noqa: F401 - imported before any user code, so user code cannot shadow it

        result = _run_job(h)
    except ReferenceFailure as exc:
        result = WorkerResult(
            nonce=nonce, device=h.device, device_name=h.device_name, bad_input=str(exc), notes=h.notes
        )
    except CandidateFailure as exc:
        result = WorkerResult(
            nonce=nonce, device=h.device, device_name=h.device_name, checks=[exc.check], notes=h.notes
        )
    except BaseException as exc:  # every call of user code is guarded: what escapes is a bug of ours
        frames = traceback.extract_tb(exc.__traceback__)
        where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
        tail = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}{where}"
        result = WorkerResult(
            nonce=nonce,
            device=h.device,
            device_name=h.device_name,
            notes=h.notes,
            internal_error=tail,
        )
    if h.watchdog is not None:
        h.watchdog.disarm()
    violation = watch.check()
    if violation is not None:
        result = result.model_copy(update={"checks": [*result.checks, violation]})
    write_result(call.result_path, result)
    h.progress("DONE")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":  # pragma: no cover - exercised through the runner
    main()
