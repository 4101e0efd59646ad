"""Reading a report in a fresh interpreter when this process holds a library that crashes NVIDIA's reader.

Measured on the lent GPU host (4 x H200, Nsight Compute 2025.3.1's own ``extras/python`` ``ncu_report``,
torch 2.11+cu130): every bundled report read after ``import torch`` in the same process died with SIGSEGV
inside ``ncu_report`` (``IMetric.unit()``), while the same reads in a process without torch all succeeded
(tests/gpu/x4_2026-11-27c/probe_report_reader.md). A library user who imported torch first, or any test
run that collected a torch test, would lose the whole process. So when such a module is loaded, the
report is read by ``python -m profilers.ncu.report_child`` (which loads only the reader) and the
``Profile`` comes back as JSON; the reader's own errors come back as the same classes with the same
messages, and a crash of the child is a ``ProfilerFailed`` with its exit status, never a dead process.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import threading
from collections import OrderedDict
from pathlib import Path

import profilers.errors as errors
from profilers.core_errors import PerfAgentError
from profilers.model import Profile
from profilers.process import run_command
from profilers.settings import TIMEOUTS

CRASHING_NEIGHBOURS = ("torch",)
"""Modules whose presence in the process made ``ncu_report`` crash (measured: torch)."""

CHILD_ENV = "PERFAGENT_REPORT_CHILD"
"""Set in the child: it reads in-process whatever it has loaded (it loads no torch of its own)."""


def needs_isolation() -> bool:
    """Whether a report must be read in a child: a crashing neighbour is loaded here."""
    if os.environ.get(CHILD_ENV):
        return False
    return any(name in sys.modules for name in CRASHING_NEIGHBOURS)


def read_in_child(path: Path, *, kernel_regex: str | None = None, ncu_path: str | None = None) -> Profile:
    """``read_ncu_rep`` run in a fresh interpreter (same ``sys.path``), its result or its error re-raised.
    Bytes read once are not read again (a child start costs about a second of wall; the ``Profile`` is
    immutable, so one copy serves every caller): the key is the file's content, so a copy of a report
    read before (a project folder holding the examples' reports) is not read again either; its ``source``
    still names the file as the caller named it.

    Raises:
        PerfAgentError: the reader's own error (same class and message), or ``ProfilerFailed`` when the
            child died without answering.
    """
    stat = path.stat()
    key = (_content(str(path.resolve()), stat.st_size, stat.st_mtime_ns), kernel_regex, ncu_path)
    with _LOCK:
        found = _READ.get(key)
    if found is None:
        found = _read(str(path), kernel_regex, ncu_path)
    elif found.source != str(path):
        found = found.model_copy(update={"source": str(path)})
    with _LOCK:  # kept as last named: the same caller asking again gets the same object
        _READ[key] = found
        _READ.move_to_end(key)
        while len(_READ) > _KEPT:
            _READ.popitem(last=False)
    return found


_KEPT = 64
"""Profiles kept (the oldest are forgotten first)."""
_LOCK = threading.Lock()
_READ: OrderedDict[tuple[str, str | None, str | None], Profile] = OrderedDict()


@functools.lru_cache(maxsize=256)
def _content(_resolved: str, _size: int, _mtime_ns: int) -> str:
    """SHA-256 of a file's bytes, computed once per (file, size, modification time)."""
    digest = hashlib.sha256()
    with open(_resolved, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read(path: str, kernel_regex: str | None, ncu_path: str | None) -> Profile:
    # ``path`` as given: the profile's ``source`` names the file as the caller named it.
    argv = [sys.executable, "-m", "profilers.ncu.report_child", path]
    if kernel_regex is not None:
        argv += ["--kernel", kernel_regex]
    if ncu_path is not None:
        argv += ["--ncu", ncu_path]
    env = {**os.environ, CHILD_ENV: "1", "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = run_command(argv, timeout_s=TIMEOUTS.profile_s, env=env)
    answer = _answer(done.stdout)
    if answer is None:
        raise errors.ProfilerFailed(
            f"the report reader died reading {path} (exit status {done.returncode})",
            hint="read the report on a machine whose ncu_report works (`pip install ncu-report`), "
            "or export it with `ncu --import X --csv --page raw` and give the CSV",
        )
    if "profile" in answer:
        return Profile.model_validate(answer["profile"])
    raise _error(answer.get("error") or {})


def _answer(stdout: str) -> dict[str, object] | None:
    lines = stdout.strip().splitlines()
    try:
        answer = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        return None
    return answer if isinstance(answer, dict) else None


def _error(fields: object) -> PerfAgentError:
    """The child's error as the class it raised (a profiler-layer class), else a ``ProfilerFailed``."""
    info = fields if isinstance(fields, dict) else {}
    message, hint = str(info.get("message", "the report reader failed")), str(info.get("hint", ""))
    cls = getattr(errors, str(info.get("type", "")), None)
    if isinstance(cls, type) and issubclass(cls, errors.NoKernelsProfiled):
        available = info.get("available")
        names = tuple(str(n) for n in available) if isinstance(available, list) else ()
        return cls(message, hint=hint, available=names)
    if isinstance(cls, type) and issubclass(cls, PerfAgentError):
        try:
            return cls(message, hint=hint)
        except TypeError:  # a class whose constructor wants more than the message and hint
            pass
    return errors.ProfilerFailed(message, hint=hint)
