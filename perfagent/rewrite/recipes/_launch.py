"""Launch-spec algebra shared by the recipes: evaluating the spec's expressions, writing grids.

A launch spec's grid and block are expressions of its params, defines and the device attributes
(``sm_count``, ``max_threads_per_sm`` ...). Recipes that change the geometry write new expressions
(``ceil_div(n, 256)``, ``32 * (grid)``) rather than numbers, so every parameter set the verifier checks
(``check_params``) gets its own grid.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from perfagent.rewrite.base import LaunchContext
from perfagent.rewrite.recipes import _cuda
from perfagent.workloads.expr import ExpressionError, evaluate, evaluate_int
from perfagent.workloads.launch_spec import DEFAULT_DEVICE_ATTRS, Expr

MAX_GRID_X = 2**31 - 1
_NAME_OR_NUMBER = re.compile(r"[A-Za-z_][A-Za-z_0-9]*|\d+")


def spec_names(
    launch: LaunchContext, overrides: dict[str, float | int] | None = None
) -> dict[str, float | int]:
    """Every name a launch expression may use: device attributes, params (with ``overrides``: one of the
    spec's ``check_params`` sets), then the defines that evaluate."""
    names: dict[str, float | int] = {**DEFAULT_DEVICE_ATTRS, **launch.params, **(overrides or {})}
    for key, value in launch.defines.items():
        try:
            names[key] = evaluate(value, names)
        except (ExpressionError, ZeroDivisionError):
            continue
    return names


def whole(expr: Expr, names: dict[str, float | int]) -> int | None:
    """The whole-number value of ``expr`` under ``names`` (None: not a whole number or unknown)."""
    try:
        got = evaluate(expr, names)
    except (ExpressionError, ZeroDivisionError):
        return None
    return int(got) if float(got).is_integer() else None


def value(expr: Expr, launch: LaunchContext) -> int | None:
    """The whole-number value of ``expr`` under the spec's names (None: not a whole number or unknown)."""
    return whole(expr, spec_names(launch))


def block_extents(launch: LaunchContext) -> dict[str, int | None]:
    """The block's extent per axis ('x', 'y', 'z') under the spec's names (None where it does not evaluate)."""
    names = spec_names(launch)
    return {axis: whole(e, names) for axis, e in zip("xyz", launch.block, strict=False)}


def param_env(launch: LaunchContext) -> dict[str, float | int]:
    """The spec's params and numeric defines (no device attributes: a value that must not depend on the GPU)."""
    return {**launch.params, **{k: v for k, v in launch.defines.items() if isinstance(v, int | float)}}


def block_size(launch: LaunchContext, axis: int = 0) -> int | None:
    """The block's extent along ``axis`` from the spec's params and defines (None: it does not evaluate)."""
    try:
        return evaluate_int(str(launch.block[axis]), param_env(launch))
    except ExpressionError:
        return None


def paren(expr: Expr) -> str:
    """``expr`` as an operand: a name or a number as it is, anything else in parentheses."""
    text = str(expr)
    return text if _NAME_OR_NUMBER.fullmatch(text) else f"({text})"


def ceil_div(total: Expr, per: Expr) -> str:
    """The launch expression ``ceil_div(total, per)`` (blocks that cover ``total``)."""
    return f"ceil_div({total}, {per})"


def threads_x(grid: Expr, block: Expr) -> str:
    """Total threads along x of a launch: ``grid * block``."""
    return f"{paren(grid)} * {paren(block)}"


def warp_multiple_block(launch: LaunchContext) -> str | None:
    """Why the spec's 1-D block is not a whole number of warps (a warp-per-row rewrite needs one), or None."""
    block = block_size(launch)
    if block is None:
        return f"the block size {launch.block[0]} cannot be evaluated from the spec's parameters"
    return None if block % 32 == 0 else f"the block ({block} threads) is not a multiple of 32"


def arg_values(kernel: Node, launch: LaunchContext) -> dict[str, str]:
    """Kernel argument name -> its value in the launch spec's terms (the arguments the spec gives one)."""
    out = {}
    for (name, _, _), arg in zip(_cuda.kernel_params(kernel), launch.args, strict=False):
        if arg.value is not None:
            out[name] = paren(str(arg.value))
    return out


def in_spec(text: str, values: dict[str, str]) -> str | None:
    """``text`` (an expression of kernel arguments) in the launch spec's terms, or None when an argument
    has no spec value (``ceil_div`` is the spec's own)."""
    names = set(_NAME.findall(text)) - {"ceil_div"}
    if not text or names - set(values):
        return None
    return _NAME.sub(lambda m: values.get(m.group(0), m.group(0)), text)


_NAME = re.compile(r"[A-Za-z_]\w*")
