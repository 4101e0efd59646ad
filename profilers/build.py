"""Compile CUDA sources with nvcc: a program to run under a profiler, or a cubin for static analysis.

Both go through ``run_command`` and turn a compiler failure into ``BuildFailed`` (exit code 2: the
input is at fault) carrying nvcc's first error lines. A build already made from the same bytes with the
same command line is taken from ``profilers.build_cache`` instead of running nvcc again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from knowledge import KnowledgeError
from knowledge.arch import normalize_arch
from profilers import build_cache
from profilers.errors import BuildFailed
from profilers.process import CompletedCommand, run_command

NVCC = "nvcc"
_ERROR_LINE = re.compile(r"\berror\b|\bfatal\b|^ptxas\s+(?:error|fatal)", re.IGNORECASE)
_ERROR_SUMMARY = re.compile(r"errors? detected in the compilation")
_MAX_ERROR_LINES = 6


def build_program(
    source: Path, out: Path, arch: str, timeout_s: float, extra_flags: Sequence[str] = ()
) -> Path:
    """Compile a ``.cu`` program with ``main()`` into an executable with line info.

    Args:
        source: the program's source file.
        out: path of the executable to write (its folder is created).
        arch: target architecture ('sm_90', 'sm_90a', '9.0', 'compute_90').
        timeout_s: wall-clock limit for nvcc, s.
        extra_flags: more nvcc flags, placed before the output and source arguments.

    Returns:
        ``out``.

    Raises:
        BuildFailed: the source is missing, the architecture is unknown, or nvcc failed.
        ProfilerUnavailable: nvcc is not on PATH.
        ToolTimeout: nvcc ran past ``timeout_s``.
    """
    argv = [NVCC, "-O3", "-lineinfo", f"-arch={nvcc_arch(arch)}", *extra_flags, "-o", str(out), str(source)]
    run_nvcc(argv, source, out, timeout_s)
    return out


def compile_cubin(
    source: Path, out: Path, arch: str, timeout_s: float, extra_flags: Sequence[str] = ()
) -> CompletedCommand:
    """Compile ``source`` to a cubin with ptxas resource usage (``-Xptxas -v``) on stderr.

    Args:
        source: a CUDA source file (compiled as CUDA whatever its suffix).
        out: path of the cubin to write (its folder is created).
        arch: a real target architecture ('sm_90', 'sm_90a'; '9.0' and 'compute_90' mean sm_90).
        timeout_s: wall-clock limit for nvcc, s.
        extra_flags: more nvcc flags.

    Returns:
        The completed nvcc command; ptxas's report is in its ``stderr``.

    Raises:
        BuildFailed: the source is missing, the architecture is unknown, or nvcc failed.
        ProfilerUnavailable: nvcc is not on PATH.
        ToolTimeout: nvcc ran past ``timeout_s``.
    """
    argv = [NVCC, "-cubin", f"-arch={nvcc_arch(arch)}", "-lineinfo", "-Xptxas", "-v", *extra_flags]
    argv += ["-x", "cu", "-o", str(out), str(source)]
    return run_nvcc(argv, source, out, timeout_s)


def nvcc_arch(arch: str) -> str:
    """The ``-arch`` value nvcc needs for a real target: 'sm_90a' stays, '9.0'/'compute_90' become 'sm_90'.

    Raises:
        BuildFailed: ``arch`` is not an architecture spelling.
    """
    try:
        return normalize_arch(arch, keep_suffix=True)
    except KnowledgeError as exc:
        raise BuildFailed(str(exc), hint="pass an architecture such as sm_90 or sm_80") from None


def run_nvcc(argv: Sequence[str], source: Path, out: Path, timeout_s: float) -> CompletedCommand:
    """Run an nvcc command line; raise ``BuildFailed`` with nvcc's first error lines when it fails.

    Raises:
        BuildFailed: ``source`` is missing or nvcc exited non-zero.
        ProfilerUnavailable: nvcc is not on PATH.
        ToolTimeout: nvcc ran past ``timeout_s``.
    """
    if not source.is_file():
        raise BuildFailed(f"source file {source} does not exist", hint="check the path")
    out.parent.mkdir(parents=True, exist_ok=True)
    key = build_cache.build_key(argv, source, out) if build_cache.cache_root() else None
    cached = build_cache.load(key, out, argv) if key else None
    if cached is not None:
        return cached
    result = run_command(argv, timeout_s=timeout_s)
    if not result.ok:
        raise BuildFailed(
            f"nvcc could not compile {source.name} (exit {result.returncode}):\n{first_errors(result)}",
            hint="fix the compiler error above and run again",
        )
    if key:
        build_cache.store(key, out, result)
    return result


def first_errors(result: CompletedCommand) -> str:
    """nvcc's first error lines (with the source line they point at), else the tail of its output."""
    lines = (result.stderr + "\n" + result.stdout).splitlines()
    picked: list[str] = []
    for index, line in enumerate(lines):
        if _ERROR_LINE.search(line) and not _ERROR_SUMMARY.search(line):
            picked.append(line.rstrip())
            # nvcc prints the offending source line right after `file(N): error: ...`.
            following = lines[index + 1] if index + 1 < len(lines) else ""
            if following.startswith("  ") and following.strip():
                picked.append(following.rstrip())
        if len(picked) >= _MAX_ERROR_LINES:
            break
    return "\n".join(picked) if picked else result.tail(10)
