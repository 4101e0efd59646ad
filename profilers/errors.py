"""The profiler layer's errors, under the project's one exception root.

The root every caller catches (``PerfAgentError``) and the documented exit codes live in
``profilers.core_errors``, at the bottom of the layers; the errors here subclass it. Every error carries a
one-line ``message`` (the cause) and a ``hint`` (the next step), and the CLI exit code it maps to.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from profilers.core_errors import ExitCode, PerfAgentError


class ProfilerError(PerfAgentError):
    """The profiler layer's errors (exit code 3 unless a subclass says otherwise)."""

    exit_code = ExitCode.PROFILER


class ProfilerUnavailable(ProfilerError):
    """The tool is missing or cannot run here (not on PATH, no GPU, no driver)."""


class CounterPermissionDenied(ProfilerError):
    """ncu's ERR_NVGPUCTRPERM: the GPU performance counters are restricted to admin users."""


class NoKernelsProfiled(ProfilerError):
    """The profiler ran but recorded no kernel (ncu exits 0 in that case)."""

    def __init__(self, message: str, *, hint: str = "", available: Sequence[str] = ()) -> None:
        super().__init__(message, hint=hint)
        self.available = list(available)


class NoKernelsInSource(NoKernelsProfiled):
    """The source file itself defines no kernel (bad input: exit code 2; nothing was wrong with the tool)."""

    exit_code = ExitCode.USAGE


class KernelFilterUnmatched(NoKernelsProfiled):
    """``--kernel REGEX`` is not a valid regular expression, or matches none of the kernels a recorded
    report (or a source file) holds: bad usage, exit code 2 (the profiler did its part)."""

    exit_code = ExitCode.USAGE


def compile_kernel_filter(kernel_regex: str | None) -> re.Pattern[str] | None:
    """``--kernel``'s pattern, compiled (None for no filter).

    Raises:
        KernelFilterUnmatched: not a valid Python regular expression.
    """
    if not kernel_regex:
        return None
    try:
        return re.compile(kernel_regex)
    except re.error as exc:
        raise KernelFilterUnmatched(
            f"the kernel filter {kernel_regex!r} is not a valid regular expression ({exc})",
            hint="fix the --kernel pattern (Python re syntax, e.g. 'transpose|gemm')",
        ) from None


class ApplicationFailed(ProfilerError):
    """The profiled application itself exited non-zero."""

    def __init__(self, message: str, *, hint: str = "", returncode: int | None = None) -> None:
        super().__init__(message, hint=hint)
        self.returncode = returncode


class ProfilerFailed(ProfilerError):
    """The profiler exited abnormally or printed an error we could not classify."""


class ToolTimeout(ProfilerError):
    """An external command ran past its time limit and was killed."""


class BadReport(ProfilerError):
    """The input file is not a report we can read (bad input: exit code 2)."""

    exit_code = ExitCode.USAGE


class BuildFailed(ProfilerError):
    """nvcc (or hipcc) could not compile the source (bad input: exit code 2)."""

    exit_code = ExitCode.USAGE
