"""The compile check of the shared tail: a candidate that does not compile where its original does is dropped.

Which compiler runs is ``PERFAGENT_RECIPE_COMPILE``: ``auto`` (the default: NVRTC through ``cuda.core``
when it is importable, in process and fast, as on the GPU machines; nothing otherwise), ``nvcc``
(``nvcc -c`` through ``profilers.process.run_command``, when nvcc is on PATH) or ``off``. The original is
compiled first with the same compiler and options: a source that needs headers or flags the check does
not have (torch's, ``-D`` from a build) fails both, and then the check says nothing rather than drop a
candidate for the environment's fault.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

from profilers.errors import ProfilerError
from profilers.process import run_command

ENV = "PERFAGENT_RECIPE_COMPILE"
_TIMEOUT_S = 120.0
_ARCH = "sm_90"


def compiler() -> str | None:
    """'nvrtc', 'nvcc' or None (no check), from ``PERFAGENT_RECIPE_COMPILE`` and what is installed."""
    mode = os.environ.get(ENV, "auto").strip().lower()
    if mode == "off":
        return None
    if mode == "nvcc":
        return "nvcc" if shutil.which("nvcc") else None
    return "nvrtc" if _nvrtc_program() is not None else None


def compile_error(original: str, candidate: str, defines: tuple[tuple[str, int], ...] = ()) -> str | None:
    """Why ``candidate`` does not compile (the compiler's first lines) when ``original`` does; else None."""
    which = compiler()
    if which is None:
        return None
    if _compile(which, original, defines) is not None:
        return None  # the environment cannot build the original either: no verdict
    error = _compile(which, candidate, defines)
    return None if error is None else f"{which}: {error}"


@lru_cache(maxsize=128)
def _compile(which: str, source: str, defines: tuple[tuple[str, int], ...]) -> str | None:
    """None when ``source`` compiles, else the compiler's first error lines."""
    return _nvrtc(source, defines) if which == "nvrtc" else _nvcc(source, defines)


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
        argv = ["nvcc", f"-arch={_ARCH}", "-std=c++17", "-c", *flags, str(path), "-o", str(Path(tmp) / "c.o")]
        try:
            result = run_command(argv, timeout_s=_TIMEOUT_S)
        except ProfilerError as exc:  # nvcc vanished or hung: the check cannot judge, so it does not
            return f"nvcc did not finish: {exc}"
    return None if result.ok else _first_lines(result.stderr or result.stdout)


def _first_lines(log: str, count: int = 3) -> str:
    lines = [line.strip() for line in log.splitlines() if "error" in line.lower()] or log.splitlines()
    return " | ".join(lines[:count])[:400]
