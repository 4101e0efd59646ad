"""Turning an ncu run's exit code, log file and output into typed errors (ncu.md section 5).

Exit 0 is not success: ncu exits 0 when no kernel was profiled. ncu's own lines start with ``==PROF==``,
``==WARNING==`` or ``==ERROR==`` (in the ``--log-file`` when given; early errors on stderr); the
application's own output is only quoted in error hints, never parsed as data.
"""

from __future__ import annotations

import re

from profilers.errors import (
    ApplicationFailed,
    CounterPermissionDenied,
    NoKernelsProfiled,
    ProfilerFailed,
    ProfilerUnavailable,
)
from profilers.process import CompletedCommand

PERMISSION_HINT = (
    "the GPU performance counters are restricted to administrators: run as root or with CAP_PERFMON "
    "(CAP_SYS_ADMIN before driver R565; containers: --cap-add=SYS_ADMIN), or set "
    "'options nvidia NVreg_RestrictProfilingToAdminUsers=0' in /etc/modprobe.d, rebuild the initramfs and "
    "reboot (check RmProfilingAdminOnly in /proc/driver/nvidia/params); until then perfagent falls back to "
    "timing-only diagnosis"
)
_APP_ERROR = re.compile(r"==ERROR==\s*The application returned an error code \((-?\d+)\)")
_NO_KERNELS = "No kernels were profiled"
_LIST_ITEM = re.compile(r"^\s*(?:==\w+==\s*)?(?:\d+\s*[.:)]\s*)?(\S.*?)\s*$")


def parse_available_kernels(text: str) -> list[str]:
    """The kernel names ncu lists after ``Available Kernels:`` (when ``-k`` matched nothing).

    Args:
        text: ncu's log/output.

    Returns:
        The names in order (numbering removed), or an empty list.
    """
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.strip().rstrip(":").lower().endswith("available kernels"):
            names: list[str] = []
            for item in lines[index + 1 :]:
                stripped = item.strip()
                if not stripped or (stripped.startswith("==") and not re.match(r"==\w+==\s*\d", stripped)):
                    break
                match = _LIST_ITEM.match(item)
                if match:
                    names.append(match.group(1))
            return list(dict.fromkeys(names))
    return []


def _tail(text: str, lines: int = 10) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def check_ncu_run(result: CompletedCommand, log_text: str, *, kernel_regex: str | None = None) -> list[str]:
    """Raise the typed error an ncu run ended in, or return ncu's warnings as notes.

    Args:
        result: the completed ncu command (its stdout/stderr hold the application's output).
        log_text: the contents of ncu's ``--log-file`` ('' when missing).
        kernel_regex: the kernel filter that was requested (for the hint).

    Returns:
        ncu's ``==WARNING==`` lines (other than "no kernels"), as notes for the profile.

    Raises:
        CounterPermissionDenied: ``ERR_NVGPUCTRPERM``.
        ProfilerUnavailable: the profiling library could not be loaded (``LibraryNotLoaded``).
        ApplicationFailed: ``The application returned an error code (N)``.
        NoKernelsProfiled: ``No kernels were profiled`` (exit 0), with ``available`` when ncu listed names.
        ProfilerFailed: any other ``==ERROR==`` line or a non-zero exit.
    """
    everything = "\n".join((log_text, result.stderr, result.stdout))
    ncu_lines = [line.strip() for line in everything.splitlines() if line.startswith("==")]
    _raise_if_unavailable(everything)
    _raise_if_application_failed(everything, result)
    if any(_NO_KERNELS in line for line in ncu_lines):
        raise _no_kernels(everything, kernel_regex)
    errors = [line for line in ncu_lines if line.startswith("==ERROR==")]
    if errors or result.returncode != 0:
        first = errors[0].removeprefix("==ERROR==").strip() if errors else f"exit code {result.returncode}"
        raise ProfilerFailed(
            f"ncu failed: {first}",
            hint="ncu's log ends with: " + (_tail(log_text) or result.tail() or "(nothing)"),
        )
    return [
        "ncu: " + line.removeprefix("==WARNING==").strip()
        for line in ncu_lines
        if line.startswith("==WARNING==") and _NO_KERNELS not in line
    ]


def _raise_if_unavailable(everything: str) -> None:
    """ncu may not read the counters, or cannot load its profiling library: no profiling on this machine."""
    if "ERR_NVGPUCTRPERM" in everything:
        raise CounterPermissionDenied(
            "ncu may not read the GPU performance counters (ERR_NVGPUCTRPERM)", hint=PERMISSION_HINT
        )
    if "LibraryNotLoaded" in everything:
        raise ProfilerUnavailable(
            "ncu could not load its profiling library (LibraryNotLoaded)",
            hint="profiling is unavailable in this environment (some containers and VMs); run on the host or "
            "in a container with the full NVIDIA driver; perfagent falls back to timing-only diagnosis",
        )


def _raise_if_application_failed(everything: str, result: CompletedCommand) -> None:
    """The profiled application itself exited with an error code (ncu says so)."""
    app_error = _APP_ERROR.search(everything)
    if app_error:
        code = int(app_error.group(1))
        app_output = _tail(result.stderr) or _tail(result.stdout)
        raise ApplicationFailed(
            f"the profiled application exited with code {code}",
            hint="make it run cleanly without ncu first"
            + (f"; its output ends with: {app_output}" if app_output else "; it printed nothing"),
            returncode=code,
        )


def _no_kernels(everything: str, kernel_regex: str | None) -> NoKernelsProfiled:
    """The error for a run that profiled no kernel, naming the kernels ncu saw when it listed them."""
    available = parse_available_kernels(everything)
    if available:
        hint = f"the kernel filter {kernel_regex!r} matched none of: " if kernel_regex else "kernels seen: "
        hint += ", ".join(available[:20]) + (" ..." if len(available) > 20 else "")
    else:
        hint = "the application launched no CUDA kernel, or the --kernel / launch-skip / NVTX filters excluded all"
    return NoKernelsProfiled("ncu profiled no kernel", hint=hint, available=available)
