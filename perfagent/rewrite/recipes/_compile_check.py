"""The compile check of the shared tail: a candidate that does not compile where its original does is dropped.

Which compiler runs is ``PERFAGENT_RECIPE_COMPILE``: ``auto`` (the default: NVRTC through ``cuda.core``
when it is importable, in process and fast, as on the GPU machines; nothing otherwise), ``nvcc``
(``nvcc -cubin`` through ``profilers.process.run_command``, when nvcc is on PATH) or ``off``. Both check device
code: NVRTC compiles it to PTX; ``-cubin`` runs nvcc's front end over the whole file (host functions are
parsed and type-checked too) and compiles the device code only. ``-c`` also ran the host compiler over the
front end's host translation: 60 % of each check's time (1.9 s against 0.76 s CPU for a 38-line kernel,
issue 26) for errors the front end had already reported. The original is
compiled first with the same compiler and options: a source that needs headers or flags the check does
not have (torch's, ``-D`` from a build) fails both, and then the check says nothing rather than drop a
candidate for the environment's fault.

Each distinct (compiler, source, macros) is compiled once per process: the result is kept, and a second
caller asking while the first compile runs waits for it. The original and the candidate compile at once
(``compile_errors`` compiles a whole list at once), in a small thread pool: nvcc runs as a subprocess and
NVRTC is thread-safe, so the wall time of a check is its slowest compile, not their sum. ``spent`` says how
long callers waited and how many compiles ran or were reused (the optimize record's ``compile-check`` stage).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from profilers.errors import ProfilerError
from profilers.process import run_command

ENV = "PERFAGENT_RECIPE_COMPILE"
_TIMEOUT_S = 120.0
_ARCH = "sm_90"
_JOBS = 4
"""Compiles at once (nvcc subprocesses or NVRTC threads)."""
_KEPT = 256
"""Compile results kept (the oldest are forgotten first)."""

Defines = tuple[tuple[str, int], ...]
_Key = tuple[str, str, Defines]


@dataclass(frozen=True)
class Spent:
    """What the compile checks of this process cost so far."""

    wait_s: float = 0.0
    """Wall seconds callers waited for compile results."""
    compiles: int = 0
    """Compiler runs."""
    reused: int = 0
    """Checks answered from an earlier (or running) compile of the same source and macros."""


_lock = threading.Lock()
_results: OrderedDict[_Key, Future[str | None]] = OrderedDict()
_spent = Spent()
_pool: ThreadPoolExecutor | None = None


def compiler() -> str | None:
    """'nvrtc', 'nvcc' or None (no check), from ``PERFAGENT_RECIPE_COMPILE`` and what is installed."""
    mode = os.environ.get(ENV, "auto").strip().lower()
    if mode == "off":
        return None
    if mode == "nvcc":
        return "nvcc" if shutil.which("nvcc") else None
    return "nvrtc" if _nvrtc_program() is not None else None


def compile_error(original: str, candidate: str, defines: Defines = ()) -> str | None:
    """Why ``candidate`` does not compile (the compiler's first lines) when ``original`` does; else None."""
    return compile_errors(original, [(candidate, defines)])[0]


def compile_errors(original: str, candidates: list[tuple[str, Defines]]) -> list[str | None]:
    """``compile_error`` for each (source, macros) of ``candidates``, every compile started at once."""
    which = compiler()
    if which is None:
        return [None] * len(candidates)
    clock = time.monotonic()
    originals = {d: _submit(which, original, d) for d in dict.fromkeys(d for _, d in candidates)}
    # an original known not to build here says nothing about its candidates: they are not compiled
    builds = {d: not (f.done() and f.result() is not None) for d, f in originals.items()}
    pending = [(originals[d], _submit(which, source, d) if builds[d] else None) for source, d in candidates]
    out = [_verdict(which, first, mine) for first, mine in pending]
    _add(wait_s=time.monotonic() - clock)
    return out


def _verdict(which: str, original: Future[str | None], candidate: Future[str | None] | None) -> str | None:
    if candidate is None or original.result() is not None:
        return None  # the environment cannot build the original either: no verdict
    error = candidate.result()
    return None if error is None else f"{which}: {error}"


def spent() -> Spent:
    """The compile checks' cost in this process so far (subtract two readings for a stretch of work)."""
    with _lock:
        return _spent


def clear_cache() -> None:
    """Forget every compile result (a benchmark of the check itself; a changed ``PERFAGENT_RECIPE_COMPILE``
    does not need it: the compiler is part of the key)."""
    with _lock:
        _results.clear()


def _submit(which: str, source: str, defines: Defines) -> Future[str | None]:
    """The compile of ``source`` with ``defines``: the one kept or running, else a new one."""
    key = (which, source, defines)
    with _lock:
        found = _results.get(key)
        if found is not None:
            _results.move_to_end(key)
            _add_locked(reused=1)
            return found
        future = _executor().submit(_compile, which, source, defines)
        _results[key] = future
        _add_locked(compiles=1)
        while len(_results) > _KEPT:
            _results.popitem(last=False)
    return future


def _executor() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=_JOBS, thread_name_prefix="perfagent-compile-check")
    return _pool


def _add(*, wait_s: float) -> None:
    with _lock:
        _add_locked(wait_s=wait_s)


def _add_locked(*, wait_s: float = 0.0, compiles: int = 0, reused: int = 0) -> None:
    global _spent
    s = _spent
    _spent = Spent(s.wait_s + wait_s, s.compiles + compiles, s.reused + reused)


def _compile(which: str, source: str, defines: Defines) -> str | None:
    """None when ``source`` compiles, else the compiler's first error lines."""
    return _nvrtc(source, defines) if which == "nvrtc" else _nvcc(source, defines)


@lru_cache(maxsize=1)
def _nvrtc_program() -> object | None:
    try:
        from cuda.core import Program, ProgramOptions  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        try:
            from cuda.core.experimental import (  # type: ignore[import-not-found, unused-ignore]
                Program,
                ProgramOptions,
            )
        except ImportError:
            return None
    return (Program, ProgramOptions)


def _nvrtc(source: str, defines: tuple[tuple[str, int], ...]) -> str | None:
    found = _nvrtc_program()
    assert isinstance(found, tuple)
    program, options = found
    include = [p for p in ("/usr/local/cuda/include",) if Path(p).is_dir()]
    opts = options(
        arch=_ARCH, std="c++17", define_macro=[(k, str(v)) for k, v in defines] or None, include_path=include
    )
    try:
        program(source, code_type="c++", options=opts).compile("ptx")
    except Exception as exc:  # NVRTC reports every compile error as an exception carrying its log
        return _first_lines(str(exc))
    return None


def _nvcc(source: str, defines: tuple[tuple[str, int], ...]) -> str | None:
    with tempfile.TemporaryDirectory(prefix="perfagent-recipe-") as tmp:
        path = Path(tmp) / "candidate.cu"
        path.write_text(source, encoding="utf-8")
        flags = [f"-D{k}={v}" for k, v in defines]
        out = str(Path(tmp) / "c.cubin")
        argv = ["nvcc", f"-arch={_ARCH}", "-std=c++17", "-cubin", *flags, str(path), "-o", out]
        try:
            result = run_command(argv, timeout_s=_TIMEOUT_S)
        except ProfilerError as exc:  # nvcc vanished or hung: the check cannot judge, so it does not
            return f"nvcc did not finish: {exc}"
    return None if result.ok else _first_lines(result.stderr or result.stdout)


def _first_lines(log: str, count: int = 3) -> str:
    lines = [line.strip() for line in log.splitlines() if "error" in line.lower()] or log.splitlines()
    return " | ".join(lines[:count])[:400]
