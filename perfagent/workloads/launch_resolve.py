"""A launch spec resolved for one kernel file and one parameter set: every expression evaluated into the
geometry, the ``-D`` macros and the arguments a launch needs (``resolve_launch``). The checks that a spec
resolves before any worker starts are ``launch_checks.preflight_launch_spec``; the spec's format is
``launch_spec``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

from perfagent.workloads.expr import ExpressionError, Number, evaluate, evaluate_int
from perfagent.workloads.launch_spec import (
    DEFAULT_DEVICE_ATTRS,
    FLOAT_DTYPES,
    ArgSpec,
    DType,
    Expr,
    InitKind,
    LaunchOverride,
    LaunchSpec,
    Role,
    ToleranceSpec,
    choose_entry,
    override_for,
)
from profilers.core_errors import BadInput
from profilers.model import Frozen


class ResolvedArg(Frozen):
    """An argument with every expression evaluated."""

    name: str
    dtype: DType
    is_scalar: bool
    role: Role | None = None
    shape: tuple[int, ...] = ()
    init: InitKind | None = None
    low: float | None = None
    high: float | None = None
    mean: float | None = None
    std: float | None = None
    fill: float | None = None
    vary: bool = True
    value: float | int | None = None

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


class ResolvedLaunch(Frozen):
    """One concrete launch: file, entry, geometry, macros and arguments."""

    source: str
    """Absolute path of the kernel file."""
    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_mem: int
    """Dynamic shared memory per block, byte."""
    defines: dict[str, str]
    params: dict[str, float | int]
    args: list[ResolvedArg]
    atol: float | None = None
    rtol: float | None = None
    flops: float | None = None
    """FLOP per launch, when the spec says."""
    bytes: float | None = None
    """Minimum DRAM bytes per launch, when the spec says."""


def resolve_launch(
    spec: LaunchSpec,
    spec_path: str | Path,
    *,
    source: str | Path | None = None,
    kernel: str | None = None,
    params: Mapping[str, float | int] | None = None,
    device_attrs: Mapping[str, Number] | None = None,
) -> ResolvedLaunch:
    """Evaluate every expression of ``spec`` for one kernel file and one parameter set.

    Args:
        spec: the validated spec.
        spec_path: where the spec lives (relative sources are resolved against its folder).
        source: the kernel file to launch (default: the spec's ``source``, the reference).
        kernel: explicit entry name (else variant, spec name, or the file's only kernel).
        params: overrides of ``spec.params`` (a ``check_params`` entry).
        device_attrs: real device attributes (``sm_count``, ...); defaults describe an H100.

    Raises:
        BadInput: an expression cannot be evaluated, or a size is not positive.
    """
    src = _kernel_file(spec, spec_path, source)
    reference_file = (Path(spec_path).parent / spec.source).resolve()
    override = None if src == reference_file else override_for(spec, src)
    entry = choose_entry(spec, src, override, kernel)
    merged_params: dict[str, float | int] = {**spec.params, **(params or {})}
    names: dict[str, Number] = {**DEFAULT_DEVICE_ATTRS, **(device_attrs or {}), **merged_params}
    try:
        defines = _evaluate_defines(spec, override, names)
        grid, block, shared_mem = _geometry(spec, override, names)
        args = [_resolve_arg(a, names) for a in spec.args]
        atol, rtol, flops, nbytes = _tolerance_and_work(spec, names)
    except ExpressionError as exc:
        raise BadInput(
            f"launch spec {spec_path}: {exc}", hint="fix the expression (see docs/verify.md)"
        ) from None
    if shared_mem < 0:
        raise BadInput(
            f"launch spec {spec_path}: shared_mem is negative ({shared_mem})", hint="fix shared_mem"
        )
    return ResolvedLaunch(
        source=str(src),
        kernel=entry,
        grid=grid,
        block=block,
        shared_mem=shared_mem,
        defines=defines,
        params=merged_params,
        args=args,
        atol=atol,
        rtol=rtol,
        flops=flops,
        bytes=nbytes,
    )


def _kernel_file(spec: LaunchSpec, spec_path: str | Path, source: str | Path | None) -> Path:
    """The kernel file to launch, absolute: ``source`` (relative to the working directory) or the spec's
    own ``source`` (relative to the spec's folder)."""
    base = Path(spec_path).parent
    src = Path(source) if source is not None else base / spec.source
    if not src.is_absolute():
        src = (Path.cwd() / src) if source is not None else src
    return src.resolve()


def _evaluate_defines(
    spec: LaunchSpec, override: LaunchOverride | None, names: dict[str, Number]
) -> dict[str, str]:
    """The ``-D`` macros as C literals, in order; each value is bound in ``names`` for later expressions.

    Raises:
        ExpressionError: a define's expression cannot be evaluated.
    """
    define_exprs = dict(spec.defines)
    if override is not None and override.defines:
        define_exprs.update(override.defines)
    defines: dict[str, str] = {}
    for key, expr in define_exprs.items():
        value = evaluate(expr, names)
        names[key] = value
        defines[key] = _c_literal(value)
    return defines


def _geometry(
    spec: LaunchSpec, override: LaunchOverride | None, names: Mapping[str, Number]
) -> tuple[tuple[int, int, int], tuple[int, int, int], int]:
    """(grid, block, dynamic shared memory bytes), the variant's expressions winning over the spec's.

    Raises:
        ExpressionError: an expression cannot be evaluated or a size is not positive.
    """
    grid_e = (override.grid if override and override.grid else None) or spec.grid
    block_e = (override.block if override and override.block else None) or spec.block
    smem_e = override.shared_mem if override and override.shared_mem is not None else spec.shared_mem
    grid = _dims(grid_e, names, "grid")
    block = _dims(block_e, names, "block")
    return grid, block, evaluate_int(smem_e, names, what="shared_mem")


def param_sets(spec: LaunchSpec) -> list[dict[str, float | int]]:
    """The parameter sets verification runs: ``params`` first, then each ``check_params`` entry merged in."""
    sets = [dict(spec.params)]
    for extra in spec.check_params:
        merged = dict(spec.params)
        merged.update(extra)
        sets.append(merged)
    return sets


def _tolerance_and_work(
    spec: LaunchSpec, names: Mapping[str, Number]
) -> tuple[float | None, float | None, float | None, float | None]:
    """(atol, rtol, flops, bytes) evaluated; None where the spec leaves one out.

    Raises:
        ExpressionError: an expression cannot be evaluated.
    """

    def value(expr: Expr | None) -> float | None:
        return None if expr is None else float(evaluate(expr, names))

    tolerance = spec.tolerance or ToleranceSpec()
    return value(tolerance.atol), value(tolerance.rtol), value(spec.flops), value(spec.bytes)


def _c_literal(value: Number) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return repr(value)  # keep "4.0" a float literal for the preprocessor
    return str(value)


def _dims(exprs: list[Expr], names: Mapping[str, Number], label: str) -> tuple[int, int, int]:
    values = [evaluate_int(e, names, what=label) for e in exprs]
    if any(v < 1 for v in values):
        raise ExpressionError(f"{label} {values} has a dimension below 1")
    values += [1] * (3 - len(values))
    return (values[0], values[1], values[2])


def _resolve_arg(arg: ArgSpec, names: Mapping[str, Number]) -> ResolvedArg:
    if arg.is_scalar:
        assert arg.value is not None
        raw = evaluate(arg.value, names)
        value: float | int = float(raw) if arg.dtype in FLOAT_DTYPES else int(raw)
        return ResolvedArg(name=arg.name, dtype=arg.dtype, is_scalar=True, value=value)
    assert arg.shape is not None
    shape = tuple(evaluate_int(e, names, what=f"shape of {arg.name}") for e in arg.shape)
    if any(d < 0 for d in shape):
        raise ExpressionError(f"shape of {arg.name} {shape} has a negative dimension")
    init = arg.init
    if init is None and arg.effective_role != "output":
        init = "normal" if arg.dtype in FLOAT_DTYPES else "randint"
    return ResolvedArg(
        name=arg.name,
        dtype=arg.dtype,
        is_scalar=False,
        role=arg.effective_role,
        shape=shape,
        init=init,
        low=arg.low,
        high=arg.high,
        mean=arg.mean,
        std=arg.std,
        fill=arg.fill,
        vary=arg.vary,
    )
