"""The Nsight Compute (``ncu``) backend: runs ncu with a targeted metric list and reads its reports.

The pieces are the sibling modules of ``profilers.ncu`` (see the package docstring). Importing this
module runs nothing and changes nothing; ncu is looked for when a method needs it.
"""

from __future__ import annotations

import os
import re
import shlex
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from profilers.base import ProfileRequest
from profilers.errors import ProfilerFailed, ProfilerUnavailable
from profilers.model import Profile
from profilers.ncu.argv import build_ncu_argv, build_timing_argv
from profilers.ncu.csv import looks_like_ncu_csv, read_ncu_csv
from profilers.ncu.isolated import read_ncu_rep_isolated
from profilers.ncu.locate import DEFAULT_SEARCH_GLOBS, find_ncu
from profilers.ncu.run_errors import check_ncu_run
from profilers.process import CompletedCommand, run_command
from profilers.static.sass_scan import no_tensor_code

REPORT_SUFFIXES = (".ncu-rep", ".ncu-repz")
VERSION_TIMEOUT_S = 60.0
_VERSION_LINE = re.compile(r"Version\s+(\d+\.\d+[^\r\n]*)")
Runner = Callable[..., CompletedCommand]
"""``run_command``'s signature: how the profiler's own runs are started."""


class NcuProfiler:
    """Nsight Compute behind the ``Profiler`` Protocol.

    Attributes:
        name: 'ncu'.
        vendor: 'nvidia'.
        measures_time: True (ncu measures kernel durations, under its own clock and cache control).
    """

    name = "ncu"
    vendor = "nvidia"
    measures_time = True

    def __init__(
        self,
        ncu: str | None = None,
        *,
        search_globs: Sequence[str] = DEFAULT_SEARCH_GLOBS,
        runner: Runner = run_command,
    ) -> None:
        """Create the backend.

        Args:
            ncu: an explicit ncu executable (default: PATH, then ``search_globs``).
            search_globs: install locations searched when ncu is not on PATH.
            runner: runs an ncu invocation of the application (``run_command``; a test records the argv).
        """
        self._explicit = ncu
        self._runner = runner
        self._search_globs = tuple(search_globs)
        self._version: str | None = None

    def executable(self) -> str | None:
        """The ncu executable that would run, or None when there is none."""
        if self._explicit:
            return self._explicit if os.access(self._explicit, os.X_OK) else None
        return find_ncu(self._search_globs)

    def availability(self) -> str | None:
        """None when ncu can be run here, else why not (one line)."""
        if self.executable() is not None:
            return None
        if self._explicit:
            return f"ncu at {self._explicit} is missing or not executable"
        where = ", ".join(["PATH", *self._search_globs])
        return f"ncu (Nsight Compute) not found (looked in {where})"

    def version(self) -> str | None:
        """ncu's version (``ncu --version``), e.g. '2025.3.1.0 (build 36398880) (public-release)'; None if absent."""
        if self._version is not None:
            return self._version
        exe = self.executable()
        if exe is None:
            return None
        try:
            result = run_command(
                [exe, "--version"], timeout_s=VERSION_TIMEOUT_S, env={**os.environ, "LC_ALL": "C"}
            )
        except ProfilerUnavailable:
            return None
        match = _VERSION_LINE.search(result.stdout + "\n" + result.stderr)
        self._version = match.group(1).strip() if match else None
        return self._version

    def profile(self, request: ProfileRequest) -> Profile:
        """Run the application under ncu with the targeted metrics and read the report.

        Args:
            request: what to run and how (``command`` must not be empty).

        Returns:
            The canonical profile; ncu's warnings are appended to ``notes``.

        Raises:
            ValueError: ``request.command`` is empty.
            ProfilerUnavailable: ncu is missing or cannot load its profiling library.
            CounterPermissionDenied: hardware counters are restricted (ERR_NVGPUCTRPERM).
            NoKernelsProfiled: nothing was launched, or the filters matched nothing.
            ApplicationFailed: the application exited non-zero.
            ProfilerFailed: ncu failed otherwise, or wrote no report.
            ToolTimeout: the run exceeded ``request.timeout_s``.
            BadReport: the report ncu wrote cannot be read.
        """
        if not request.command:
            raise ValueError("ProfileRequest.command is empty: nothing to run under ncu")
        exe = self._require()
        workdir = Path(request.workdir)
        workdir.mkdir(parents=True, exist_ok=True)
        stem = f"perfagent-ncu-{uuid.uuid4().hex[:8]}"
        report_path, log_path = workdir / f"{stem}.ncu-rep", workdir / f"{stem}.log"
        skipped = (
            no_tensor_code(request.command)
            if request.tensor_counters and not request.full_set and "A" in request.metric_tiers
            else None
        )
        if skipped:
            request = request.model_copy(update={"tensor_counters": False})
        argv, env = request.launched(
            build_ncu_argv(request, ncu=exe, report_path=report_path, log_path=log_path), {"LC_ALL": "C"}
        )
        result = self._runner(argv, timeout_s=request.timeout_s, env=env)
        log_text = log_path.read_text(errors="replace") if log_path.is_file() else ""
        warnings = check_ncu_run(result, log_text, kernel_regex=request.kernel_regex)
        if not report_path.is_file():
            raise ProfilerFailed(
                "ncu finished without writing a report",
                hint=f"check {log_path} (ncu's log) and that {workdir} is writable",
            )
        profile = read_ncu_rep_isolated(report_path, ncu_path=exe)
        if skipped:
            warnings.append(f"tensor-pipe counters not collected (two replay passes saved): {skipped}")
        return profile.model_copy(update={"notes": [*profile.notes, *warnings]})

    def time_launches(self, request: ProfileRequest) -> Profile:
        """Stage 1 of staged profiling: the duration of every matched launch (one replay pass each).

        Returns:
            One kernel per (name, grid, block) with ``invocations`` and ``total_duration_s``; no counters.

        Raises:
            As ``profile``; BadReport when ncu printed no launch table.
        """
        if not request.command:
            raise ValueError("ProfileRequest.command is empty: nothing to run under ncu")
        exe = self._require()
        workdir = Path(request.workdir)
        workdir.mkdir(parents=True, exist_ok=True)
        table = workdir / f"perfagent-ncu-times-{uuid.uuid4().hex[:8]}.csv"
        argv, env = request.launched(build_timing_argv(request, ncu=exe, log_path=table), {"LC_ALL": "C"})
        result = self._runner(argv, timeout_s=request.timeout_s, env=env)
        log_text = table.read_text(errors="replace") if table.is_file() else ""
        warnings = check_ncu_run(result, log_text, kernel_regex=request.kernel_regex)
        if not looks_like_ncu_csv(table):
            # should a release print the table to stdout despite --log-file: its rows are the quoted lines
            rows = [line for line in result.stdout.splitlines() if line.startswith('"')]
            table.write_text(log_text + "\n" + "\n".join(rows) + "\n")
        profile = read_ncu_csv(table, kernel_regex=request.kernel_regex)
        return profile.model_copy(update={"source": shlex.join(request.command), "notes": warnings})

    def _require(self) -> str:
        exe = self.executable()
        if exe is None:
            raise ProfilerUnavailable(
                "ncu (Nsight Compute) was not found",
                hint="install Nsight Compute (or the CUDA toolkit) and put ncu on PATH",
            )
        return exe

    def can_read(self, path: Path) -> bool:
        """True for ``.ncu-rep``/``.ncu-repz`` files and CSV files with ncu's identity columns."""
        path = Path(path)
        return path.suffix.lower() in REPORT_SUFFIXES or looks_like_ncu_csv(path)

    def read(self, path: Path, *, kernel_regex: str | None = None) -> Profile:
        """Read an ``.ncu-rep`` report or an ncu raw-page CSV export.

        Args:
            path: the file.
            kernel_regex: keep kernels whose function or demangled name matches (``re.search``).

        Returns:
            The canonical profile.

        Raises:
            BadReport: not a readable ncu report or CSV (exit code 2).
            NoKernelsProfiled: no kernel, or none matching ``kernel_regex``.
            ProfilerUnavailable: ``.ncu-rep`` given but the ``ncu_report`` module is missing.
        """
        path = Path(path)
        if path.suffix.lower() == ".csv":
            return read_ncu_csv(path, kernel_regex=kernel_regex)
        return read_ncu_rep_isolated(path, kernel_regex=kernel_regex, ncu_path=self._explicit)
