"""A launch change proposed by the LLM for a launch-spec kernel: read it, check it, or say why not.

A launch-spec kernel is launched by perfagent's harness with the spec's grid / block / dynamic shared
memory, so a rewrite that changes how many threads work on a row (a warp per row instead of a thread
per row) must change the launch too. The model proposes it as expressions, exactly like the spec's own:
``{"grid": ["ceil_div(rows, 8)"], "block": ["32 * 8"], "shared_mem": null}`` in the structured (JSON)
reply, or a ``toml`` block with a ``[launch]`` table in the fenced reply. The expressions may use only
the spec's params and defines, the device attributes every spec expression may use (``sm_count``,
``warp_size``, ...), numbers, ``+ - * / // % **`` and ``min``, ``max``, ``ceil_div``; they are evaluated
(never ``eval``-ed) for every parameter set verification runs, and must give whole, positive, legal
dimensions. A change that passes becomes the candidate's ``LaunchOverride``, which the optimize loop
writes into the candidate's spec copy like a recipe's.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Mapping
from typing import Any

from perfagent.rewrite.base import LaunchContext
from perfagent.workloads.expr import ExpressionError, Number, evaluate, names_in
from perfagent.workloads.launch_spec import DEFAULT_DEVICE_ATTRS, Expr, LaunchOverride

KEYS = ("grid", "block", "shared_mem")
"""What a reply may change in the launch."""
MAX_GRID = (2**31 - 1, 65535, 65535)
MAX_BLOCK = (1024, 1024, 64)


def schema() -> dict[str, Any]:
    """The JSON schema of the reply's ``launch`` field (strict mode: every key present, null = unchanged)."""
    dims = {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]}
    return {
        "anyOf": [
            {
                "type": "object",
                "additionalProperties": False,
                "required": list(KEYS),
                "properties": {
                    "grid": {
                        **dims,
                        "description": "grid dimensions in blocks, 1 to 3 expressions; null: unchanged",
                    },
                    "block": {
                        **dims,
                        "description": "block dimensions in threads, 1 to 3 expressions; null: unchanged",
                    },
                    "shared_mem": {
                        "anyOf": [{"type": "string"}, {"type": "null"}],
                        "description": "dynamic shared memory per block in bytes, an expression; null: unchanged",
                    },
                },
            },
            {"type": "null"},
        ],
        "description": "the new launch geometry, or null to keep the current one",
    }


def from_data(data: Any, where: str) -> LaunchOverride | None | str:
    """The change in ``data`` (the JSON ``launch`` object or the TOML ``[launch]`` table), None when it
    changes nothing, or why it is unusable."""
    if data is None:
        return None
    if not isinstance(data, Mapping):
        return f"{where} must be an object with grid, block and/or shared_mem, not {type(data).__name__}"
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        return f"{where} has unknown keys {', '.join(unknown)} (only {', '.join(KEYS)} may change)"
    values: dict[str, Any] = {}
    for key in ("grid", "block"):
        dims = data.get(key)
        if dims is None:
            continue
        if isinstance(dims, str | int) and not isinstance(dims, bool):
            dims = [dims]
        if not isinstance(dims, list) or not 1 <= len(dims) <= 3:
            return f"{where}.{key} must be a list of 1 to 3 expressions"
        for dim in dims:
            if isinstance(dim, bool) or not isinstance(dim, str | int | float):
                return f"{where}.{key} holds {dim!r}: each dimension is an expression (a string or a number)"
        values[key] = [_tidy(d) for d in dims]
    smem = data.get("shared_mem")
    if smem is not None:
        if isinstance(smem, bool) or not isinstance(smem, str | int | float):
            return f"{where}.shared_mem holds {smem!r}: it is an expression (a string or a number)"
        values["shared_mem"] = _tidy(smem)
    return LaunchOverride(**values) if values else None


def from_toml(text: str) -> LaunchOverride | None | str:
    """The change in a ```toml block (a ``[launch]`` table, or the keys at the top level)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return f"the toml block is not valid TOML ({exc})"
    if "launch" not in data:
        return from_data(data, "the toml block")
    table = data["launch"]
    if not isinstance(table, dict) or len(data) > 1:
        return "the toml block must hold one [launch] table: [launch] grid = [...], block = [...], shared_mem = ..."
    return from_data(table, "[launch]")


def check(change: LaunchOverride, context: LaunchContext) -> str | None:
    """None when ``change`` is a legal launch for every parameter set of ``context``, else why not.

    Names: the spec's params and defines and the device attributes; every grid and block dimension a
    whole number of at least 1 (block at most 1024 threads in all, z at most 64), shared memory a whole
    number of bytes from 0 to the device's limit per block.
    """
    allowed = set(context.params) | set(context.defines) | set(DEFAULT_DEVICE_ATTRS)
    for label, expr in _expressions(change):
        if isinstance(expr, str):
            unknown = sorted(names_in(expr) - allowed)
            if unknown:
                return (
                    f"launch {label} = {expr!r} uses {', '.join(unknown)}, which is not a param, define or device "
                    f"attribute of the launch spec (allowed: {', '.join(sorted(allowed))})"
                )
    for params in param_sets(context):
        names, problem = _names(context, params)
        if problem is not None:
            return problem
        shown = ", ".join(f"{k} = {_num(v)}" for k, v in sorted(params.items()))
        where = f" (at {shown})" if shown else ""
        smem_expr = change.shared_mem if change.shared_mem is not None else context.shared_mem
        try:
            grid = _dims(change.grid or context.grid, names, "grid")
            block = _dims(change.block or context.block, names, "block")
            smem = _dims([smem_expr], names, "shared_mem")[0]
        except ExpressionError as exc:
            return f"launch {exc}{where}"
        for i, (g, limit) in enumerate(zip(grid, MAX_GRID, strict=False)):
            if g < 1 or g > limit:
                return f"launch grid[{i}] = {g}{where}: must be 1 to {limit}"
        for i, (b, limit) in enumerate(zip(block, MAX_BLOCK, strict=False)):
            if b < 1 or b > limit:
                return f"launch block[{i}] = {b}{where}: must be 1 to {limit}"
        threads = math.prod(block)
        max_threads = int(DEFAULT_DEVICE_ATTRS["max_threads_per_block"])
        if threads > max_threads:
            return f"launch block {block} = {threads} threads{where}: at most {max_threads} per block"
        max_smem = int(DEFAULT_DEVICE_ATTRS["max_shared_per_block"])
        if not 0 <= smem <= max_smem:
            return f"launch shared_mem = {smem} bytes{where}: must be 0 to {max_smem}"
    return None


def same_as(change: LaunchOverride, context: LaunchContext) -> bool:
    """Whether ``change`` restates the current launch (same expressions)."""
    return (
        (change.grid is None or [str(g) for g in change.grid] == [str(g) for g in context.grid])
        and (change.block is None or [str(b) for b in change.block] == [str(b) for b in context.block])
        and (change.shared_mem is None or str(change.shared_mem) == str(context.shared_mem))
    )


def param_sets(context: LaunchContext) -> list[dict[str, float | int]]:
    """``params`` first, then each ``check_params`` entry merged in (the shapes verification runs)."""
    return [dict(context.params), *({**context.params, **extra} for extra in context.check_params)]


def as_toml(change: LaunchOverride) -> str:
    """The change as the ```toml block of a fenced reply (for showing a candidate back to the model)."""
    lines = ["[launch]"]
    for key in KEYS:
        value = getattr(change, key)
        if value is not None:
            lines.append(f"{key} = {json.dumps(value)}")
    return "\n".join(lines)


def as_data(change: LaunchOverride | None) -> dict[str, Any] | None:
    """The change as the JSON reply's ``launch`` object (None: unchanged)."""
    if change is None:
        return None
    return {key: getattr(change, key) for key in KEYS}


def _expressions(change: LaunchOverride) -> list[tuple[str, Expr]]:
    out: list[tuple[str, Expr]] = []
    for key in ("grid", "block"):
        out += [(f"{key}[{i}]", e) for i, e in enumerate(getattr(change, key) or [])]
    if change.shared_mem is not None:
        out.append(("shared_mem", change.shared_mem))
    return out


def _names(context: LaunchContext, params: Mapping[str, float | int]) -> tuple[dict[str, Number], str | None]:
    names: dict[str, Number] = dict(DEFAULT_DEVICE_ATTRS)
    names.update(params)
    for key, expr in context.defines.items():
        try:
            names[key] = evaluate(expr, names)
        except ExpressionError as exc:
            return names, f"the launch spec's define {key} cannot be evaluated: {exc}"
    return names, None


def _dims(exprs: list[Expr], names: Mapping[str, Number], label: str) -> list[int]:
    out = []
    for i, expr in enumerate(exprs):
        try:
            out.append(_whole(expr, names))
        except ExpressionError as exc:
            name = label if label == "shared_mem" else f"{label}[{i}]"
            raise ExpressionError(f"{name} = {expr!r}: {exc}") from None
    return out


def _whole(expr: Expr, names: Mapping[str, Number]) -> int:
    value = evaluate(expr, names)
    if isinstance(value, float):
        if not math.isfinite(value) or value != int(value):
            raise ExpressionError(f"{expr!r} = {value:g} is not a whole number (use // or ceil_div)")
        value = int(value)
    return value


def _tidy(expr: Expr) -> Expr:
    """Numbers stay numbers; strings that are plain integers become integers ("256" -> 256)."""
    if isinstance(expr, str):
        text = expr.strip()
        return int(text) if text.isdigit() else text
    if isinstance(expr, float) and expr.is_integer():
        return int(expr)
    return expr


def _num(value: float | int) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def evaluated(
    context: LaunchContext, params: Mapping[str, float | int] | None = None
) -> tuple[list[int], list[int], int] | None:
    """(grid, block, shared_mem) of the current launch at ``params`` (default: the spec's), None if it cannot
    be evaluated here."""
    names, problem = _names(context, context.params if params is None else params)
    if problem is not None:
        return None
    try:
        grid = _dims(context.grid, names, "grid")
        block = _dims(context.block, names, "block")
        smem = _dims([context.shared_mem], names, "shared_mem")[0]
    except ExpressionError:
        return None
    return grid, block, smem
