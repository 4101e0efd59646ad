"""Reading ``.ncu-rep`` reports with NVIDIA's ``ncu_report`` module (no GPU, driver or ncu needed).

Every range and every action (one action per profiled launch) becomes a ``LaunchRecord``: only the metric
names the map needs are fetched (``metric_by_name`` per name, not all ~1000 metrics), values keep the
unit the metric carries and are converted by ``profilers.ncu.mapping``. ncu's rule results become
``ToolFinding``s; source markers and per-PC warp samples (``smsp__pcsamp_sample_count``, present when the
SourceCounters section was collected) become ``SourceLine``s when the report maps PCs to source lines.
Per-opcode SASS counts (InstructionStats) are priced into tensor-core FLOPs (``profilers.ncu.tensor``), which
the map uses when the report has no tensor FLOP counter. In reports recorded with ``--nvtx``, launches outside
perfagent's workload range (``profilers.base.WORKLOAD_NVTX_RANGE``) are marked as the harness's.

The recording ncu's version and command line are stored in the file as plain text
(``Nsight Compute Target`` followed by ``2023.3.1.0 (build ...)``); ``ctx.get_version()`` would give the
reader module's version instead, so the bytes are scanned.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from profilers.base import workload_nvtx_include
from profilers.errors import BadReport, ProfilerError
from profilers.model import Profile, SourceLine, ToolFinding
from profilers.ncu import report_isolation
from profilers.ncu.locate import import_ncu_report
from profilers.ncu.mapping import (
    LaunchRecord,
    RawValue,
    build_profile,
    evaluate_fields,
    ncu_metric_map,
    to_base_values,
)
from profilers.ncu.tensor import SASS_OPCODE_METRIC, SASS_TENSOR_FLOP, tensor_flop_from_opcodes

FindingKind = Literal["optimization", "warning", "info", "error"]
SpeedupScope = Literal["local", "global"]

PC_SAMPLES_METRIC = "smsp__pcsamp_sample_count"
"""Per-PC warp-state samples (instanced; correlation ids are PCs), from the SourceCounters section."""

_KINDS: dict[int, FindingKind] = {1: "info", 2: "optimization", 3: "warning", 4: "error"}
_SCOPES: dict[int, SpeedupScope] = {1: "local", 2: "global"}
_MARKUP = re.compile(r"@(\w+):([^:@]*)(?::([^@]*))?@")
_VERSION = re.compile(
    rb"Nsight Compute Target.{1,3}?(\d{4}\.\d+\.\d+(?:\.\d+)?(?: \(build \d+\))?(?: \([a-z-]+\))?)", re.DOTALL
)
_PRINTABLE_RUN = re.compile(rb"[\x20-\x7e]{8,}")
_COMMAND = re.compile(r"(?:[A-Za-z]:)?[/\\]\S*?\bncu(?:\.exe)?\s.*|\bncu(?:\.exe)?\s.*")


def read_ncu_rep(path: Path, *, kernel_regex: str | None = None, ncu_path: str | None = None) -> Profile:
    """Read an Nsight Compute report into the canonical profile.

    Args:
        path: a ``.ncu-rep`` (or ``.ncu-repz``) file.
        kernel_regex: keep kernels whose function or demangled name matches (``re.search``).
        ncu_path: an ncu install whose ``extras/python`` may provide ``ncu_report``.

    Returns:
        One ``KernelProfile`` per (demangled name, grid, block); ``source`` is ``path``.

    Raises:
        BadReport: the file is missing or is not an Nsight Compute report.
        NoKernelsProfiled: the report holds no launch, or none matches ``kernel_regex``.
        ProfilerUnavailable: the ``ncu_report`` module cannot be imported.
    """
    path = Path(path)
    if not path.is_file():
        raise BadReport(f"{path} does not exist", hint="give the path of a report written by `ncu --export`")
    if report_isolation.needs_isolation():  # ncu_report crashes in a process that loaded torch (measured)
        return report_isolation.read_in_child(path, kernel_regex=kernel_regex, ncu_path=ncu_path)
    module = import_ncu_report(ncu_path)
    try:
        context = module.load_report(str(path))
        num_ranges = context.num_ranges()
    except Exception:  # the SWIG module raises plain RuntimeError/OSError on corrupt files
        raise _unreadable(path) from None
    if num_ranges == 0:
        raise _unreadable(path)
    names = sorted(ncu_metric_map().metric_names())
    notes: set[str] = set()
    records: list[LaunchRecord] = []
    try:
        for r in range(num_ranges):
            report_range = context.range_by_idx(r)
            harness = harness_actions(report_range)
            records.extend(
                _launch_record(module, report_range.action_by_idx(a), names, notes, harness=a in harness)
                for a in range(report_range.num_actions())
            )
        version, command = scan_report_identity(path)
        return build_profile(
            records,
            source=str(path),
            tool_version=version,
            command=command,
            notes=notes,
            kernel_regex=kernel_regex,
        )
    except ProfilerError:
        raise
    except Exception:  # a cut-off file yields launches with missing names and values
        raise _damaged(path) from None


_HINT = "give a .ncu-rep written by `ncu --export`, or a CSV from `ncu --import X --csv --page raw`"
NCU_REP_MAGIC = b"NVR\x00"
"""The first bytes of every ``.ncu-rep`` file."""


def _damaged(path: Path) -> BadReport:
    return BadReport(
        f"{path} is a damaged or truncated report",
        hint="copy the complete file again, or record it again with `ncu --export`",
    )


def _unreadable(path: Path) -> BadReport:
    """A report file the library cannot open: damaged when it starts like a report, else not a report."""
    try:
        with path.open("rb") as f:
            head = f.read(len(NCU_REP_MAGIC))
    except OSError:
        head = b""
    if head == NCU_REP_MAGIC:
        return _damaged(path)
    return BadReport(f"{path} is not an Nsight Compute report", hint=_HINT)


def harness_actions(report_range: Any) -> set[int]:
    """Indices of the range's actions that perfagent's harness launched outside the workload's NVTX range.

    Only for reports recorded with ``--nvtx`` (actions carry an NVTX state) in which at least one action ran
    inside ``WORKLOAD_NVTX_RANGE``: then every action outside it is harness (input preparation, set-up,
    warm-up). Reports without NVTX data, or whose program never opened the range, mark nothing.
    """
    count = report_range.num_actions()
    if count == 0 or report_range.action_by_idx(0).nvtx_state() is None:
        return set()
    inside = set(report_range.actions_by_nvtx([workload_nvtx_include()], []))
    if not inside:
        return set()
    return set(range(count)) - inside


def _launch_record(
    module: ModuleType, action: Any, names: list[str], notes: set[str], *, harness: bool = False
) -> LaunchRecord:
    raw: dict[str, tuple[RawValue, str | None]] = {}
    for name in names:
        metric = action.metric_by_name(name)
        if metric is not None:
            raw[name] = (metric.value(), metric.unit())
    tensor_flop = tensor_flop_from_opcodes(opcode_counts(action))
    if tensor_flop is not None:
        raw[SASS_TENSOR_FLOP] = (tensor_flop, "")
    demangled = action.name(module.IAction.NameBase_DEMANGLED)
    base = action.name(module.IAction.NameBase_FUNCTION)
    if action.workload_type() != module.IAction.WorkloadType_KERNEL:
        notes.add(
            f"'{base}' is a range or graph workload, not a single kernel launch; its launch metrics are aggregates"
        )
    return LaunchRecord(
        name=demangled or base,
        base_name=base or demangled,
        fields=evaluate_fields(to_base_values(raw, notes)),
        findings=rule_findings(action.rule_results_as_dicts()),
        source_lines=source_lines(action),
        raw_metric_count=len(action.metric_names()),
        harness=harness,
    )


def opcode_counts(action: Any) -> dict[str, float]:
    """Warp instructions executed per SASS opcode with modifiers (InstructionStats); empty when not collected."""
    metric = action.metric_by_name(SASS_OPCODE_METRIC)
    if metric is None or metric.num_instances() == 0:
        return {}
    opcodes = metric.correlation_ids()
    counts: dict[str, float] = {}
    for i in range(metric.num_instances()):
        name = opcodes.as_string(i)
        counts[name] = counts.get(name, 0.0) + metric.as_double(i)
    return counts


def clean_markup(text: str) -> str:
    """Replace ncu's ``@section:Id:Label@`` / ``@url:Label:https://...@`` links by their label."""

    def label(match: re.Match[str]) -> str:
        kind, second, third = match.group(1), match.group(2), match.group(3)
        if third is None or kind == "url":
            return second
        return third

    return _MARKUP.sub(label, text)


def rule_findings(results: list[dict[str, Any]]) -> list[ToolFinding]:
    """ncu rule results (``rule_results_as_dicts()``) → ``ToolFinding``s; empty messages are dropped.

    Message types: 1 OK → info, 2 OPTIMIZATION → optimization, 3 WARNING → warning, 4 ERROR → error.
    Speedup types: 1 LOCAL, 2 GLOBAL.
    """
    findings: list[ToolFinding] = []
    for result in results:
        message = result.get("rule_message") or {}
        kind = _KINDS.get(int(message.get("type") or 0))
        title = clean_markup(str(message.get("title") or "")).strip()
        text = clean_markup(str(message.get("message") or "")).strip()
        if kind is None or not (title or text):
            continue
        rule_id = str(result.get("rule_identifier") or "unknown")
        estimate = result.get("speedup_estimation") or {}
        speedup = estimate.get("speedup")
        findings.append(
            ToolFinding(
                rule_id=rule_id,
                title=title or str(result.get("name") or rule_id),
                message=text,
                kind=kind,
                estimated_speedup_pct=float(speedup) if speedup is not None else None,
                speedup_scope=_SCOPES.get(int(estimate.get("type") or 0)),
            )
        )
    return findings


def source_lines(action: Any) -> list[SourceLine]:
    """Source lines with ncu's markers and per-PC sample counts, one entry per (file, line).

    PCs without source correlation (no ``-lineinfo``) are skipped. The caller keeps the hottest lines.
    """
    entries: dict[tuple[str, int], dict[str, Any]] = {}

    def entry(file: str, line: int) -> dict[str, Any]:
        return entries.setdefault((file, line), {"samples": None, "notes": []})

    samples = action.metric_by_name(PC_SAMPLES_METRIC)
    if samples is not None and samples.num_instances() > 0:
        pcs = samples.correlation_ids()
        for i in range(samples.num_instances()):
            count = samples.as_double(i)
            location = _location(action, pcs.as_uint64(i)) if count else None
            if location is not None:
                slot = entry(*location)
                slot["samples"] = (slot["samples"] or 0.0) + count
    for marker in action.source_markers():
        marked = _marker_location(action, marker)
        message = clean_markup(str(marker.get("message") or "")).strip()
        if marked is not None and message and message not in entry(*marked)["notes"]:
            entry(*marked)["notes"].append(message)
    if not entries:
        return []
    texts = _source_texts(action, {f for f, _ in entries})
    return [
        SourceLine(
            file=file,
            line=line,
            text=_line_text(texts.get(file), line),
            samples=e["samples"],
            note=" ".join(e["notes"]) or None,
        )
        for (file, line), e in entries.items()
    ]


def _marker_location(action: Any, marker: dict[str, Any]) -> tuple[str, int] | None:
    """Source markers name either a file and line, or a SASS address (PC) to correlate."""
    where = marker.get("source_location")
    if where and where.get("file_name"):
        return str(where["file_name"]), int(where.get("line") or 0)
    if marker.get("source_address") is not None:
        return _location(action, int(marker["source_address"]))
    return None


def _location(action: Any, pc: int) -> tuple[str, int] | None:
    info = action.source_info(pc)
    if info is None or not info.file_name():
        return None
    return str(info.file_name()), int(info.line())


def _source_texts(action: Any, files: set[str]) -> dict[str, str]:
    try:
        stored = action.source_files()
        return {f: str(stored[f]) for f in stored.keys() if f in files}  # a SWIG map: no items()
    except Exception:  # source import is optional; a report without it has no texts
        return {}


def _line_text(text: str | None, line: int) -> str | None:
    if text is None or line < 1:
        return None
    lines = text.splitlines()
    return lines[line - 1].strip() if line <= len(lines) else None


def scan_report_identity(path: Path) -> tuple[str | None, str | None]:
    """The recording ncu's version and command line, found as plain text in the report's bytes.

    Args:
        path: the report.

    Returns:
        ``(version, command)``, e.g. ``("2023.3.1.0 (build 33474944) (public-release)", "/…/ncu --set full ./main")``;
        either is None when not found (compressed ``.ncu-repz`` files, unusual layouts).
    """
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None, None
    match = _VERSION.search(data)
    version = match.group(1).decode("ascii") if match else None
    command = None
    for run in _PRINTABLE_RUN.finditer(data):
        text = run.group(0).decode("ascii")
        if "ncu" not in text:
            continue
        found = _COMMAND.search(text)
        if found and (" -o " in found.group(0) or "--export" in found.group(0) or " --" in found.group(0)):
            command = found.group(0).rstrip(' "')
            break
    return version, command
