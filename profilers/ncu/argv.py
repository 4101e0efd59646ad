"""The ncu command line perfagent runs, built as a pure function of a ``ProfileRequest``.

Targeted collection (default): the sections ``SpeedOfLight LaunchStats Occupancy`` (about ncu's ``basic``
set, whose rules they feed) plus one ``--metrics`` list holding exactly what the metric map reads through
its ``exprs`` (roofline counts and peaks, occupancy limits, scheduler and stall ratios, a few pipes,
coalescing, shared-memory conflicts, spills, atomics, hit rates; see ``knowledge/data/metric_maps/ncu.toml``).
No hierarchical roofline sections and no ``--set full``: the aim is a profiling cost close to ``basic``.
Metric names absent on a chip (e.g. ``_mem_lgds`` before CC 9.0) come back ``n/a`` with exit 0 and are
simply missing; the map's next alternative is used.

Staged profiling (``perfagent.staging``) splits that list into counter tiers (``profilers.ncu.tiers``:
``ProfileRequest.metric_tiers``) and adds ``build_timing_argv``, stage 1's one-pass launch table, and
``--filter-mode per-launch-config`` for one representative launch of each chosen kernel configuration.

Choices:
    * ``--kernel-name-base function`` with ``--kernel-name regex:<re>``: the filter matches the plain
      function name (``gemm`` in ``void ns::gemm<128>(float*)``), which is what users type; the report
      keeps every name form anyway. ncu uses partial (search) matching, like ``re.search``.
    * ``--target-processes all`` so that kernels of child processes (Python launchers, MPI) are seen.
    * ``--log-file`` keeps ncu's messages apart from the application's stdout/stderr.
    * The application argv follows the options directly (ncu takes no ``--`` separator).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from profilers.base import ProfileRequest
from profilers.ncu.mapping import ncu_metric_map
from profilers.ncu.tiers import STAGE1_METRICS, metrics_for


@cache
def targeted_sections() -> tuple[str, ...]:
    """Sections of every targeted run, from the metric map's ``[collect]`` table."""
    return tuple(ncu_metric_map().collect.sections)


@cache
def targeted_metrics() -> tuple[str, ...]:
    """The metrics a targeted run requests with ``--metrics`` (sorted, constant for a given map).

    Returns:
        Every raw metric the map's ``exprs`` alternatives read (fallbacks excluded) plus
        ``[collect] metrics``.
    """
    return ncu_metric_map().collected_metric_names()


def without_tensor_counters(metrics: tuple[str, ...]) -> tuple[str, ...]:
    """``metrics`` less the tensor-pipe counters; their peaks stay (a peak is a constant, no replay pass)."""
    return tuple(m for m in metrics if "tensor" not in m or m.endswith(".peak_sustained"))


def source_sections() -> tuple[str, ...]:
    """Sections added when per-source-line counters are requested."""
    return tuple(ncu_metric_map().collect.source_sections)


def _export_path(path: Path) -> str:
    # ncu expands %h, %p, %i, %q{VAR} in --export; a literal % must be doubled.
    return str(path).replace("%", "%%")


def _common_options(request: ProfileRequest, *, ncu: str, log_path: Path) -> list[str]:
    return [
        ncu,
        "--log-file",
        str(log_path),
        "--target-processes",
        "all",
        "--clock-control",
        request.clock_control,
        "--kernel-name-base",
        "function",
    ]


def _filter_options(request: ProfileRequest) -> list[str]:
    argv: list[str] = []
    if request.kernel_regex:
        argv += ["--kernel-name", f"regex:{request.kernel_regex}"]
    if request.per_launch_config:
        argv += ["--filter-mode", "per-launch-config"]
    if request.launch_skip:
        argv += ["--launch-skip", str(request.launch_skip)]
    if request.launch_count is not None:
        argv += ["--launch-count", str(request.launch_count)]
    if request.nvtx_include:
        argv.append("--nvtx")
        for expression in request.nvtx_include:
            argv += ["--nvtx-include", expression]
    return argv


def build_ncu_argv(request: ProfileRequest, *, ncu: str, report_path: Path, log_path: Path) -> list[str]:
    """The full ncu argv for ``request`` (no side effects).

    A targeted run collects ``request.metric_tiers``: tier A brings the sections and its metrics, tier B
    its metrics (``profilers.ncu.tiers``); both = the whole targeted list.

    Args:
        request: what to profile; ``request.command`` is the application argv.
        ncu: the ncu executable.
        report_path: where ncu exports the report (``.ncu-rep``).
        log_path: where ncu writes its own messages.

    Returns:
        ``[ncu, options..., application argv...]``.
    """
    argv = _common_options(request, ncu=ncu, log_path=log_path)
    argv[1:1] = ["--export", _export_path(report_path), "--force-overwrite"]
    argv += _filter_options(request)
    tiers = ("A", "B") if request.full_set else request.metric_tiers
    if request.full_set:
        argv += ["--set", "full"]
    elif "A" in tiers:
        for section in targeted_sections():
            argv += ["--section", section]
    else:
        argv += ["--section", "LaunchStats"]  # names the launch; tier B's counters need no other section
    metrics = metrics_for(tiers)
    if not request.tensor_counters:
        metrics = without_tensor_counters(metrics)
    argv += ["--metrics", ",".join(metrics)]
    if request.source_counters:
        for section in source_sections():
            argv += ["--section", section]
        argv += ["--import-source", "yes"]
    argv += list(request.command)
    return argv


def build_timing_argv(request: ProfileRequest, *, ncu: str, log_path: Path) -> list[str]:
    """Stage 1 of staged profiling: every matched launch's duration and launch configuration, one replay
    pass, printed as CSV.

    ``--csv --page raw --print-units base`` prints one row per launch (name, grid, block, duration in
    ns, registers, shared memory) into ``log_path`` among ncu's ``==PROF==`` lines (ncu.md sections 4 and 6); no report is written.
    ``--section`` none and ``--apply-rules no``: nothing else is collected or evaluated.
    """
    argv = _common_options(request, ncu=ncu, log_path=log_path)
    argv += _filter_options(request)
    argv += [
        "--metrics",
        ",".join(STAGE1_METRICS),
        "--apply-rules",
        "no",
        "--csv",
        "--page",
        "raw",
        "--print-units",
        "base",
    ]
    argv += list(request.command)
    return argv
