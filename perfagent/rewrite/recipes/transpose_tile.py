"""coalesce-access by a shared-memory transpose tile: a permuting copy whose read and write want
different lanes contiguous.

The naive layout permute (NCHW -> NHWC, a batched 2-D transpose) maps threadIdx.x to the index that is
unit-stride in the source, so the reads are coalesced and every warp store is spread over 32 sectors
(or the other way round). No thread map fixes both sides; the textbook fix stages a 32 x 33 tile in
shared memory: the block reads the tile with lanes along the source's contiguous index, waits at a
barrier, and writes it back with lanes along the destination's contiguous index (cuda-samples
``transposeCoalesced``; the padding column avoids bank conflicts on the transposed read).

Precondition (proven on the tree-sitter parse tree of the kernel):
- the body is index declarations and one copy ``dst[W] = src[R];`` (different pointer parameters,
  same element type) under ``if (x < X [&& v < V])``;
- ``x = blockIdx.x * blockDim.x + threadIdx.x`` (any order, casts); ``v`` either the same on the y
  axis (2-D blocks; then ``v < V`` must be in the guard) or ``blockIdx.y`` alone (1-D blocks; then the
  launch spec's grid y must be the value of one of the kernel's arguments, the bound of the tiled
  ``v``); optionally a batch index ``blockIdx.z``; no other thread built-in anywhere;
- ``x`` is a unit-stride term of ``R`` and only strided in ``W``; ``v`` is a unit-stride term of ``W``;
- the bounds are scalar kernel arguments whose spec values give the new grid.

The rewrite keeps the signature and replaces the body with the two-phase tile copy (32 x 8 threads,
each thread 4 rows of the 32 x 32 tile per phase), ``R`` and ``W`` reused verbatim with ``x`` and ``v``
recomputed per phase; the launch copy becomes block (32, 8), grid (ceil(X / 32), ceil(V / 32)[, Z]).
"""

from __future__ import annotations

from tree_sitter import Node

from perfagent.rewrite.base import LaunchContext
from perfagent.rewrite.recipes import _cuda, _launch, _transpose_rows
from perfagent.rewrite.recipes._transpose_copy import (
    _Copy,
    _copy,
    _copy_arrays,
    _index_of,
    _indices,
    _unit,
)
from perfagent.rewrite.recipes.framework import CudaRecipe, Source, Variant, register
from perfagent.workloads.launch_spec import LaunchOverride

NAME = "transpose-tile"
TILE = 32
ROWS = 8
_J = "perfagent_j"
_TILE_NAME = "perfagent_tile"


def analyse(kernel: Node, launch: LaunchContext | None) -> _Copy | str:
    body = kernel.child_by_field_name("body")
    if body is None:
        return "the kernel has no body"
    if "__shared__" in _cuda.text(kernel):
        return "the kernel already uses shared memory"
    found = _indices(body, launch)
    if isinstance(found, str):
        return found
    roles, rest = found
    x, v, thread_y = roles["x"][0], roles["y"][0], "thread-y" in roles
    if any(_cuda.builtin_axis(n) for stmt in rest for n in _cuda.walk(stmt)):
        return "thread built-ins are read outside the index declarations"
    copy = _copy(rest)
    if isinstance(copy, str):
        return copy
    dst, src, bounds = copy
    if x not in bounds:
        return f"{x} is not bounds-checked: the tiled copy needs its extent"
    if thread_y and v not in bounds:
        return f"{v} is not bounds-checked: the tiled copy needs its extent"
    if set(bounds) - {x, v}:
        return f"the guard bounds {', '.join(sorted(set(bounds) - {x, v}))}, not only the copy's indices"
    bound = bounds[x]
    params = {name: (typ, ptr) for name, typ, ptr in _cuda.kernel_params(kernel)}
    arrays = _copy_arrays(params, dst, src)
    if isinstance(arrays, str):
        return arrays
    d_type, w, r = arrays
    if not _unit(r, x):
        return f"{x} (from threadIdx.x) is not a unit-stride index of the read: the read is not the coalesced side"
    if _unit(w, x):
        return (
            f"{x} (from threadIdx.x) is a unit-stride index of the write too: the copy is coalesced already"
        )
    if not _unit(w, v) or x not in _cuda.identifiers_in(w):
        return f"{v} is not the unit-stride index of the write: no transpose to stage"
    for b in (bound, bounds.get(v)):
        if b is not None and (b not in params or params[b][1]):
            return f"the bound {b} is not a scalar kernel argument"
    if launch is None:
        return "no launch spec: the tiled copy needs a new grid"
    if not thread_y and len(launch.block) > 1 and str(launch.block[1]) != "1":
        return "the launch's block is not 1-D while the y index is blockIdx.y alone"
    if len(launch.grid) < 2:
        return "the launch's grid has no y dimension"
    batch = roles.get("z")
    bound_v = bounds.get(v) if thread_y else None
    return _Copy(x, roles["x"][1], v, roles["y"][1], batch, bound, bound_v, dst, src, d_type, body)


def _arg_for(kernel: Node, launch: LaunchContext, expr: str) -> str | None:
    """The kernel argument whose spec value is ``expr`` (arguments matched by position)."""
    names = [name for name, _, _ in _cuda.kernel_params(kernel)]
    for name, arg in zip(names, launch.args, strict=False):
        if arg.value is not None and str(arg.value).replace(" ", "") == expr.replace(" ", ""):
            return name
    return None


def _spec_value(kernel: Node, launch: LaunchContext, param: str) -> str | None:
    names = [name for name, _, _ in _cuda.kernel_params(kernel)]
    if param not in names or len(launch.args) <= names.index(param):
        return None
    value = launch.args[names.index(param)].value
    return None if value is None else str(value)


_Tiled = tuple[Node, _Copy, str, str, str]


def _plan(src: Source) -> _Tiled | str:
    """(kernel, the copy, the v bound in kernel terms, the x and v extents in spec terms), or why not."""
    request, kernel = src.request, src.kernel
    if isinstance(kernel, str):
        return kernel
    c = analyse(kernel, request.launch)
    if isinstance(c, str):
        return c
    assert request.launch is not None
    v_bound: str | None
    v_extent: str | None
    if c.bound_v is not None:  # v from the thread coordinates: its guard bounds it
        v_bound, v_extent = c.bound_v, _spec_value(kernel, request.launch, c.bound_v)
        if v_extent is None:
            return f"the launch spec gives no value for {c.bound_v}"
    else:  # v = blockIdx.y: the old grid's y is its extent, and an argument must carry it
        v_extent = str(request.launch.grid[1])
        v_bound = _arg_for(kernel, request.launch, v_extent)
        if v_bound is None:
            return (
                f"the grid's y extent ({v_extent}) is not one of the kernel's arguments: no bound for {c.v}"
            )
    x_extent = _spec_value(kernel, request.launch, c.bound_x)
    if x_extent is None:
        return f"the launch spec gives no value for {c.bound_x}"
    return kernel, c, v_bound, x_extent, v_extent


def _rows(src: Source) -> tuple[str, str] | str:
    """(new source, description) for the cuda-samples row-step form (``_transpose_rows``), or why not."""
    request, kernel = src.request, src.kernel
    if isinstance(kernel, str):
        return kernel
    body = kernel.child_by_field_name("body")
    if body is None:
        return "the kernel has no body"
    if "__shared__" in _cuda.text(kernel):
        return "the kernel already uses shared memory"
    env: dict[str, _cuda.Constant | int] = dict(src.constants)
    if request.launch is not None:
        env |= {k: int(v) for k, v in request.launch.defines.items() if str(v).lstrip("-").isdigit()}
    c = _transpose_rows.analyse(body, request.launch, env)
    if isinstance(c, str):
        return c
    if sum(1 for n in _cuda.walk(body) if _cuda.builtin_axis(n)) != 4:
        return "thread built-ins are read outside the two index declarations"
    params = {name: (typ, ptr) for name, typ, ptr in _cuda.kernel_params(kernel)}
    arrays = _copy_arrays(params, c.dst, c.src)
    if isinstance(arrays, str):
        return arrays
    element, w, r = arrays
    d_arr, s_arr = (_cuda.text(a.child_by_field_name("argument") or a) for a in (c.dst, c.src))
    if not _unit(r, c.x) or _unit(w, c.x):
        return f"{c.x} (from threadIdx.x) is not unit-stride in the read alone: no transpose to stage"
    if not _unit(w, c.y) or _unit(r, c.y):
        return f"the rows ({c.y} + {c.j}) are not unit-stride in the write alone: no transpose to stage"
    new_body = _transpose_rows.emit(c, element, _cuda.text(w), _cuda.text(r), d_arr, s_arr)
    source = _cuda.apply_edits(request.source, [_cuda.Edit(body.start_byte, body.end_byte, new_body)])
    what = (
        f"transpose tile: {_cuda.text(c.src)} read with lanes along {c.x}, staged in a {c.k}x({c.k} + 1) "
        f"shared tile, written with lanes along the rows (line {_cuda.line_of(c.dst)}); same launch"
    )
    return source, what


def _body(c: _Copy, v_bound: str) -> str:
    w, r = _cuda.text(_index_of(c.dst) or c.dst), _cuda.text(_index_of(c.src) or c.src)
    d_arr = _cuda.text(c.dst.child_by_field_name("argument") or c.dst)
    s_arr = _cuda.text(c.src.child_by_field_name("argument") or c.src)
    guard = f"{c.x} < {c.bound_x} && {c.v} < {v_bound}"
    batch = f"    {c.batch[1]} {c.batch[0]} = blockIdx.z;\n" if c.batch else ""
    return (
        "{\n"
        f"    // {NAME}: the {TILE} x {TILE} tile is read with lanes along {c.x} (unit stride in {s_arr}) and\n"
        f"    // written with lanes along {c.v} (unit stride in {d_arr}); the extra column avoids bank conflicts.\n"
        f"    __shared__ {c.element} {_TILE_NAME}[{TILE}][{TILE + 1}];\n"
        f"{batch}"
        f"    for (int {_J} = 0; {_J} < {TILE}; {_J} += {ROWS}) {{\n"
        f"        {c.x_decl} {c.x} = blockIdx.x * {TILE} + threadIdx.x;\n"
        f"        {c.v_decl} {c.v} = blockIdx.y * {TILE} + threadIdx.y + {_J};\n"
        f"        if ({guard})\n"
        f"            {_TILE_NAME}[threadIdx.y + {_J}][threadIdx.x] = {s_arr}[{r}];\n"
        "    }\n"
        "    __syncthreads();\n"
        f"    for (int {_J} = 0; {_J} < {TILE}; {_J} += {ROWS}) {{\n"
        f"        {c.x_decl} {c.x} = blockIdx.x * {TILE} + threadIdx.y + {_J};\n"
        f"        {c.v_decl} {c.v} = blockIdx.y * {TILE} + threadIdx.x;\n"
        f"        if ({guard})\n"
        f"            {d_arr}[{w}] = {_TILE_NAME}[threadIdx.x][threadIdx.y + {_J}];\n"
        "    }\n"
        "}"
    )


class _TransposeTile(CudaRecipe[_Tiled | tuple[str, str]]):
    name = NAME
    transforms = ("coalesce-access",)
    summary = "permuting copies (layout permutes, batched transposes) with one side uncoalesced: stage a 32x33 shared tile"

    def match(self, src: Source) -> _Tiled | tuple[str, str] | str:
        plan = _plan(src)
        if not isinstance(plan, str):
            return plan
        rows = _rows(src)
        if not isinstance(rows, str):
            return rows
        kernel = src.kernel
        body = kernel.child_by_field_name("body") if not isinstance(kernel, str) else None
        looped = body is not None and any(c.type == "for_statement" for c in body.named_children)
        return rows if looped else plan

    def plan(self, src: Source, m: _Tiled | tuple[str, str]) -> list[Variant]:
        if len(m) == 2:
            source, what = m
            return [
                Variant(source=source, description=what, parameters={"form": "row steps", "launch": "kept"})
            ]
        _kernel, c, v_bound, x_extent, v_extent = m
        assert src.launch is not None
        return [
            Variant(
                edits=[_cuda.Edit(c.body.start_byte, c.body.end_byte, _body(c, v_bound))],
                description=(
                    f"transpose tile: {_cuda.text(c.src)} read with lanes along {c.x}, staged in a "
                    f"{TILE}x{TILE + 1} shared tile, written with lanes along {c.v} (line {_cuda.line_of(c.dst)}); "
                    f"block ({TILE}, {ROWS})"
                ),
                parameters={"tile": f"{TILE}x{TILE}", "block": f"{TILE}x{ROWS}"},
                launch=LaunchOverride(
                    grid=[
                        _launch.ceil_div(x_extent, TILE),
                        _launch.ceil_div(v_extent, TILE),
                        *src.launch.grid[2:],
                    ],
                    block=[TILE, ROWS],
                ),
            )
        ]


RECIPE = register(_TransposeTile())
applies, propose = RECIPE.applies, RECIPE.propose
