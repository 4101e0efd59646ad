"""argv builders for hipcc, rocprofv3 and rocprof-compute (pure functions; tests assert them exactly).

Flags as rocprofv3 parses them (ROCm/rocprofiler-sdk ``source/bin/rocprofv3.py``): ``--kernel-trace``,
``--pmc C1 C2 ...`` (one pass per invocation), ``-d/--output-directory``, ``-o/--output-file`` (file
prefix: ``<dir>/<prefix>_kernel_trace.csv``, ``..._counter_collection.csv``, ``..._agent_info.csv``),
``-f/--output-format csv [rocpd]`` (several formats at once; rocpd is the default since ROCm 7.0),
``--kernel-include-regex`` (applies to counter collection, not to the kernel trace) and
``--kernel-iteration-range``; the application follows ``--``. rocprof-compute (ROCm/rocprofiler-compute
``src/argparser.py``): ``profile -n NAME -p PATH [-k K ...] [-b BLOCK ...] [--no-roof] -- app`` and
``analyze -p PATH [-k ...] [--save-dfs DIR]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

OutputFormat = str
"""'csv' or 'rocpd' (also 'json', 'pftrace', 'otf2', which perfagent does not read)."""


def hipcc_argv(source: Path, output: Path, *, offload_arch: str | None = None, opt: str = "-O3") -> list[str]:
    """Build a HIP program.

    Args:
        source: the .hip/.cpp file with ``main``.
        output: the executable to write.
        offload_arch: a gfx target ('gfx942'); None lets hipcc build for the GPUs it detects.
        opt: optimisation flag.
    """
    argv = ["hipcc", opt]
    if offload_arch:
        argv.append(f"--offload-arch={offload_arch}")
    argv += ["-o", str(output), str(source)]
    return argv


def _filters(kernel_regex: str | None, iteration_range: str | None) -> list[str]:
    argv: list[str] = []
    if kernel_regex:
        argv += ["--kernel-include-regex", kernel_regex]
    if iteration_range:
        argv += ["--kernel-iteration-range", iteration_range]
    return argv


def rocprofv3_trace_argv(
    app: Sequence[str],
    *,
    output_dir: Path,
    prefix: str = "trace",
    formats: Sequence[OutputFormat] = ("csv",),
) -> list[str]:
    """Kernel trace only (timestamps, launch configuration, registers): the timing pass.

    ``--kernel-include-regex`` is deliberately absent: rocprofv3 applies it to counters, not to the trace;
    the reader filters kernels instead.
    """
    return [
        "rocprofv3",
        "--kernel-trace",
        "--output-format",
        *formats,
        "--output-directory",
        str(output_dir),
        "--output-file",
        prefix,
        "--",
        *app,
    ]


def rocprofv3_counter_argv(
    app: Sequence[str],
    counters: Sequence[str],
    *,
    output_dir: Path,
    prefix: str,
    kernel_regex: str | None = None,
    iteration_range: str | None = None,
    formats: Sequence[OutputFormat] = ("csv",),
) -> list[str]:
    """One counter-collection pass (the counters must fit one pass: see ``passes``).

    Raises:
        ValueError: no counters.
    """
    if not counters:
        raise ValueError("a counter pass needs at least one counter")
    return [
        "rocprofv3",
        "--pmc",
        *counters,
        *_filters(kernel_regex, iteration_range),
        "--output-format",
        *formats,
        "--output-directory",
        str(output_dir),
        "--output-file",
        prefix,
        "--",
        *app,
    ]


def rocprofv3_version_argv() -> list[str]:
    """``rocprofv3 --version``."""
    return ["rocprofv3", "--version"]


def rocprofv3_list_counters_argv() -> list[str]:
    """``rocprofv3 --list-avail``: the counters each agent supports (used to drop unsupported ones)."""
    return ["rocprofv3", "--list-avail"]


def rocprof_compute_profile_argv(
    app: Sequence[str],
    *,
    name: str,
    path: Path,
    kernels: Sequence[str] = (),
    blocks: Sequence[str] = (),
    roofline: bool = True,
) -> list[str]:
    """``rocprof-compute profile``: all passes (about 24 replays on MI300X) into a workload folder.

    Args:
        app: the application argv.
        name: workload name.
        path: where the workload folder goes (the data land in ``path`` or ``path/<gpu_model>``).
        kernels: kernel-name filters (``-k``).
        blocks: hardware blocks or metric ids to restrict collection (``-b``), e.g. ('SQ', 'TCC').
        roofline: False adds ``--no-roof`` (skips the empirical roofline benchmark).
    """
    argv = ["rocprof-compute", "profile", "--name", name, "--path", str(path)]
    if kernels:
        argv += ["--kernel", *kernels]
    if blocks:
        argv += ["--block", *blocks]
    if not roofline:
        argv.append("--no-roof")
    return [*argv, "--", *app]


def rocprof_compute_analyze_argv(
    path: Path,
    *,
    save_dfs: Path | None = None,
    kernel_ids: Sequence[int] = (),
    metric_ids: Sequence[str] = (),
) -> list[str]:
    """``rocprof-compute analyze`` on a workload folder, optionally saving every table as CSV.

    Args:
        path: the workload folder (with pmc_perf.csv).
        save_dfs: folder for ``--save-dfs`` (one CSV per panel table, e.g. ``2.1_Speed-of-Light.csv``).
        kernel_ids: kernel ids from ``--list-stats`` for ``--kernel``.
        metric_ids: panel/metric ids from ``--list-metrics`` for ``--block`` (e.g. '2', '12.1').
    """
    argv = ["rocprof-compute", "analyze", "--path", str(path)]
    if kernel_ids:
        argv += ["--kernel", *(str(k) for k in kernel_ids)]
    if metric_ids:
        argv += ["--block", *metric_ids]
    if save_dfs is not None:
        argv += ["--save-dfs", str(save_dfs)]
    return argv


def rocprof_compute_version_argv() -> list[str]:
    """``rocprof-compute --version``."""
    return ["rocprof-compute", "--version"]
