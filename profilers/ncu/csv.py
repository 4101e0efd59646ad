"""Reading ncu CSV exports of the raw page (``ncu --import R.ncu-rep --csv --page raw``), a fallback to
``.ncu-rep`` for machines without ``ncu_report`` or for CSV files people already have.

Layout (ncu.md section 6): row 1 = column names (11 identity columns ``ID, Process ID, Process Name,
Host Name, Kernel Name, Context, Stream, Block Size, Grid Size, Device, CC``, then the metrics), row 2 =
units (empty for identity columns), then one row per profiled launch. Columns are indexed by name (older
releases and ``--nvtx`` add columns). Numbers follow the exporting machine's locale (``"1,193,333.03"``,
``"27.595.520"``, ``"65,77"``); ``parse_number`` reads all of these; missing values are ``n/a``. Lines
starting with ``==`` (ncu's own messages in live runs) are dropped.

The ``details`` page (long format, one metric per row) is not read: it holds display labels, not metric
names. The raw page holds no rule results or source lines, and values are rounded as printed.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from profilers.errors import BadReport
from profilers.model import Profile
from profilers.ncu.mapping import (
    LaunchRecord,
    RawValue,
    base_name_from_demangled,
    build_profile,
    evaluate_fields,
    to_base_values,
)

IDENTITY_COLUMNS: tuple[str, ...] = (
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
)
"""ncu's identity columns of the raw page (not metrics)."""
_EXTRA_IDENTITY = frozenset({"Kernel Time", "Function Name", "Demangled Name", "NVTX Range"})
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_DIMS = re.compile(r"\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)")
_RAW_HINT = (
    "export the raw page: ncu --import REPORT.ncu-rep --csv --page raw --print-units base > REPORT.csv"
)


def parse_number(text: str) -> float | None:
    """Parse a number as ncu prints it in any locale; None for empty, ``n/a`` or non-numeric text.

    Rules: both ``,`` and ``.`` present → the last one is the decimal mark; several of the same mark →
    thousands separators; a single ``,`` followed by exactly three digits → thousands separator (ncu's
    default English locale; run ncu with ``LC_ALL=C`` to avoid the ambiguity), otherwise a decimal comma.

    Args:
        text: the cell.

    Returns:
        The value, or None.
    """
    s = text.strip().replace("\u00a0", "").replace("\u202f", "").replace("'", "")
    if not s or s.lower() in ("n/a", "nan", "-", "(!) n/a"):
        return None
    if _PLAIN_NUMBER.fullmatch(s):
        return float(s)
    commas, dots = s.count(","), s.count(".")
    if commas and dots:
        if s.rfind(",") > s.rfind("."):
            s = s.replace(".", "").replace(",", ".")
        else:
            s = s.replace(",", "")
    elif commas:
        head, _, tail = s.rpartition(",")
        s = (
            s.replace(",", "")
            if commas > 1 or (len(tail) == 3 and head.lstrip("+-").isdigit())
            else s.replace(",", ".")
        )
    elif dots > 1:
        s = s.replace(".", "")
    s = s.replace(" ", "")
    return float(s) if _PLAIN_NUMBER.fullmatch(s) else None


def _rows(path: Path) -> list[list[str]]:
    try:
        text = path.read_text(encoding="utf-8-sig", errors="replace")
    except OSError as exc:
        raise BadReport(f"{path} cannot be read ({exc.strerror or exc})", hint=_RAW_HINT) from None
    lines = [line for line in text.splitlines() if not line.startswith("==")]
    return [row for row in csv.reader(io.StringIO("\n".join(lines))) if row]


def looks_like_ncu_csv(path: Path) -> bool:
    """Cheap check: a ``.csv`` whose header holds ncu's ``ID`` and ``Kernel Name`` columns."""
    if Path(path).suffix.lower() != ".csv":
        return False
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as handle:
            head = handle.read(8192)
    except OSError:
        return False
    for line in head.splitlines():
        if line.startswith("==") or not line.strip():
            continue
        header = next(csv.reader([line]), [])
        return "ID" in header and "Kernel Name" in header
    return False


def read_ncu_csv(path: Path, *, kernel_regex: str | None = None) -> Profile:
    """Read an ncu raw-page CSV export into the canonical profile (same metric map as ``.ncu-rep``).

    Args:
        path: the CSV file.
        kernel_regex: keep kernels whose function or demangled name matches (``re.search``).

    Returns:
        One ``KernelProfile`` per (demangled name, grid, block).

    Raises:
        BadReport: missing file, not an ncu CSV, or a ``--page details`` export.
        NoKernelsProfiled: no data rows, or none matching ``kernel_regex``.
    """
    path = Path(path)
    if not path.is_file():
        raise BadReport(f"{path} does not exist", hint=_RAW_HINT)
    table = _Table.read(path)
    notes: set[str] = {
        "read from an ncu CSV export: values are rounded as printed; no rule results or source lines"
    }
    records = [table.launch(row, notes) for row in table.body]
    return build_profile(
        records, source=str(path), tool_version=None, command=None, notes=notes, kernel_regex=kernel_regex
    )


@dataclass(frozen=True)
class _Table:
    """An ncu raw-page CSV: its header, the units row (blank cells when ncu printed none), the launch rows."""

    header: list[str]
    units: list[str]
    body: list[list[str]]
    column: dict[str, int]
    """Each column's index by name."""
    metric_columns: list[tuple[int, str]]
    """(index, name) of every column that is not an identity column (ID, kernel name, grid, ...)."""

    @classmethod
    def read(cls, path: Path) -> _Table:
        """Raises BadReport: a ``--page details`` export, or not an ncu CSV."""
        rows = _rows(path)
        header = rows[0] if rows else []
        if "Metric Name" in header and "Metric Value" in header:
            raise BadReport(
                f"{path} is an ncu --page details CSV, which perfagent does not read", hint=_RAW_HINT
            )
        if "ID" not in header or "Kernel Name" not in header:
            raise BadReport(
                f"{path} is not an ncu CSV export (no 'ID' / 'Kernel Name' columns)", hint=_RAW_HINT
            )
        column = {name: i for i, name in enumerate(header)}
        body = rows[1:]
        units: list[str] = [""] * len(header)
        if body and not body[0][column["ID"]].strip():  # the units row has no launch ID
            units = (body[0] + [""] * len(header))[: len(header)]
            body = body[1:]
        identity = set(IDENTITY_COLUMNS) | _EXTRA_IDENTITY
        metric_columns = [(i, name) for i, name in enumerate(header) if name not in identity]
        return cls(header, units, body, column, metric_columns)

    def launch(self, row: list[str], notes: set[str]) -> LaunchRecord:
        """One launch: its metrics in base units, and its grid and block from the identity columns when the
        metrics do not give them."""
        column, metric_columns = self.column, self.metric_columns
        cells = (row + [""] * len(self.header))[: len(self.header)]
        raw: dict[str, tuple[RawValue, str | None]] = {}
        for i, name in metric_columns:
            number = parse_number(cells[i])
            raw[name] = (number if number is not None else (cells[i].strip() or None), self.units[i])
        fields = evaluate_fields(to_base_values(raw, notes))
        for key, text in (
            ("launch.grid", cells[column["Grid Size"]] if "Grid Size" in column else ""),
            ("launch.block", cells[column["Block Size"]] if "Block Size" in column else ""),
        ):
            match = _DIMS.search(text)
            if match and f"{key}.x" not in fields:
                for axis, value in zip("xyz", match.groups(), strict=True):
                    fields[f"{key}.{axis}"] = float(value)
        name = cells[column["Kernel Name"]].strip()
        return LaunchRecord(
            name=name,
            base_name=base_name_from_demangled(name),
            fields=fields,
            raw_metric_count=len(metric_columns),
        )
