"""Raw ncu metrics → canonical model, shared by the ``.ncu-rep`` and CSV readers.

Each reader turns one profiled launch into ``{metric name: (value, unit)}``; this module converts units
(``profilers.ncu.units``), evaluates the versioned metric map (``knowledge/data/metric_maps/ncu.toml``) into
flat canonical keys (``metrics.dram_bytes``, ``launch.grid.x``, ...), groups launches into kernels and
assembles ``KernelProfile`` objects. No ncu metric name appears here: they all live in the map.

Aggregation of several launches of one kernel (same demangled name, grid and block): extensive quantities
(counts, bytes, FLOPs, cycles, durations; ``extensive = true`` in the map) are plain per-launch means;
intensive ones (percentages, ratios, rates, clocks) are duration-weighted means, so that e.g. the mean
FLOPs over the mean duration equals the total FLOPs over the total time. Strings come from the first launch.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, get_args, get_origin

from knowledge.metric_maps import MetricMap, load_metric_map
from profilers.errors import KernelFilterUnmatched, NoKernelsProfiled, compile_kernel_filter
from profilers.model import (
    DeviceInfo,
    DevicePeaks,
    KernelProfile,
    LaunchConfig,
    Metrics,
    Occupancy,
    Profile,
    SourceLine,
    ToolFinding,
)
from profilers.ncu.tensor import uncounted_tensor_work
from profilers.ncu.units import to_base_units

RawValue = float | int | str | None
"""A value as a reader found it (numbers possibly in a scaled unit)."""
Flat = dict[str, float | str]
"""Canonical quantities of one launch or kernel, by map key ('metrics.dram_bytes' → 1.2e7)."""

LIMITER_ORDER: tuple[str, ...] = ("registers", "shared-memory", "block-slots", "warps")
"""Occupancy limiter names; when several limits tie for the lowest, the first in this order is named."""
MAX_SOURCE_LINES = 20
"""How many hot source lines a kernel keeps (lines with a profiler marker are always kept)."""


@cache
def ncu_metric_map() -> MetricMap:
    """The ncu metric map, checked against the canonical model once.

    Raises:
        KnowledgeError: the map file is invalid.
        ValueError: the map names a target key the model does not have.
    """
    metric_map = load_metric_map("ncu")
    unknown = unknown_targets(metric_map.fields)
    if unknown:
        raise ValueError(f"ncu metric map targets unknown canonical keys: {', '.join(unknown)}")
    return metric_map


# --------------------------------------------------------------------------- per launch


@dataclass
class LaunchRecord:
    """One profiled launch, normalised to canonical keys (what both readers produce)."""

    name: str
    """Demangled name with signature."""
    base_name: str
    """Function name."""
    fields: Flat
    """Canonical quantities of this launch."""
    findings: list[ToolFinding] = field(default_factory=list)
    source_lines: list[SourceLine] = field(default_factory=list)
    raw_metric_count: int | None = None
    harness: bool = False
    """Launched outside the workload's NVTX range (see ``KernelProfile.harness``)."""

    @property
    def duration_s(self) -> float | None:
        """The launch's duration, s, when measured."""
        value = self.fields.get("metrics.duration_s")
        return value if isinstance(value, float) else None

    def group_key(self) -> tuple[str, tuple[Any, ...], tuple[Any, ...], bool]:
        """Launches with equal keys are one kernel: (demangled name, grid, block, harness or workload)."""
        grid = tuple(self.fields.get(f"launch.grid.{a}") for a in "xyz")
        block = tuple(self.fields.get(f"launch.block.{a}") for a in "xyz")
        return self.name, grid, block, self.harness


def to_base_values(raw: Mapping[str, tuple[RawValue, str | None]], notes: set[str]) -> dict[str, float | str]:
    """Convert a launch's raw ``{name: (value, unit)}`` to base units, dropping absent values.

    Args:
        raw: values as read, with the unit each metric carries.
        notes: receives one note per metric whose unit is not recognised (its value is kept as is).

    Returns:
        ``{name: value}``: numbers in base units, strings unchanged; None, NaN and empty strings dropped.
    """
    out: dict[str, float | str] = {}
    for name, (value, unit) in raw.items():
        if value is None or isinstance(value, bool):
            continue
        if isinstance(value, str):
            if value.strip():
                out[name] = value
            continue
        number = float(value)
        if math.isnan(number) or math.isinf(number):
            continue
        converted = to_base_units(number, unit)
        if not converted.known:
            notes.add(
                f"ncu metric {name} has unit {unit!r}, which perfagent does not know; its value was used as is"
            )
        out[name] = converted.value
    return out


def evaluate_fields(values: Mapping[str, float | str], metric_map: MetricMap | None = None) -> Flat:
    """Evaluate every canonical key of the map over one launch's base-unit values.

    Args:
        values: ``{raw metric name: base-unit value}`` of one launch.
        metric_map: the map (default: the ncu map).

    Returns:
        The keys that could be evaluated; missing quantities are simply absent (later None, never 0).
    """
    evaluator = (metric_map or ncu_metric_map()).evaluator(values)
    return {k: v for k, v in evaluator.all_fields().items() if v is not None}


# --------------------------------------------------------------------------- grouping and aggregation


def group_launches(records: Iterable[LaunchRecord]) -> list[list[LaunchRecord]]:
    """Group launches by (demangled name, grid, block, harness), in order of first appearance."""
    groups: dict[tuple[str, tuple[Any, ...], tuple[Any, ...], bool], list[LaunchRecord]] = {}
    for record in records:
        groups.setdefault(record.group_key(), []).append(record)
    return list(groups.values())


def aggregate_fields(records: Sequence[LaunchRecord], metric_map: MetricMap | None = None) -> Flat:
    """Combine the canonical values of several launches of one kernel (see the module docstring)."""
    specs = (metric_map or ncu_metric_map()).fields
    if len(records) == 1:
        return dict(records[0].fields)
    durations = [r.duration_s for r in records]
    weights = [d if d is not None and d > 0 else None for d in durations]
    use_weights = all(w is not None for w in weights)
    out: Flat = {}
    keys = list(dict.fromkeys(k for r in records for k in r.fields))
    for key in keys:
        present = [(r.fields[key], w) for r, w in zip(records, weights, strict=True) if key in r.fields]
        first = present[0][0]
        if isinstance(first, str):
            out[key] = first
            continue
        numbers = [(float(v), w) for v, w in present if not isinstance(v, str)]
        spec = specs.get(key)
        if (spec is not None and spec.extensive) or not use_weights:
            out[key] = sum(v for v, _ in numbers) / len(numbers)
        else:
            total = sum(w for _, w in numbers if w is not None)
            out[key] = sum(v * (w or 0.0) for v, w in numbers) / total
    return out


# --------------------------------------------------------------------------- assembly


def _is_dict_field(annotation: Any) -> bool:
    return get_origin(annotation) is dict


def _is_tuple_field(annotation: Any) -> bool:
    return get_origin(annotation) is tuple or any(get_origin(a) is tuple for a in get_args(annotation))


def _is_int_field(annotation: Any) -> bool:
    return annotation is int or int in get_args(annotation)


def _scalar(model: Any, section: str, flat: Mapping[str, float | str]) -> dict[str, Any]:
    """Scalar model fields from ``<section>.<field>`` keys (ints rounded), dict fields from subkeys."""
    out: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        if _is_dict_field(info.annotation):
            prefix = f"{section}.{name}."
            entries = {k[len(prefix) :]: v for k, v in flat.items() if k.startswith(prefix)}
            if entries:
                value_type = get_args(info.annotation)[1]
                out[name] = {
                    k: int(round(float(v))) if value_type is int else float(v) for k, v in entries.items()
                }
            continue
        key = f"{section}.{name}"
        if key not in flat:
            continue
        value = flat[key]
        if _is_int_field(info.annotation) and not isinstance(value, str):
            out[name] = int(round(value))
        else:
            out[name] = value
    return out


def _dims(flat: Mapping[str, float | str], prefix: str) -> tuple[int, int, int] | None:
    values = [flat.get(f"{prefix}.{a}") for a in "xyz"]
    if any(v is None or isinstance(v, str) for v in values):
        return None
    x, y, z = (int(round(float(v))) for v in values if v is not None and not isinstance(v, str))
    return x, y, z


def occupancy_limiter(limits: Mapping[str, int], theoretical_pct: float | None) -> str | None:
    """The resource allowing the fewest blocks per SM; None when occupancy is already 100 % or unknown.

    Args:
        limits: blocks per SM each resource allows (keys in ``LIMITER_ORDER``).
        theoretical_pct: theoretical occupancy, % (at 100 % nothing limits it below the hardware).

    Returns:
        The limiter name; ties go to the first in ``LIMITER_ORDER``.
    """
    if not limits or (theoretical_pct is not None and theoretical_pct >= 99.999):
        return None
    lowest = min(limits.values())
    order = {name: i for i, name in enumerate(LIMITER_ORDER)}
    return min((k for k, v in limits.items() if v == lowest), key=lambda k: order.get(k, len(order)))


def assemble(flat: Mapping[str, float | str]) -> tuple[LaunchConfig, Occupancy, Metrics, DeviceInfo]:
    """Build the canonical models from flat canonical values.

    Args:
        flat: canonical keys → values (one launch, or aggregated).

    Returns:
        Launch configuration, occupancy, metrics and device (with peaks).
    """
    launch_kwargs = _scalar(LaunchConfig, "launch", flat)
    for dims in ("grid", "block"):
        value = _dims(flat, f"launch.{dims}")
        if value is not None:
            launch_kwargs[dims] = value
    occupancy_kwargs = _scalar(Occupancy, "occupancy", flat)
    occupancy_kwargs["limiter"] = occupancy_limiter(
        occupancy_kwargs.get("blocks_per_sm_limits", {}), occupancy_kwargs.get("theoretical_pct")
    )
    peaks_kwargs = _scalar(DevicePeaks, "peaks", flat)
    peaks = DevicePeaks(**peaks_kwargs, source="report" if peaks_kwargs else "unknown")
    device_kwargs = _scalar(DeviceInfo, "device", flat)
    major, minor = flat.get("device.cc_major"), flat.get("device.cc_minor")
    if isinstance(major, float) and isinstance(minor, float):
        device_kwargs["compute_capability"] = f"{int(major)}.{int(minor)}"
        device_kwargs["arch"] = f"sm_{int(major)}{int(minor)}"
    device = DeviceInfo(**device_kwargs, vendor="nvidia", peaks=peaks)
    return (
        LaunchConfig(**launch_kwargs),
        Occupancy(**occupancy_kwargs),
        Metrics(**_scalar(Metrics, "metrics", flat)),
        device,
    )


def unknown_targets(keys: Iterable[str]) -> list[str]:
    """Map keys that ``assemble`` would not consume (typos in the map file)."""
    known: set[str] = {"device.cc_major", "device.cc_minor"}
    prefixes: list[str] = []
    for section, model in (
        ("launch", LaunchConfig),
        ("occupancy", Occupancy),
        ("metrics", Metrics),
        ("device", DeviceInfo),
        ("peaks", DevicePeaks),
    ):
        for name, info in model.model_fields.items():
            if _is_dict_field(info.annotation):
                prefixes.append(f"{section}.{name}.")
            elif _is_tuple_field(info.annotation):
                known.update(f"{section}.{name}.{a}" for a in "xyz")
            else:
                known.add(f"{section}.{name}")
    return sorted(
        k for k in keys if k not in known and not any(k.startswith(p) and len(k) > len(p) for p in prefixes)
    )


# --------------------------------------------------------------------------- kernels and profile


def _merge_findings(records: Sequence[LaunchRecord]) -> list[ToolFinding]:
    seen: set[tuple[str, str, str]] = set()
    out: list[ToolFinding] = []
    for record in records:
        for finding in record.findings:
            key = (finding.rule_id, finding.title, finding.kind)
            if key not in seen:
                seen.add(key)
                out.append(finding)
    return out


def _merge_source_lines(records: Sequence[LaunchRecord]) -> list[SourceLine]:
    merged: dict[tuple[str, int], dict[str, Any]] = {}
    for record in records:
        for line in record.source_lines:
            entry = merged.setdefault((line.file, line.line), {"text": None, "samples": None, "notes": []})
            entry["text"] = entry["text"] or line.text
            if line.samples is not None:
                entry["samples"] = (entry["samples"] or 0.0) + line.samples
            if line.note and line.note not in entry["notes"]:
                entry["notes"].append(line.note)
    lines = [
        SourceLine(file=f, line=n, text=e["text"], samples=e["samples"], note=" ".join(e["notes"]) or None)
        for (f, n), e in merged.items()
    ]
    lines.sort(key=lambda s: -(s.samples or 0.0))
    marked = [s for s in lines if s.note]
    hot = [s for s in lines if not s.note][: max(0, MAX_SOURCE_LINES - len(marked))]
    return sorted([*marked, *hot], key=lambda s: (-(s.samples or 0.0), s.file, s.line))


def build_kernel(records: Sequence[LaunchRecord], metric_map: MetricMap | None = None) -> KernelProfile:
    """One ``KernelProfile`` from the launches of one kernel.

    Args:
        records: launches with the same group key (at least one).
        metric_map: the map (default: the ncu map).

    Returns:
        The kernel with per-launch mean metrics, summed ``total_duration_s`` and merged findings.
    """
    flat = aggregate_fields(records, metric_map)
    launch, occupancy, metrics, device = assemble(flat)
    durations = [d for d in (r.duration_s for r in records) if d is not None]
    counts = [r.raw_metric_count for r in records if r.raw_metric_count is not None]
    return KernelProfile(
        name=records[0].name,
        base_name=records[0].base_name,
        invocations=len(records),
        total_duration_s=sum(durations) if durations else None,
        launch=launch,
        occupancy=occupancy,
        metrics=metrics,
        device=device,
        tool_findings=_merge_findings(records),
        source_lines=_merge_source_lines(records),
        raw_metric_count=max(counts) if counts else None,
        harness=records[0].harness,
    )


def filter_launches(
    records: Sequence[LaunchRecord], kernel_regex: str | None, *, source: str
) -> list[LaunchRecord]:
    """Keep launches whose base or demangled name matches ``kernel_regex`` (``re.search``).

    Raises:
        NoKernelsProfiled: nothing matches (``available`` lists the names there are).
    """
    pattern = compile_kernel_filter(kernel_regex)
    if pattern is None:
        return list(records)
    kept = [r for r in records if pattern.search(r.base_name) or pattern.search(r.name)]
    if not kept:
        available = list(dict.fromkeys(r.base_name for r in records))
        if not available:  # nothing was recorded at all: the run, not the filter, is at fault
            raise NoKernelsProfiled(f"no kernel in {source}", hint="check that the program launches kernels")
        raise KernelFilterUnmatched(
            f"no kernel in {source} matches {kernel_regex!r}",
            hint="kernels there: " + ", ".join(available[:20]) + (" ..." if len(available) > 20 else ""),
            available=available,
        )
    return kept


def build_profile(
    records: Sequence[LaunchRecord],
    *,
    source: str,
    tool_version: str | None,
    command: str | None,
    notes: Iterable[str] = (),
    kernel_regex: str | None = None,
) -> Profile:
    """The ``Profile`` of a report's launches (filtered, grouped, aggregated).

    Raises:
        NoKernelsProfiled: no launch at all, or none matching ``kernel_regex``.
    """
    if not records:
        raise NoKernelsProfiled(
            f"{source} holds no profiled kernel",
            hint="check that the application launched a kernel and that the ncu filters matched it",
        )
    kept = filter_launches(records, kernel_regex, source=source)
    all_notes = sorted(set(notes))
    if len(kept) != len(records):
        all_notes.append(
            f"kernel filter {kernel_regex!r} kept {len(kept)} of {len(records)} profiled launches"
        )
    kernels = [build_kernel(group) for group in group_launches(kept)]
    for kernel in kernels:
        busy = uncounted_tensor_work(kernel.metrics)
        if busy is not None:
            all_notes.append(
                f"{kernel.base_name}: the tensor pipe was busy {busy:.3g} % of the time, but this report has no "
                "tensor-core FLOP counter for its GPU, so its tensor FLOPs are not measured and it is left off "
                "the roofline; record the report again with this perfagent, which collects them"
            )
    return Profile(
        tool="ncu",
        tool_version=tool_version,
        mode="counters",
        source=source,
        command=command,
        kernels=kernels,
        notes=all_notes,
    )


def base_name_from_demangled(name: str) -> str:
    """The bare function name of a demangled kernel signature.

    ``void ns::gemm<(int)128, float>(int, const float *)`` → ``gemm``. Parameters, template arguments,
    the return type and namespaces are removed (as ncu's ``--kernel-name-base function`` shows it).
    """
    text = name.strip()
    text = _strip_trailing_group(text, "(", ")")
    text = _strip_trailing_group(text, "<", ">")
    text = text.split()[-1] if text.split() else text
    return text.rsplit("::", 1)[-1] or name.strip()


def _strip_trailing_group(text: str, opening: str, closing: str) -> str:
    """Remove a balanced ``opening...closing`` group at the end of ``text`` (if there is one)."""
    if not text.endswith(closing):
        return text
    depth = 0
    for i in range(len(text) - 1, -1, -1):
        if text[i] == closing:
            depth += 1
        elif text[i] == opening:
            depth -= 1
            if depth == 0:
                return text[:i].rstrip()
    return text
