"""A minimal TOML writer for launch-spec copies (no TOML writer ships with Python's standard library).

Handles what a launch spec holds: strings, integers, floats, booleans, arrays of those, tables of
them, arrays of tables and tables of tables (``[variants."source.cu"]``). Keys are always quoted and
strings JSON-escaped (valid TOML basic strings), so any name survives. ``tomllib`` reads the output back.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any


def dumps(data: Mapping[str, Any]) -> str:
    """``data`` as a TOML document (None values are left out).

    Raises:
        TypeError: a value of a type TOML cannot hold here.
    """
    lines: list[str] = []
    _table(lines, [], data)
    return "\n".join(lines).strip() + "\n"


def _key(name: str) -> str:
    return json.dumps(name)


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, Sequence):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _is_table(value: Any) -> bool:
    return isinstance(value, Mapping)


def _is_table_array(value: Any) -> bool:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and bool(value)
        and all(isinstance(v, Mapping) for v in value)
    )


def _table(lines: list[str], path: list[str], data: Mapping[str, Any]) -> None:
    items = [(k, v) for k, v in data.items() if v is not None]
    for key, value in items:
        if not _is_table(value) and not _is_table_array(value):
            lines.append(f"{_key(key)} = {_scalar(value)}")
    for key, value in items:
        if _is_table(value):
            lines.append("")
            lines.append("[" + ".".join(_key(p) for p in [*path, key]) + "]")
            _table(lines, [*path, key], value)
        elif _is_table_array(value):
            for entry in value:
                lines.append("")
                lines.append("[[" + ".".join(_key(p) for p in [*path, key]) + "]]")
                _table(lines, [*path, key], entry)
