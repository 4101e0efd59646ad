"""Readers for the CSV files of rocprofv3 (kernel trace, counter collection, agent info) and rocprof v1.

Every reader looks columns up by name, case- and punctuation-insensitively (``Kernel_Name`` =
``KernelName``), so both rocprofv3 schemas (2024: 18/16 columns, current: 22/19) and v1's ``results.csv``
go through the same code (rocprof.md section 1.2 and pitfall 9). Readers return ``Dispatch`` records in
file order and never invent values: a column the file lacks stays None.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from profilers.errors import BadReport
from profilers.rocprof.dispatch import Dispatch

# Large fields: rocprof-compute's joined pmc_perf.csv has 2,718 columns and PyTorch kernel names run to KBs.
csv.field_size_limit(1 << 26)

_NON_ALNUM = re.compile(r"[^a-z0-9]")
_AGENT_NUMBER = re.compile(r"(\d+)\s*$")


def norm(column: str) -> str:
    """Normalise a column name for lookup: lower case, letters and digits only."""
    return _NON_ALNUM.sub("", column.strip().lower())


def read_header(path: Path) -> list[str]:
    """The first CSV row of ``path`` (empty when unreadable or empty)."""
    try:
        with path.open(newline="", encoding="utf-8-sig", errors="replace") as handle:
            row = next(csv.reader(handle), [])
    except OSError:
        return []
    return [c.strip() for c in row]


def iter_rows(path: Path) -> Iterator[dict[str, str]]:
    """Rows of ``path`` as {normalised column: raw text}; the first of duplicate columns wins.

    Raises:
        BadReport: the file cannot be read.
    """
    try:
        handle = path.open(newline="", encoding="utf-8-sig", errors="replace")
    except OSError as exc:
        raise BadReport(f"cannot read {path}: {exc.strerror}", hint="check the path") from exc
    with handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None:
            return
        keys = [norm(c) for c in header]
        for row in reader:
            if not row or all(not cell.strip() for cell in row):
                continue
            record: dict[str, str] = {}
            for key, cell in zip(keys, row, strict=False):
                record.setdefault(key, cell)
            yield record


def to_float(text: str | None) -> float | None:
    """Parse a number ('60.000000', '0.00000000e+00', '1388.93'); None for empty or non-numeric text."""
    if text is None:
        return None
    text = text.strip()
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def to_int(text: str | None) -> int | None:
    """Parse an integer exactly (timestamps exceed float precision); accepts '256.0'. None otherwise."""
    if text is None:
        return None
    text = text.strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        value = to_float(text)
        return int(value) if value is not None and value.is_integer() else None


def numeric_columns(record: Mapping[str, str], columns: list[str]) -> dict[str, float]:
    """The given columns of a row that parse as numbers, keyed by their printed names."""
    values: dict[str, float] = {}
    for column in columns:
        value = to_float(record.get(norm(column)))
        if value is not None:
            values[column] = value
    return values


def first(record: Mapping[str, str], *names: str) -> str | None:
    """The first present, non-empty value among the (normalised) column ``names``."""
    for name in names:
        value = record.get(norm(name))
        if value is not None and value.strip() != "":
            return value
    return None


def dims(record: Mapping[str, str], prefix: str) -> tuple[int, int, int] | None:
    """``<prefix>_X/_Y/_Z`` as a tuple (missing Y/Z count as 1), or None without an X column."""
    x = to_int(first(record, f"{prefix}_X"))
    if x is None:
        return None
    y = to_int(first(record, f"{prefix}_Y")) or 1
    z = to_int(first(record, f"{prefix}_Z")) or 1
    return (x, y, z)


# --------------------------------------------------------------------------- format detection


def looks_like_v3_kernel_trace(header: list[str]) -> bool:
    """rocprofv3 ``*_kernel_trace.csv`` (either schema)."""
    keys = {norm(c) for c in header}
    return {"kind", "kernelname", "starttimestamp", "endtimestamp", "gridsizex"} <= keys


def looks_like_v3_counter_collection(header: list[str]) -> bool:
    """rocprofv3 ``*_counter_collection.csv`` (long format, either schema)."""
    keys = {norm(c) for c in header}
    return {"countername", "countervalue", "kernelname", "dispatchid"} <= keys


def looks_like_v3_agent_info(header: list[str]) -> bool:
    """rocprofv3 ``*_agent_info.csv``."""
    keys = {norm(c) for c in header}
    return {"agenttype", "cucount", "nodeid"} <= keys


def looks_like_v1_results(header: list[str]) -> bool:
    """rocprof v1 ``results.csv`` (trace with timestamps, or counters)."""
    keys = {norm(c) for c in header}
    return {"index", "kernelname", "grd", "wgr"} <= keys


# --------------------------------------------------------------------------- rocprofv3


def read_v3_kernel_trace(path: Path) -> list[Dispatch]:
    """Dispatches of a rocprofv3 kernel trace (timestamps, launch configuration, registers)."""
    out: list[Dispatch] = []
    for index, rec in enumerate(iter_rows(path)):
        name = first(rec, "Kernel_Name")
        if name is None:
            continue
        out.append(
            Dispatch(
                kernel=name,
                index=index,
                dispatch_id=to_int(first(rec, "Dispatch_Id")),
                start_ns=to_int(first(rec, "Start_Timestamp")),
                end_ns=to_int(first(rec, "End_Timestamp")),
                grid=dims(rec, "Grid_Size"),
                workgroup=dims(rec, "Workgroup_Size"),
                lds_bytes=to_int(first(rec, "LDS_Block_Size", "Group_Segment_Size")),
                scratch_bytes=to_int(first(rec, "Scratch_Size", "Private_Segment_Size")),
                arch_vgpr=to_int(first(rec, "VGPR_Count", "Arch_VGPR_Count")),
                accum_vgpr=to_int(first(rec, "Accum_VGPR_Count")),
                sgpr=to_int(first(rec, "SGPR_Count")),
                agent=first(rec, "Agent_Id"),
            )
        )
    return out


def read_v3_counter_collection(path: Path) -> list[Dispatch]:
    """Dispatches of a rocprofv3 counter collection (long format pivoted to one record per dispatch)."""
    order: list[tuple[str, str]] = []
    meta: dict[tuple[str, str], dict[str, str]] = {}
    counters: dict[tuple[str, str], dict[str, float]] = {}
    for rec in iter_rows(path):
        name = first(rec, "Kernel_Name")
        counter = first(rec, "Counter_Name")
        if name is None or counter is None:
            continue
        key = (first(rec, "Dispatch_Id") or first(rec, "Correlation_Id") or str(len(order)), name)
        if key not in meta:
            order.append(key)
            meta[key] = rec
            counters[key] = {}
        value = to_float(first(rec, "Counter_Value"))
        if value is not None:
            # One row per counter and dispatch; should a tool split one, the parts add up.
            counters[key][counter.strip()] = counters[key].get(counter.strip(), 0.0) + value
    out: list[Dispatch] = []
    for index, key in enumerate(order):
        rec = meta[key]
        out.append(
            Dispatch(
                kernel=key[1],
                index=index,
                dispatch_id=to_int(first(rec, "Dispatch_Id")),
                start_ns=to_int(first(rec, "Start_Timestamp")),
                end_ns=to_int(first(rec, "End_Timestamp")),
                grid_size=to_int(first(rec, "Grid_Size")),
                workgroup_size=to_int(first(rec, "Workgroup_Size")),
                lds_bytes=to_int(first(rec, "LDS_Block_Size", "Group_Segment_Size")),
                scratch_bytes=to_int(first(rec, "Scratch_Size", "Private_Segment_Size")),
                arch_vgpr=to_int(first(rec, "VGPR_Count", "Arch_VGPR_Count")),
                accum_vgpr=to_int(first(rec, "Accum_VGPR_Count")),
                sgpr=to_int(first(rec, "SGPR_Count")),
                agent=first(rec, "Agent_Id"),
                counters=counters[key],
            )
        )
    return out


@dataclass(frozen=True)
class AgentRow:
    """One GPU agent of a rocprofv3 ``*_agent_info.csv``."""

    node_id: int | None
    logical_node_id: int | None
    name: str | None
    """gfx target, e.g. 'gfx950'."""
    product_name: str | None
    model_name: str | None
    cu_count: int | None
    num_xcc: int | None
    simd_per_cu: int | None
    max_waves_per_cu: int | None
    wave_front_size: int | None
    lds_kib: int | None
    max_engine_clk_mhz: int | None
    device_id: int | None
    gfx_target_version: int | None
    raw: dict[str, str] = field(default_factory=dict)


def read_v3_agent_info(path: Path) -> list[AgentRow]:
    """The GPU agents (CPU agents skipped) of a rocprofv3 agent-info file, in file order."""
    agents: list[AgentRow] = []
    for rec in iter_rows(path):
        if (first(rec, "Agent_Type") or "").strip().upper() != "GPU":
            continue
        agents.append(
            AgentRow(
                node_id=to_int(first(rec, "Node_Id")),
                logical_node_id=to_int(first(rec, "Logical_Node_Id")),
                name=first(rec, "Name"),
                product_name=first(rec, "Product_Name"),
                model_name=first(rec, "Model_Name"),
                cu_count=to_int(first(rec, "Cu_Count")),
                num_xcc=to_int(first(rec, "Num_Xcc")),
                simd_per_cu=to_int(first(rec, "Simd_Per_Cu")),
                max_waves_per_cu=to_int(first(rec, "Max_Waves_Per_Cu")),
                wave_front_size=to_int(first(rec, "Wave_Front_Size")),
                lds_kib=to_int(first(rec, "Lds_Size_In_Kb")),
                max_engine_clk_mhz=to_int(first(rec, "Max_Engine_Clk_Fcompute")),
                device_id=to_int(first(rec, "Device_Id")),
                gfx_target_version=to_int(first(rec, "Gfx_Target_Version")),
                raw=dict(rec),
            )
        )
    return agents


def agent_for(agents: list[AgentRow], agent_id: str | None) -> AgentRow | None:
    """The agent a dispatch's ``Agent_Id`` names ('Agent 2' or 2): rocprofv3's default index is the
    logical node id, so that is matched first, then the node id; else the first GPU agent."""
    if not agents:
        return None
    number = None
    if agent_id:
        match = _AGENT_NUMBER.search(agent_id)
        number = int(match.group(1)) if match else None
    if number is not None:
        for agent in agents:
            if agent.logical_node_id == number:
                return agent
        for agent in agents:
            if agent.node_id == number:
                return agent
    return agents[0]


# --------------------------------------------------------------------------- rocprof v1

_V1_META = {
    norm(c)
    for c in (
        "Index",
        "KernelName",
        "gpu-id",
        "queue-id",
        "queue-index",
        "pid",
        "tid",
        "grd",
        "wgr",
        "lds",
        "scr",
        "vgpr",
        "arch_vgpr",
        "accum_vgpr",
        "sgpr",
        "wave_size",
        "sig",
        "obj",
        "DispatchNs",
        "BeginNs",
        "EndNs",
        "CompleteNs",
        "DurationNs",
    )
}


def read_v1_results(path: Path) -> list[Dispatch]:
    """Dispatches of a rocprof v1 ``results.csv``: timestamps (``--timestamp on``) and/or counters.

    Every column that is not v1's fixed metadata and parses as a number is taken as a counter under its
    printed name (``FETCH_SIZE``, ``TCP_TCC_READ_REQ_sum``, ...).
    """
    header = read_header(path)
    counter_columns = [c for c in header if norm(c) not in _V1_META]
    out: list[Dispatch] = []
    for position, rec in enumerate(iter_rows(path)):
        name = first(rec, "KernelName")
        if name is None:
            continue
        values = numeric_columns(rec, counter_columns)
        index = to_int(first(rec, "Index"))
        out.append(
            Dispatch(
                kernel=name,
                index=position if index is None else index,
                dispatch_id=index,
                start_ns=to_int(first(rec, "BeginNs")),
                end_ns=to_int(first(rec, "EndNs")),
                grid_size=to_int(first(rec, "grd")),
                workgroup_size=to_int(first(rec, "wgr")),
                lds_bytes=to_int(first(rec, "lds")),
                scratch_bytes=to_int(first(rec, "scr")),
                arch_vgpr=to_int(first(rec, "arch_vgpr", "vgpr")),
                accum_vgpr=to_int(first(rec, "accum_vgpr")),
                sgpr=to_int(first(rec, "sgpr")),
                wave_size=to_int(first(rec, "wave_size")),
                agent=first(rec, "gpu-id"),
                counters=values,
            )
        )
    return out
