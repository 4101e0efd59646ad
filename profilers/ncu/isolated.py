"""Read ``.ncu-rep`` files in a child process.

The ``ncu_report`` module is native code (SWIG over NVIDIA's libraries). On the H200 test machine it
segfaulted once inside ``IMetric.unit()`` while the same report read cleanly from the CLI, so a
native crash must not take perfagent down with it: the report is read by
``python -m profilers.ncu.isolated REPORT`` and the canonical ``Profile`` comes back as JSON. Typed
errors (bad report, no kernels) cross the boundary as JSON too; a crash becomes ``ProfilerFailed``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from profilers.errors import NoKernelsProfiled, ProfilerError, ProfilerFailed
from profilers.model import Profile
from profilers.ncu.report_reader import read_ncu_rep
from profilers.process import run_command

READ_TIMEOUT_S = 300.0


def _error_classes(root: type[ProfilerError] = ProfilerError) -> dict[str, type[ProfilerError]]:
    """Every profiler error class by name, subclasses included: the child's error crosses the process
    boundary by name, and a subclass (e.g. ``KernelFilterUnmatched``, exit 2) must keep its exit code."""
    found: dict[str, type[ProfilerError]] = {root.__name__: root}
    for sub in root.__subclasses__():
        found |= _error_classes(sub)
    return found


_ERRORS = _error_classes()


def read_ncu_rep_isolated(
    path: Path,
    *,
    kernel_regex: str | None = None,
    ncu_path: str | None = None,
    timeout_s: float = READ_TIMEOUT_S,
) -> Profile:
    """``read_ncu_rep`` in a child process.

    Raises:
        BadReport, NoKernelsProfiled, ProfilerUnavailable: as the in-process reader.
        ProfilerFailed: the reader crashed (e.g. a segfault in ``ncu_report``).
        ToolTimeout: reading took longer than ``timeout_s``.
    """
    argv = [sys.executable, "-m", "profilers.ncu.isolated", str(path)]
    if kernel_regex:
        argv += ["--kernel", kernel_regex]
    if ncu_path:
        argv += ["--ncu", ncu_path]
    package_root = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ)
    env["PYTHONPATH"] = package_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    result = run_command(argv, timeout_s=timeout_s, env=env)
    if result.returncode == 0:
        return Profile.model_validate_json(result.stdout)
    if result.returncode == 2:
        try:
            err = json.loads(result.stdout)
        except json.JSONDecodeError:
            err = None
        if isinstance(err, dict) and err.get("error") in _ERRORS:
            cls = _ERRORS[err["error"]]
            if issubclass(cls, NoKernelsProfiled):
                raise cls(err["message"], hint=err.get("hint", ""), available=err.get("available", []))
            raise cls(err["message"], hint=err.get("hint", ""))
    how = (
        f"crashed (signal {-result.returncode})"
        if result.returncode < 0
        else f"failed (exit {result.returncode})"
    )
    raise ProfilerFailed(
        f"the ncu_report reader {how} on {path}: {result.tail(3)}",
        hint=f"export a CSV instead (`ncu --import {path} --csv --page raw > report.csv`) and diagnose that",
    )


def _main(argv: list[str]) -> int:
    path = Path(argv[0])
    kernel = argv[argv.index("--kernel") + 1] if "--kernel" in argv else None
    ncu = argv[argv.index("--ncu") + 1] if "--ncu" in argv else None
    try:
        profile = read_ncu_rep(path, kernel_regex=kernel, ncu_path=ncu)
    except ProfilerError as exc:
        body: dict[str, object] = {"error": type(exc).__name__, "message": exc.message, "hint": exc.hint}
        if isinstance(exc, NoKernelsProfiled):
            body["available"] = exc.available
        sys.stdout.write(json.dumps(body))
        return 2
    sys.stdout.write(profile.model_dump_json())
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
