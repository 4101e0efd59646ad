"""The child-process entry point: ``python -m perfagent.sandbox.worker REQUEST.json`` (nonce on stdin).

Runs reference and candidate code that perfagent does not trust, so it lives in its own process:
a crash, an ``os._exit``, an illegal CUDA address or a hang ends this process, never perfagent.
It writes a ``WorkerResult`` JSON to the request's ``result_path`` and leaves with ``os._exit``
(threads a candidate left behind cannot keep it alive). What it runs is the request's job, looked up
in the job table (``jobs``): verification and timing protocols live above the sandbox.
"""

from __future__ import annotations

import os
import platform
import sys
import traceback
from pathlib import Path

from perfagent.sandbox.harness import CandidateFailure, Harness, ReferenceFailure, write_result
from perfagent.sandbox.jobs import entry_point
from perfagent.sandbox.wire import WorkerRequest, WorkerResult


def resolve_device(requested: str) -> tuple[str, str | None]:
    """('cpu' | 'cuda', device name). CPU runs Triton through its interpreter."""
    if requested == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"
        return "cpu", platform.processor() or platform.machine()
    import torch

    if torch.cuda.is_available():
        return "cuda", torch.cuda.get_device_name(0)
    if requested == "cuda":
        raise ReferenceFailure(
            "--device cuda was asked for but torch sees no CUDA device (CPU-only torch build, or no GPU)"
        )
    os.environ["TRITON_INTERPRET"] = "1"
    return "cpu", platform.processor() or platform.machine()


def _run_job(h: Harness) -> WorkerResult:
    result = entry_point(h.request.job)(h)
    assert isinstance(result, WorkerResult), f"job {h.request.job} returned {type(result).__name__}"
    return result


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    request = WorkerRequest.model_validate_json(Path(args[0]).read_text())
    nonce = sys.stdin.readline().strip()
    h = Harness(request=request, nonce=nonce)
    h.start()
    try:
        h.device, h.device_name = resolve_device(request.device)
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
    write_result(request.result_path, result)
    h.progress("DONE")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":  # pragma: no cover - exercised through the runner
    main()
