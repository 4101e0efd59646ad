"""Launch specs: how perfagent allocates, initialises and launches a bare ``__global__`` kernel.

A launch spec is a TOML file beside the kernel (``transpose.launch.toml`` next to ``slow.cu``). It
names the reference kernel file and entry point, the problem parameters, every kernel argument in
order (a tensor with dtype, shape and initialisation, or a scalar value), which arguments the
kernel writes, and grid / block / dynamic shared memory as expressions of the parameters. The same
spec serves the original and its rewrites: ``[variants."fixed.cu"]`` overrides the entry name and
launch geometry for a rewrite in a file of that name, and any other rewrite is launched like the
original (with its only ``__global__`` entry when the original name is absent).

Example (the full format is in docs/verify.md)::

    source = "slow.cu"
    kernel = "transpose_naive"
    grid = ["ceil_div(width, TILE_DIM)", "ceil_div(height, TILE_DIM)"]
    block = ["TILE_DIM", "BLOCK_ROWS"]
    bytes = "2 * width * height * 4"

    [params]
    width = 8192
    height = 8192

    [defines]
    TILE_DIM = 32
    BLOCK_ROWS = 8

    [[args]]
    name = "odata"
    dtype = "float32"
    shape = ["width", "height"]
    role = "output"

    [[args]]
    name = "idata"
    shape = ["height", "width"]
    init = "normal"

    [[args]]
    name = "width"
    dtype = "int32"
    value = "width"
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import tomli_w
from pydantic import Field, ValidationError, model_validator

from perfagent.workloads.expr import Number
from profilers.core_errors import BadInput
from profilers.model import Frozen

DType = Literal[
    "float32", "float16", "bfloat16", "float64", "int8", "int16", "int32", "int64", "uint8", "uint32", "bool"
]
InitKind = Literal["normal", "uniform", "randint", "arange", "ones", "full", "zeros"]
Role = Literal["input", "output", "inout"]
Expr = str | int | float

FLOAT_DTYPES: frozenset[str] = frozenset({"float32", "float16", "bfloat16", "float64"})

# Device attributes every expression may use; the worker binds the real values of the GPU it runs on.
DEFAULT_DEVICE_ATTRS: dict[str, Number] = {
    "sm_count": 132,
    "max_threads_per_sm": 2048,
    "max_threads_per_block": 1024,
    "warp_size": 32,
    "l2_bytes": 50 * 1024 * 1024,
    "max_shared_per_block": 227 * 1024,
}


class ArgSpec(Frozen):
    """One kernel argument, in the kernel's parameter order."""

    name: str
    """The parameter's name (for messages; need not match the source)."""
    dtype: DType = "float32"
    """Element type of a tensor argument, or the C type of a scalar (int32 = ``int``, float32 = ``float``)."""
    shape: list[Expr] | None = None
    """Tensor shape as expressions of the params; the kernel receives a pointer to contiguous memory."""
    role: Role | None = None
    """input (read only; checked unchanged), output (poisoned before each launch, compared after),
    inout (initialised, then compared after). Default: input for tensors."""
    init: InitKind | None = None
    """How inputs/inouts are filled: normal (mean, std), uniform [low, high), randint [low, high),
    arange (0, 1, 2, ... modulo ``high`` when given), ones, full (``fill``), zeros (inout only).
    Default: normal for floats, randint [0, 100) for integers."""
    low: float | None = None
    high: float | None = None
    mean: float | None = None
    std: float | None = None
    fill: float | None = None
    """Fill value for init = "full"."""
    vary: bool = True
    """Float inputs are re-drawn from other distributions (normal, uniform, laplace, exponential,
    lognormal) across verification trials; set false when the kernel needs the declared range."""
    value: Expr | None = None
    """Scalar argument: its value as an expression of the params."""

    @model_validator(mode="after")
    def _check(self) -> ArgSpec:
        if self.value is not None:
            if self.shape is not None or self.role is not None or self.init is not None:
                raise ValueError(f"arg {self.name!r}: a scalar (value=...) takes no shape, role or init")
            if self.dtype == "bool":
                raise ValueError(f"arg {self.name!r}: bool scalars are not supported; use int32")
            return self
        if self.shape is None:
            raise ValueError(f"arg {self.name!r}: give either shape (a tensor) or value (a scalar)")
        if self.init == "zeros" and self.effective_role == "input":
            raise ValueError(
                f"arg {self.name!r}: an all-zero input makes a degenerate test; "
                'use normal/uniform/randint, or role = "inout" for an accumulator that must start at zero'
            )
        if self.init == "full" and self.fill is None:
            raise ValueError(f'arg {self.name!r}: init = "full" needs fill = <value>')
        if (
            self.init in ("randint",)
            and self.dtype in FLOAT_DTYPES
            and (self.low is None or self.high is None)
        ):
            raise ValueError(f"arg {self.name!r}: randint for a float tensor needs low and high")
        return self

    @property
    def is_scalar(self) -> bool:
        return self.value is not None

    @property
    def effective_role(self) -> Role:
        return self.role or "input"


class LaunchOverride(Frozen):
    """What a rewrite may change: entry name, launch geometry, macros."""

    kernel: str | None = None
    """Entry point name in the rewrite's file."""
    grid: list[Expr] | None = None
    block: list[Expr] | None = None
    shared_mem: Expr | None = None
    """Dynamic shared memory per block, byte."""
    defines: dict[str, Expr] | None = None
    """Macros passed to the compiler (replaces the spec's table entry by entry)."""


class ToleranceSpec(Frozen):
    """Comparison tolerance |got - expected| <= atol + rtol * |expected| (expressions allowed)."""

    atol: Expr | None = None
    rtol: Expr | None = None


class LaunchSpec(Frozen):
    """A kernel file's launch contract: perfagent allocates, initialises, launches and compares."""

    source: str
    """The reference kernel file, relative to the spec (the original: the oracle for every rewrite)."""
    kernel: str
    """``__global__`` entry point in ``source`` (``extern "C"`` recommended)."""
    grid: list[Expr]
    """Grid dimensions in blocks (1 to 3 expressions)."""
    block: list[Expr]
    """Block dimensions in threads (1 to 3 expressions)."""
    shared_mem: Expr = 0
    """Dynamic shared memory per block, byte."""
    defines: dict[str, Expr] = Field(default_factory=dict)
    """Macros (-DNAME=value) for the compiler; usable in every expression too."""
    params: dict[str, float | int] = Field(default_factory=dict)
    """Problem parameters (sizes, scalars) used by timing and the first verification shape."""
    check_params: list[dict[str, float | int]] = Field(default_factory=list)
    """Extra parameter sets verification also runs (other shapes: a guard against overfitting).
    Each entry overrides some params."""
    args: list[ArgSpec]
    """Kernel arguments in parameter order."""
    variants: dict[str, LaunchOverride] = Field(default_factory=dict)
    """Per-file overrides for rewrites, keyed by file name (``"fixed.cu"``)."""
    tolerance: ToleranceSpec | None = None
    """Override of the per-dtype default tolerance (fp32 1e-4, fp16/bf16 1e-2, integers exact)."""
    flops: Expr | None = None
    """Floating-point operations per launch, FLOP (for the roofline)."""
    bytes: Expr | None = None
    """Minimum DRAM bytes per launch (each input read and output written once), byte."""
    flops_precision: Literal["fp64", "fp32", "fp16", "tensor"] = "fp32"
    """Which peak FLOP/s bounds this kernel."""
    description: str = ""

    @model_validator(mode="after")
    def _check(self) -> LaunchSpec:
        names = [a.name for a in self.args]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"duplicate argument names: {', '.join(dup)}")
        if not any(not a.is_scalar and a.effective_role in ("output", "inout") for a in self.args):
            raise ValueError('no argument has role = "output" or "inout": nothing to compare')
        for label, dims in (("grid", self.grid), ("block", self.block)):
            if not 1 <= len(dims) <= 3:
                raise ValueError(f"{label} needs 1 to 3 dimensions, got {len(dims)}")
        for key, override in self.variants.items():
            for label, maybe in (("grid", override.grid), ("block", override.block)):
                if maybe is not None and not 1 <= len(maybe) <= 3:
                    raise ValueError(f"variants.{key}.{label} needs 1 to 3 dimensions")
        return self


_GLOBAL_RE = re.compile(
    r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\("
)


def kernels_in_source(text: str) -> list[str]:
    """Names of the ``__global__`` functions defined in CUDA source ``text``, in order."""
    return list(dict.fromkeys(_GLOBAL_RE.findall(_strip_comments(text))))


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def load_launch_spec(path: str | Path) -> LaunchSpec:
    """Read and validate a launch spec.

    Raises:
        BadInput: the file is missing, not TOML, or not a valid spec (the message names the field).
    """
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text())
    except FileNotFoundError:
        raise BadInput(f"launch spec {p} does not exist", hint="check the path") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BadInput(
            f"launch spec {p} is not valid TOML: {exc}", hint="fix the syntax (see docs/verify.md)"
        ) from None
    try:
        spec = LaunchSpec.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"]) or "spec"
        raise BadInput(
            f"launch spec {p}: {where}: {err['msg']}", hint="see the launch-spec format in docs/verify.md"
        ) from None
    if not (p.parent / spec.source).is_file():
        raise BadInput(f"launch spec {p}: source {spec.source!r} not found beside it", hint="fix `source`")
    return spec


def dump_launch_spec(data: Mapping[str, Any]) -> str:
    """``data`` (a spec's tables, e.g. ``LaunchSpec.model_dump(mode="json")``) as TOML that
    ``load_launch_spec`` reads back. None values are left out: TOML has no null.

    Raises:
        TypeError: a value TOML cannot hold.
    """
    return tomli_w.dumps(_without_none(data))


def _without_none(data: Mapping[str, Any]) -> dict[str, Any]:
    def clean(value: Any) -> Any:
        if isinstance(value, Mapping):
            return _without_none(value)
        if isinstance(value, list | tuple):
            return [clean(v) for v in value]
        return value

    return {key: clean(value) for key, value in data.items() if value is not None}


def override_for(spec: LaunchSpec, source: Path) -> LaunchOverride | None:
    """The ``[variants]`` entry for a kernel file, looked up by file name."""
    return spec.variants.get(source.name)


def choose_entry(spec: LaunchSpec, source: Path, override: LaunchOverride | None, kernel: str | None) -> str:
    """Pick the entry point for ``source``: explicit > variant > spec's name if defined > the only kernel.

    Raises:
        BadInput: the file defines no kernel, or several and none is named.
    """
    if kernel:
        return kernel
    if override is not None and override.kernel:
        return override.kernel
    try:
        found = kernels_in_source(source.read_text(errors="replace"))
    except OSError as exc:
        raise BadInput(f"cannot read {source}: {exc}", hint="check the path") from None
    # A template instantiation (``f<double, 0, 2, 1>``) names a kernel defined as ``f``: keep the full
    # name, NVRTC resolves it as a name expression.
    if spec.kernel in found or spec.kernel.split("<", 1)[0].strip() in found:
        return spec.kernel
    if len(found) == 1:
        return found[0]
    if not found:
        raise BadInput(f"{source} defines no __global__ function", hint="is this the right file?")
    raise BadInput(
        f"{source} defines several kernels ({', '.join(found)}) and none is {spec.kernel!r}",
        hint=f'name the entry with --kernel NAME or add [variants."{source.name}"] kernel = "..." to the spec',
    )
