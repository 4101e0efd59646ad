"""Reader for rocprofv3's rocpd SQLite database (``--output-format rocpd``, the default since ROCm 7.0).

Built against the documented schema only (rocprof.md 1.3; ``rocprofiler-sdk-rocpd/data_views.sql`` at
ROCm/rocm-systems@5e50e66c): the ``kernels`` view (name, dispatch_id, start, end, grid_x..z,
workgroup_x..z, lds_size, scratch_size, vgpr_count, accum_vgpr_count, sgpr_count, agent_abs_index, ...),
the ``pmc_events`` view (dispatch_id, counter_name, counter_value) and the ``rocpd_info_agent`` table or
view (name, model_name, product_name, extdata). NOT verified against a real database: no real rocpd file
was available when this was written (docs/amd.md says so); ``rocpd convert -i DB --output-format csv``
produces the CSV files this package reads and is the fallback.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

from profilers.errors import BadReport
from profilers.rocprof.dispatch import Dispatch

SQLITE_MAGIC = b"SQLite format 3\x00"


@contextmanager
def _connect(path: Path) -> Iterator[sqlite3.Connection]:
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise BadReport(f"cannot open {path} as SQLite: {exc}", hint="is it a rocpd database?") from exc
    with closing(conn):
        yield conn


def _objects(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')").fetchall()
    return {str(r[0]) for r in rows}


def is_rocpd(path: Path) -> bool:
    """True when ``path`` is an SQLite file with rocpd's kernel-dispatch view or tables (cheap check)."""
    try:
        with path.open("rb") as handle:
            if handle.read(16) != SQLITE_MAGIC:
                return False
        with _connect(path) as conn:
            names = _objects(conn)
    except (OSError, sqlite3.Error, BadReport):
        return False
    return "kernels" in names or any(n.startswith("rocpd_kernel_dispatch") for n in names)


def _columns(conn: sqlite3.Connection, view: str) -> set[str]:
    return {str(r[1]) for r in conn.execute(f"PRAGMA table_info(`{view}`)").fetchall()}


def _int(value: object) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str | bytes):
        try:
            return int(value)
        except ValueError:
            return None
    return None


@dataclass(frozen=True)
class RocpdAgent:
    """A GPU agent as rocpd records it."""

    absolute_index: int | None
    name: str | None
    model_name: str | None
    product_name: str | None
    extdata: dict[str, object]
    """The agent's JSON properties (key names as rocpd stores them; not verified on a real file)."""


@dataclass(frozen=True)
class RocpdData:
    """What the database held."""

    dispatches: list[Dispatch]
    agents: list[RocpdAgent]
    metadata: dict[str, str]


_KERNEL_COLUMNS = (
    "name",
    "dispatch_id",
    "start",
    "end",
    "grid_x",
    "grid_y",
    "grid_z",
    "workgroup_x",
    "workgroup_y",
    "workgroup_z",
    "lds_size",
    "scratch_size",
    "vgpr_count",
    "accum_vgpr_count",
    "sgpr_count",
    "agent_abs_index",
)
"""Columns of the ``kernels`` view read per dispatch, in the order ``_dispatch`` unpacks them."""


def read_rocpd(path: Path) -> RocpdData:
    """Dispatches (with counters from ``pmc_events``), GPU agents and metadata of a rocpd database.

    Raises:
        BadReport: not a rocpd database, or its ``kernels`` view is missing (e.g. a pre-view version).
    """
    with _connect(path) as conn:
        try:
            names = _objects(conn)
        except sqlite3.Error as exc:
            raise BadReport(f"{path} is not a readable SQLite database: {exc}") from exc
        if "kernels" not in names:
            raise BadReport(
                f"{path} has no 'kernels' view (not a rocpd database, or an unsupported schema)",
                hint="convert it with `rocpd convert -i FILE --output-format csv` and read the CSV files",
            )
        rows = _kernel_rows(conn, path)
        counters = _pmc_counters(conn) if "pmc_events" in names else {}
        agents = _agents(conn, names)
        metadata = _metadata(conn, names)
    dispatches = [_dispatch(index, row, counters) for index, row in enumerate(rows) if row[0] is not None]
    return RocpdData(dispatches=dispatches, agents=agents, metadata=metadata)


def _kernel_rows(conn: sqlite3.Connection, path: Path) -> list[tuple[object, ...]]:
    """The ``kernels`` view's rows in start order (a column the view lacks reads as NULL)."""
    cols = _columns(conn, "kernels")
    select = ", ".join(f"`{c}`" if c in cols else "NULL" for c in _KERNEL_COLUMNS)
    order = "`start`" if "start" in cols else "rowid"
    try:
        return [tuple(r) for r in conn.execute(f"SELECT {select} FROM `kernels` ORDER BY {order}").fetchall()]
    except sqlite3.Error as exc:
        raise BadReport(f"cannot query the kernels view of {path}: {exc}") from exc


def _pmc_counters(conn: sqlite3.Connection) -> dict[int, dict[str, float]]:
    """Counter values per dispatch id from ``pmc_events`` (summed over repeats; {} when unreadable)."""
    counters: dict[int, dict[str, float]] = {}
    try:
        for dispatch_id, counter, value in conn.execute(
            "SELECT dispatch_id, counter_name, counter_value FROM `pmc_events`"
        ):
            did = _int(dispatch_id)
            if did is None or counter is None or value is None:
                continue
            bucket = counters.setdefault(did, {})
            bucket[str(counter)] = bucket.get(str(counter), 0.0) + float(value)
    except sqlite3.Error:
        return {}
    return counters


def _dispatch(index: int, row: tuple[object, ...], counters: dict[int, dict[str, float]]) -> Dispatch:
    """One row of ``kernels`` (columns in ``_KERNEL_COLUMNS`` order) as a ``Dispatch``."""
    (name, did, start, end, gx, gy, gz, wx, wy, wz, lds, scratch, vgpr, agpr, sgpr, agent) = row
    dispatch_id = _int(did)
    grid = (_int(gx), _int(gy), _int(gz))
    wg = (_int(wx), _int(wy), _int(wz))
    return Dispatch(
        kernel=str(name),
        index=index,
        dispatch_id=dispatch_id,
        start_ns=_int(start),
        end_ns=_int(end),
        grid=(grid[0], grid[1] or 1, grid[2] or 1) if grid[0] is not None else None,
        workgroup=(wg[0], wg[1] or 1, wg[2] or 1) if wg[0] is not None else None,
        lds_bytes=_int(lds),
        scratch_bytes=_int(scratch),
        arch_vgpr=_int(vgpr),
        accum_vgpr=_int(agpr),
        sgpr=_int(sgpr),
        agent=None if agent is None else str(agent),
        counters=counters.get(dispatch_id, {}) if dispatch_id is not None else {},
    )


def _agents(conn: sqlite3.Connection, names: set[str]) -> list[RocpdAgent]:
    table = "rocpd_info_agent" if "rocpd_info_agent" in names else None
    if table is None:
        table = next((n for n in sorted(names) if n.startswith("rocpd_info_agent")), None)
    if table is None:
        return []
    cols = _columns(conn, table)
    wanted = ["absolute_index", "name", "model_name", "product_name", "extdata", "type"]
    select = ", ".join(f"`{c}`" if c in cols else "NULL" for c in wanted)
    agents: list[RocpdAgent] = []
    try:
        for abs_index, name, model, product, extdata, kind in conn.execute(f"SELECT {select} FROM `{table}`"):
            if kind is not None and str(kind).upper() != "GPU":
                continue
            try:
                ext = json.loads(extdata) if isinstance(extdata, str | bytes) else {}
            except ValueError:
                ext = {}
            agents.append(
                RocpdAgent(
                    absolute_index=_int(abs_index),
                    name=None if name is None else str(name),
                    model_name=None if model is None else str(model),
                    product_name=None if product is None else str(product),
                    extdata=ext if isinstance(ext, dict) else {},
                )
            )
    except sqlite3.Error:
        return []
    return agents


def _metadata(conn: sqlite3.Connection, names: set[str]) -> dict[str, str]:
    table = "rocpd_metadata" if "rocpd_metadata" in names else None
    if table is None:
        table = next((n for n in sorted(names) if n.startswith("rocpd_metadata")), None)
    if table is None:
        return {}
    try:
        return {str(t): str(v) for t, v in conn.execute(f"SELECT tag, value FROM `{table}`")}
    except sqlite3.Error:
        return {}
