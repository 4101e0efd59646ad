"""Worker-side machinery shared by the verification and timing protocols.

- ``Watchdog``: a daemon thread that ends the worker when one call runs past its budget, after
  writing a result that names the call (the parent also kills the process group as a backstop).
- ``Harness``: progress lines, guarded calls (exception → a failed check naming the call),
  device synchronisation after each call so asynchronous CUDA errors surface at the right place.

What the worker watches for besides (monkey-patching, leftover threads) is in ``integrity``.
"""

from __future__ import annotations

import os
import re
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from perfagent.sandbox.wire import ENVIRONMENT_CHECK, Check, WorkerRequest, WorkerResult
from perfagent.workloads.cuda_toolkit import load_inline_gap

T = TypeVar("T")
R = TypeVar("R", bound=WorkerRequest)
Phase = Literal["build", "first", "call"]
TIMEOUT_EXIT = 124


class CandidateFailure(Exception):
    """The candidate raised, crashed a CUDA context, or broke a hard contract: stop and report."""

    def __init__(self, check: Check) -> None:
        super().__init__(check.detail)
        self.check = check


_ENVIRONMENT_GAPS = (
    (re.compile(r"CUDA_HOME environment variable is not set"), "no CUDA toolkit: CUDA_HOME is not set"),
    (
        re.compile(r"Ninja is required to load C\+\+ extensions"),
        "ninja, which torch needs to build extensions, is missing",
    ),
    (re.compile(r"Torch not compiled with CUDA enabled"), "this torch build has no CUDA"),
    (re.compile(r"No CUDA GPUs are available|Found no NVIDIA driver|no CUDA-capable device"), "no CUDA GPU"),
)


def environment_gap(error_text: str) -> str | None:
    """What this machine lacks, when ``error_text`` says it cannot build or run CUDA code at all.

    torch's "CUDA_HOME is not set" is also what a CPU build of torch says with nvcc installed: the real
    cause (no CUDA torch, or no toolkit where torch looks) comes from ``load_inline_gap``.
    """
    what = next((what for pattern, what in _ENVIRONMENT_GAPS if pattern.search(error_text)), None)
    if what is not None and "CUDA_HOME" in what:
        return load_inline_gap() or what
    return what


class ReferenceFailure(Exception):
    """The reference itself is unusable (bad input, exit 2)."""


def write_result(path: str, result: WorkerResult) -> None:
    """Write atomically (a half-written file must never be read as a result)."""
    tmp = Path(path + ".tmp")
    tmp.write_text(result.model_dump_json())
    os.replace(tmp, path)


class Watchdog:
    """Kills the worker (after writing a timeout result) when an armed call overruns."""

    def __init__(self, on_expire: Callable[[str, float], None]) -> None:
        self._on_expire = on_expire
        self._lock = threading.Lock()
        self._deadline: float | None = None
        self._label = ""
        self._budget = 0.0
        self.thread = threading.Thread(target=self._run, name="perfagent-watchdog", daemon=True)
        self.thread.start()

    def arm(self, label: str, budget_s: float) -> None:
        with self._lock:
            self._label, self._budget = label, budget_s
            self._deadline = time.monotonic() + budget_s

    def disarm(self) -> None:
        with self._lock:
            self._deadline = None

    def _run(self) -> None:
        while True:
            time.sleep(0.05)
            with self._lock:
                expired = self._deadline is not None and time.monotonic() > self._deadline
                label, budget = self._label, self._budget
            if expired:
                try:
                    self._on_expire(label, budget)
                finally:
                    os._exit(TIMEOUT_EXIT)


def _where(exc: BaseException, files: tuple[str, ...]) -> str:
    """'file.py:42 in forward' for the deepest frame in one of ``files`` (else the deepest frame)."""
    frames = traceback.extract_tb(exc.__traceback__)
    chosen = [f for f in frames if any(_same_file(f.filename, x) for x in files)]
    pick = chosen or list(frames)
    if not pick:
        return ""
    frame = pick[-1]
    return f" at {Path(frame.filename).name}:{frame.lineno} in {frame.name}"


def _same_file(a: str, b: str) -> bool:
    """Whether two paths name one file; False when either is gone or unreadable (never raises)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


@dataclass
class Harness(Generic[R]):
    """Guarded execution of reference and candidate code inside the worker (``R``: the job's request type)."""

    request: R
    nonce: str
    result_path: str
    """Where the ``WorkerResult`` goes (the request file's ``WorkerCall.result_path``)."""
    progress_path: str
    device: str = "cpu"
    device_name: str | None = None
    notes: list[str] = field(default_factory=list)
    watchdog: Watchdog | None = None
    _progress: Any = None
    candidate_files: tuple[str, ...] = ()
    reference_files: tuple[str, ...] = ()
    _t0: float = field(default_factory=time.monotonic)
    _last: str = "start-up"

    def start(self) -> None:
        self._progress = open(self.progress_path, "a", buffering=1)  # noqa: SIM115 - lives for the process
        self.watchdog = Watchdog(self._expired)
        self.candidate_files = tuple(c.path for c in self.request.candidates())
        self.reference_files = (self.request.reference.path,)

    @property
    def last_progress(self) -> str:
        """The call running now (the last progress line), for evidence."""
        return self._last

    def progress(self, line: str) -> None:
        self._last = line
        if self._progress is not None:
            self._progress.write(f"{time.monotonic() - self._t0:8.3f} " + line.replace("\n", " ") + "\n")

    def _expired(self, label: str, budget: float) -> None:
        self.progress(f"TIMEOUT {label}")
        who = "reference" if label.startswith("reference") else "candidate"
        detail = f"{label} did not finish within {budget:g} s and was killed (hang or far too slow)"
        if who == "reference":
            result = WorkerResult(
                nonce=self.nonce,
                device=self.device,
                device_name=self.device_name,
                bad_input=f"the reference: {detail}",
                notes=self.notes,
            )
        else:
            result = WorkerResult(
                nonce=self.nonce,
                device=self.device,
                device_name=self.device_name,
                notes=self.notes,
                checks=[Check(name="candidate-runs", passed=False, detail=f"timeout: {detail}")],
            )
        write_result(self.result_path, result)

    def sync(self) -> None:
        if self.device.startswith("cuda"):
            # torch takes seconds to import: the harness is also read by torch-free code (the extension build)
            import torch

            torch.cuda.synchronize()

    def budget(self, phase: Phase) -> float:
        """Seconds allowed: 'build' (import, construct, compile) and, on CUDA, 'first' (JIT
        compilation on the first call) get ``compile_timeout_s``; every other call ``timeout_s``."""
        long = max(self.request.timeout_s, self.request.compile_timeout_s)
        if phase == "build" or (phase == "first" and self.device.startswith("cuda")):
            return long
        return self.request.timeout_s

    def candidate(self, label: str, fn: Callable[[], T], *, phase: Phase = "call", calls: int = 1) -> T:
        """Run candidate code (``calls`` calls' worth) under the watchdog; any exception becomes a ``CandidateFailure``."""
        return self._guard(f"candidate {label}", fn, phase=phase, reference=False, calls=calls)

    def reference(self, label: str, fn: Callable[[], T], *, phase: Phase = "call", calls: int = 1) -> T:
        """Run reference code under the watchdog; any exception becomes a ``ReferenceFailure``."""
        return self._guard(f"reference {label}", fn, phase=phase, reference=True, calls=calls)

    def _guard(self, label: str, fn: Callable[[], T], *, phase: Phase, reference: bool, calls: int = 1) -> T:
        assert self.watchdog is not None
        self.progress(label)
        self.watchdog.arm(label, self.budget(phase) * max(1, calls))
        try:
            value = fn()
            self.sync()  # asynchronous CUDA errors (illegal address, launch failure) surface here
            return value
        except BaseException as exc:  # SystemExit and KeyboardInterrupt raised by user code included
            text = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
            if reference:
                raise ReferenceFailure(
                    f"the reference raised {text}{_where(exc, self.reference_files)} during {label}"
                ) from exc
            missing = environment_gap(f"{type(exc).__name__}: {exc}")
            if missing is not None:
                # Not the candidate's fault: this machine cannot build or run its code at all.
                raise CandidateFailure(
                    Check(
                        name=ENVIRONMENT_CHECK,
                        passed=False,
                        detail=f"this machine cannot run the candidate ({missing}): {text}",
                        severity="inconclusive",
                    )
                ) from exc
            cuda_error = "CUDA" in text or "cuda" in (type(exc).__module__ or "")
            kind = "a CUDA error" if cuda_error else "an exception"
            raise CandidateFailure(
                Check(
                    name="cuda-errors" if cuda_error else "candidate-runs",
                    passed=False,
                    detail=f"{kind} during {label}: {text}{_where(exc, self.candidate_files)}",
                )
            ) from exc
        finally:
            self.watchdog.disarm()
