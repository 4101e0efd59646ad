"""Recipe ``permute-tile`` (coalesce-access, smem-tiling): a flat-index permute that moves the innermost
dimension, staged through a shared-memory transpose tile.

The generic permute of a rank-3 or rank-4 tensor (TensorFlow's ``ShuffleInTensor3Simple``, the naive
NCHW <-> NHWC copy) is launched 1-D: each thread peels its flat index with ``/`` and ``%`` and copies
one element. When the permutation moves the innermost dimension, the digit that is contiguous in the
write is not the one contiguous in the read, so one side of every warp access is strided (32 sectors
per request). The textbook fix (TF's ``SwapDimension1And2InTensor3UsingTiles``, cuda-samples
``transposeCoalesced``) tiles the plane of those two digits: a 32 x 33 shared tile is read with lanes
along the read-contiguous digit and written with lanes along the write-contiguous digit.

Precondition: ``_permute_eval`` evaluates the kernel to ``dst[W] = src[R]`` with ``W`` and ``R`` sums of
the digits of one mixed-radix decomposition of the flat index ``o < N`` (``_flat_index``); one digit has
coefficient 1 in ``R`` and another coefficient 1 in ``W``. The rewrite keeps the signature and
replaces the body: block (32, ROWS), grid x over the read-contiguous digit, y over the write-contiguous
digit, z over the other digits (a grid-stride loop when there are more than 65535 of them). Every
element is moved where the original moves it: ``W`` and ``R`` are re-emitted from their digit sums, and
the flat index is recomputed from the digits and checked against ``N`` (so a last partial outermost
row is honoured). The launch copy becomes that grid; a second candidate re-tunes the rows per block.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.base import LaunchContext
from perfagent.rewrite.recipes import _affine, _launch
from perfagent.rewrite.recipes._affine import FormDict
from perfagent.rewrite.recipes._flat_index import chain, expand, stride, thaw
from perfagent.rewrite.recipes._permute_eval import Copy, evaluate
from perfagent.rewrite.recipes.framework import CudaRecipe, Edit, Source, Variant, register
from perfagent.workloads.launch_spec import LaunchOverride

NAME = "permute-tile"
TILE = 32
ROWS = (8, 4)
MAX_GRID_Z = 65535
_P = "perfagent_"


@dataclass(frozen=True)
class _Plan:
    copy: Copy
    digits: int
    read_digit: int
    write_digit: int
    extents: list[str]
    """Each digit's extent in kernel terms (the outermost: ceil(N / its stride))."""
    strides: list[str]
    spec_extents: list[str]
    """The same in the launch expression language (``ceil_div`` for the outermost)."""
    write: str
    read: str
    spec: dict[str, str]
    """Kernel size name -> its value in the launch spec's terms."""


def _text(form: FormDict) -> str:
    return _launch.paren(_affine.render(form))


def _linear(terms: dict[int, FormDict]) -> str:
    """A digit sum as C text (digit k is ``perfagent_dk``; -1 the size term)."""
    parts = []
    for k, coeff in sorted(terms.items()):
        name = f"{_P}d{k}" if k >= 0 else None
        if name is None:
            parts.append(_text(coeff))
        else:
            parts.append(name if coeff == _affine.const(1) else f"{name} * {_text(coeff)}")
    return " + ".join(parts) or "0"


def analyse(kernel: Node, launch: LaunchContext, requested: str | None) -> _Plan | str:
    copy = evaluate(kernel, requested)
    if isinstance(copy, str):
        return copy
    exts = chain([copy.write, copy.read])
    if isinstance(exts, str):
        return exts
    w, r = expand(copy.write, exts), expand(copy.read, exts)
    if w is None or r is None or not exts:
        return "the index is not a sum of the flat index's digits times sizes"
    unit_w = [k for k, c in w.items() if k >= 0 and c == _affine.const(1)]
    unit_r = [k for k, c in r.items() if k >= 0 and c == _affine.const(1)]
    if len(unit_w) != 1 or len(unit_r) != 1:
        return "no single digit is contiguous in both the write and the read"
    if unit_w == unit_r:
        return "the write and the read are contiguous along the same digit: no transpose to stage"
    strides = [stride(exts, k) for k in range(len(exts) + 1)]
    if any(s is None for s in strides):
        return "a stride of the decomposition is not a product of sizes"
    outer = f"({_text(copy.bound)} + {_text(strides[-1] or {})} - 1) / {_text(strides[-1] or {})}"
    spec = _launch.arg_values(kernel, launch)
    return _Plan(
        copy, len(exts) + 1, unit_r[0], unit_w[0],
        [_text(thaw(e)) for e in exts] + [f"({outer})"], [_text(s or {}) for s in strides],
        [_text(thaw(e)) for e in exts] + [f"ceil_div({_text(copy.bound)}, {_text(strides[-1] or {})})"],
        _linear(w), _linear(r), spec,
    )  # fmt: skip


def _pinned(c: Copy) -> str:
    """A template body specialised for the requested instantiation refuses to compile for any other."""
    if not c.template:
        return ""
    held = " && ".join(f"{name} == {value}" for name, value in sorted(c.template.items()))
    return f'    static_assert({held}, "permute-tile rewrote this body for one instantiation");\n'


def _batch_digits(p: _Plan) -> list[int]:
    return [k for k in range(p.digits) if k not in (p.read_digit, p.write_digit)]


def _body(p: _Plan) -> str:
    """The tiled kernel body (module docstring)."""
    c, i = p.copy, p.copy.index_type or "int"
    batch = _batch_digits(p)
    count = " * ".join(p.extents[k] for k in batch) or "1"
    peel = [
        f"        const {i} {_P}d{k} = {_P}rest % {p.extents[k]};\n        {_P}rest /= {p.extents[k]};"
        for k in batch[:-1]
    ]
    if batch:
        peel.append(f"        const {i} {_P}d{batch[-1]} = {_P}rest;")
    flat = " + ".join(
        f"{_P}d{k}" + ("" if p.strides[k] == "1" else f" * {p.strides[k]}") for k in range(p.digits)
    )
    bound = _text(c.bound)
    rd, wd = f"{_P}d{p.read_digit}", f"{_P}d{p.write_digit}"

    def phase(lane_digit: str, row_digit: str, move: str) -> str:
        return (
            f"        for (int {_P}r = threadIdx.y; {_P}r < {TILE}; {_P}r += blockDim.y) {{\n"
            f"            const {i} {lane_digit} = blockIdx.{'x' if lane_digit == rd else 'y'} * {TILE} + threadIdx.x;\n"
            f"            const {i} {row_digit} = blockIdx.{'x' if row_digit == rd else 'y'} * {TILE} + {_P}r;\n"
            f"            if ({rd} < {p.extents[p.read_digit]} && {wd} < {p.extents[p.write_digit]} && {flat} < {bound})\n"
            f"                {move};\n"
            f"        }}\n"
        )

    return (
        "{\n"
        f"    // permute-tile: the plane of digit {p.read_digit} (contiguous in the read) and digit {p.write_digit}\n"
        f"    // (contiguous in the write) is staged through a {TILE} x {TILE + 1} tile; grid z walks the other digits\n"
        + _pinned(c)
        + f"    __shared__ {c.element} {_P}tile[{TILE}][{TILE + 1}];\n"
        f"    for ({i} {_P}b = blockIdx.z; {_P}b < {count}; {_P}b += gridDim.z) {{\n"
        f"        {i} {_P}rest = {_P}b;\n"
        f"        (void){_P}rest;\n"
        + "\n".join(peel)
        + "\n"
        + phase(rd, wd, f"{_P}tile[{_P}r][threadIdx.x] = {c.src}[{p.read}]")
        + "        __syncthreads();\n"
        + phase(wd, rd, f"{c.dst}[{p.write}] = {_P}tile[threadIdx.x][{_P}r]")
        + "        __syncthreads();\n"
        "    }\n"
        "}"
    )


class _PermuteTile(CudaRecipe[_Plan]):
    name = NAME
    transforms = ("coalesce-access", "smem-tiling")
    summary = "flat-index permute moving the innermost dim (div/mod peeled) -> 32x33 shared tile of the two digits, 3-D grid"
    needs_launch = True
    launch_dims = 1

    def match(self, src: Source) -> _Plan | str:
        assert src.launch is not None
        launch = src.launch
        got = src.on_kernel(lambda k: analyse(k, launch, src.request.kernel))
        if isinstance(got, str):
            return got
        if self._grid(got) is None:
            return "a size of the permute has no value in the launch spec's arguments: no grid for the tiles"
        return got

    def _grid(self, p: _Plan) -> list[str] | None:
        count = " * ".join(p.spec_extents[k] for k in _batch_digits(p)) or "1"
        texts = [p.spec_extents[p.read_digit], p.spec_extents[p.write_digit], count]
        spec = [_launch.in_spec(t, p.spec) for t in texts]
        if any(s is None for s in spec):
            return None
        x, y, z = (str(s) for s in spec)
        return [_launch.ceil_div(x, TILE), _launch.ceil_div(y, TILE), f"min({z}, {MAX_GRID_Z})"]

    def plan(self, src: Source, m: _Plan) -> list[Variant]:
        grid = self._grid(m)
        assert grid is not None
        body = m.copy.body
        return [
            Variant(
                edits=[Edit(body.start_byte, body.end_byte, _body(m))],
                description=(
                    f"permute through a {TILE}x{TILE + 1} shared tile: reads along digit {m.read_digit}, "
                    f"writes along digit {m.write_digit}, block ({TILE}, {rows})"
                ),
                parameters={"tile": TILE, "rows": rows},
                launch=LaunchOverride(grid=grid, block=[TILE, rows]),
            )
            for rows in ROWS
        ]


RECIPE = register(_PermuteTile())
applies, propose = RECIPE.applies, RECIPE.propose
