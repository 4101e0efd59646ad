"""Recipe ``thread-coarsening``: more elements per thread, and a grid re-tuned to match.

Precondition (tree-sitter-cuda tree of the launched kernel; the launch spec is needed, since the grid
must shrink as each thread does more):

- a top-level global index ``T v = blockIdx.a * blockDim.a + threadIdx.a`` (any axis, any operand
  order, casts allowed; ``blockIdx.a * 256`` or ``* BLOCK`` for the block extent too) followed by a bound check on ``v``: ``if (... v < X ...) {...}`` as the last
  statement, or ``if (... v >= X ...) return;``, with only side-effect-free declarations between them;
- ``blockIdx.a``, ``threadIdx.a`` and ``gridDim.a`` appear nowhere else (in the kernel or a device
  function of the file): the thread's identity is only its element;
- no block or warp cooperation (``__syncthreads``, ``__shared__``, shuffles, cooperative groups) and
  no ``return`` inside a loop or ``goto`` in the statements that get wrapped.

Two rewrites, both wrapping the index declaration and every statement after it in a loop (each
``return`` there becomes ``continue``: it ended one element's work):

- **per-thread chunk** (C = 4, 8, 2): ``for (c = 0; c < C; ++c)`` with ``blockIdx.a`` replaced by the
  virtual block ``blockIdx.a * C + c``; grid axis a becomes ``ceil_div(grid_a, C)``. Each step is the
  original block's coalesced access; the virtual blocks past the original grid fail the bound check.
- **grid-stride** (PMPP / Best Practices "grid-stride loop"): ``for (v = ...; v < X; v += gridDim.a *
  blockDim.a)`` with the grid cut to one wave of resident blocks (never more than the original grid).
  Needs ``v`` unassigned after its declaration and ``X`` unassigned in the kernel.

Anything else is refused with the line that blocked it.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.base import LaunchContext
from perfagent.rewrite.recipes import _cuda, _launch, _thread_index
from perfagent.rewrite.recipes._thread_index import GlobalIndex, Guard
from perfagent.rewrite.recipes._threads import block_free_retune
from perfagent.rewrite.recipes.framework import CudaRecipe, Edit, Retune, Source, Variant, register
from perfagent.workloads.launch_spec import Expr, LaunchOverride

NAME = "thread-coarsening"
CHUNKS = (4, 8, 2)
WAVES = 1
"""Grid-stride candidates launch this many waves of resident blocks (a scalar grid-stride loop did best
with one wave on an H200: scripts/gpu_dram_ceiling.py, launch-geometry's measurement)."""
_AXES = "xyz"


@dataclass(frozen=True)
class _Site:
    """One coarsenable axis of the kernel."""

    index: GlobalIndex
    tail: list[Node]
    """The index declaration's following statements (wrapped with it)."""
    guard: Guard
    returns: list[Node]
    stride_blocker: str | None
    """Why the grid-stride form is not offered (None: it is)."""


def _blocked_builtin(kernel: Node, index: GlobalIndex, source_tree: Node) -> str | None:
    """A use of blockIdx/threadIdx/gridDim on the index's axis outside the index itself, or None."""
    inside = {n.id for n in _cuda.walk(index.value)}
    scopes = [kernel] + [
        fn for fn in _cuda.walk(source_tree) if fn.type == "function_definition" and not _cuda.is_kernel(fn)
    ]
    for scope in scopes:
        for name in ("blockIdx", "threadIdx", "gridDim"):
            for node in _thread_index.builtin_uses(scope, name, index.axis):
                if node.id not in inside:
                    where = (
                        "" if scope.id == kernel.id else f" (device function {_cuda.function_name(scope)})"
                    )
                    return f"{name}.{index.axis} on line {_cuda.line_of(node)}{where} is used outside the global index {index.name}"
    return None


def _guard(index: GlobalIndex, tail: list[Node]) -> Guard | str:
    """The bound check on the index, or why there is none the wrap can keep."""
    for k, stmt in enumerate(tail):
        guard = _thread_index.guard_of(stmt, index.name)
        if guard is not None:
            if not guard.early_exit and k != len(tail) - 1:
                return f"statements after the bound check on line {_cuda.line_of(stmt)} run for every thread"
            return guard
        if not _thread_index.side_effect_free(stmt):
            return f"line {_cuda.line_of(stmt)} runs before any bound check on {index.name} (unguarded work, or the grid is the bound)"
    return f"no bound check on {index.name} (if ({index.name} < n) or if ({index.name} >= n) return): the grid is the bound"


def _site(kernel: Node, index: GlobalIndex, root: Node) -> _Site | str:
    body = kernel.child_by_field_name("body")
    assert body is not None
    blocked = _blocked_builtin(kernel, index, root)
    if blocked is not None:
        return blocked
    scale = index.scale
    if scale is not None and (changed := _thread_index.assigns(body, _cuda.text(scale))) is not None:
        return f"the block extent {_cuda.text(scale)} of {index.name} is assigned on line {_cuda.line_of(changed)}"
    stmts = [c for c in body.named_children if c.type != "comment"]
    tail = stmts[stmts.index(next(s for s in stmts if s.id == index.decl.id)) + 1 :]
    guard = _guard(index, tail)
    if isinstance(guard, str):
        return guard
    returns, flow = _thread_index.captured_flow(tail, body)
    if flow is not None:
        return flow
    stride_blocker = None
    moved = next((a for s in tail if (a := _thread_index.assigns(s, index.name)) is not None), None)
    if moved is not None:
        stride_blocker = f"{index.name} is assigned on line {_cuda.line_of(moved)}"
    for name in _cuda.identifiers_in(guard.bound):
        if (changed := _thread_index.assigns(body, name)) is not None:
            stride_blocker = f"the bound {name} is assigned on line {_cuda.line_of(changed)}"
    return _Site(index, tail, guard, returns, stride_blocker)


def _sites(src: Source) -> list[_Site] | str:
    kernel = src.kernel
    if isinstance(kernel, str):
        return kernel
    body = kernel.child_by_field_name("body")
    if body is None:
        return "the kernel has no body"
    indices = _thread_index.global_indices(body)
    if not indices:
        return "no top-level global index T v = blockIdx.a * blockDim.a + threadIdx.a in the kernel"
    why = _thread_index.cooperation(body)
    if why is not None:
        return f"{why}: coarsening changes which threads meet"
    found: list[_Site] = []
    reasons: list[str] = []
    for index in indices:
        site = _site(kernel, index, src.tree.root_node)
        if isinstance(site, str):
            reasons.append(site)
        else:
            found.append(site)
    launch = src.launch
    assert launch is not None
    usable = [s for s in found if isinstance(s, _Site) and _AXES.index(s.index.axis) < len(launch.grid)]
    if not usable:
        return (
            "; ".join(str(r) for r in reasons) or "the launch spec's grid has no entry for the coarsened axis"
        )
    return sorted(usable, key=lambda s: s.index.axis == "x")  # rows first: x stays the coalesced axis


def _wrapped(src: Source, site: _Site, header: str, first: str) -> Edit:
    """The edit replacing the index declaration and its tail by ``header { first; tail }``."""
    data = src.text.encode("utf-8")
    start, end = site.tail[0].start_byte, site.tail[-1].end_byte
    pieces, at = [], start
    for ret in site.returns:
        pieces.append(data[at : ret.start_byte].decode("utf-8"))
        pieces.append("continue;")
        at = ret.end_byte
    pieces.append(data[at:end].decode("utf-8"))
    tail = "".join(pieces).replace("\n", "\n    ")
    indent = data[_cuda.line_start(data, site.index.decl.start_byte) : site.index.decl.start_byte].decode()
    new = f"{header} {{\n{indent}    {first}\n{indent}    {tail}\n{indent}}}"
    return Edit(site.index.decl.start_byte, end, new)


def _chunk_edit(src: Source, site: _Site, chunk: int) -> Edit:
    index = site.index
    lo, hi = (
        index.block_idx.start_byte - index.decl.start_byte,
        index.block_idx.end_byte - index.decl.start_byte,
    )
    decl_bytes = index.decl.text or b""
    virtual = f"({_cuda.text(index.block_idx)} * {chunk} + perfagent_chunk)"
    first = (decl_bytes[:lo] + virtual.encode() + decl_bytes[hi:]).decode("utf-8")
    header = f"for (int perfagent_chunk = 0; perfagent_chunk < {chunk}; ++perfagent_chunk)"
    return _wrapped(src, site, header, first)


def _stride_edit(src: Source, site: _Site) -> Edit:
    index, bound = site.index, _cuda.text(site.guard.bound)
    header = (
        f"for ({index.type} {index.name} = {_cuda.text(index.value)}; {index.name} < {bound}; "
        f"{index.name} += ({index.type})gridDim.{index.axis} * {_extent(index)})"
    )
    return _wrapped(src, site, header, "// grid-stride: each thread walks the index space")


def _extent(index: GlobalIndex) -> str:
    """The block extent the index is written with: blockDim.a, or its literal / constant (then the stride
    walks the same virtual blocks the original grid's pattern does, whatever the launch's block)."""
    return f"blockDim.{index.axis}" if index.scale is None else f"({_cuda.text(index.scale)})"


def _product(exprs: list[Expr]) -> str:
    return " * ".join(f"({e})" for e in exprs) or "1"


def _grid(launch: LaunchContext, axis: int, value: str) -> list[Expr]:
    grid = list(launch.grid)
    grid[axis] = value
    return grid


def _retune(src: Source, axis: int, chunk: int | None) -> Retune | None:
    """The block sweep of a coarsened 1-D kernel whose index is block-free (threads = original / chunk)."""
    launch = src.launch
    kernel = src.kernel
    if launch is None or isinstance(kernel, str) or axis != 0:
        return None
    free = block_free_retune(kernel, launch, "thread")
    if free is None or free.threads is None:
        return None
    if chunk is None:
        return Retune(per="thread", threads=None, grid_stride=True)
    return Retune(per="thread", threads=_launch.ceil_div(free.threads, chunk))


def _one_wave(launch: LaunchContext, axis: int) -> str:
    """Grid extent along ``axis`` for ``WAVES`` waves of resident blocks (never more than the spec's)."""
    others = [g for k, g in enumerate(launch.grid) if k != axis]
    return (
        f"max(1, min({launch.grid[axis]}, {WAVES} * sm_count * (max_threads_per_sm // ({_product(list(launch.block))})) "
        f"// ({_product(others)})))"
    )


def grid_stride(src: Source) -> tuple[str, LaunchOverride] | str:
    """The kernel's x index turned into a grid-stride loop (every ``return`` after it a ``continue``) and the
    one-wave grid, for a recipe that wants many elements per thread; or why coarsening does not apply.
    Needs ``src.launch`` (a 1-D index on x)."""
    if src.launch is None:
        return "no launch spec: the grid cannot be re-tuned"
    found = _sites(src)
    if isinstance(found, str):
        return found
    site = next((s for s in found if s.index.axis == "x"), None)
    if site is None:
        return "no global index along x"
    if site.stride_blocker is not None:
        return site.stride_blocker
    grid = _grid(src.launch, 0, _one_wave(src.launch, 0))
    return _cuda.apply_edits(src.text, [_stride_edit(src, site)]), LaunchOverride(grid=grid)


def _variants(src: Source, site: _Site) -> list[Variant]:
    launch = src.launch
    assert launch is not None
    axis = _AXES.index(site.index.axis)
    now = launch.grid[axis]
    out: list[Variant] = []
    for chunk in CHUNKS:
        grid = _grid(launch, axis, _launch.ceil_div(now, chunk))
        out.append(
            Variant(
                edits=[_chunk_edit(src, site, chunk)],
                description=(
                    f"each thread handles {chunk} elements along {site.index.axis} (virtual blocks "
                    f"blockIdx.{site.index.axis} * {chunk} + c, coalesced as before); grid axis {axis} = {grid[axis]}"
                ),
                parameters={"axis": site.index.axis, "chunk": chunk},
                launch=LaunchOverride(grid=grid),
                retune=_retune(src, axis, chunk),
            )
        )
    if site.stride_blocker is None:
        waves = _one_wave(launch, axis)
        stride = Variant(
            edits=[_stride_edit(src, site)],
            description=(
                f"grid-stride loop over {site.index.name} < {_cuda.text(site.guard.bound)}; grid axis {axis} cut "
                f"to {WAVES} wave(s) of resident blocks ({waves})"
            ),
            parameters={"axis": site.index.axis, "waves": WAVES},
            launch=LaunchOverride(grid=_grid(launch, axis, waves)),
            retune=_retune(src, axis, None),
        )
        out.insert(1, stride)
    return out


class _Coarsen(CudaRecipe[list[_Site]]):
    name = NAME
    transforms = ("thread-coarsening",)
    summary = "one-element-per-thread kernel -> per-thread chunks or a grid-stride loop, with the grid re-tuned in the launch spec"
    needs_launch = True
    no_launch = "no launch spec: the grid must shrink as each thread does more, and only a spec's grid can be re-tuned"

    def match(self, src: Source) -> list[_Site] | str:
        return _sites(src)

    def plan(self, src: Source, m: list[_Site]) -> list[Variant]:
        per_site = [_variants(src, site) for site in m]
        return [v for k in range(max(map(len, per_site))) for vs in per_site if k < len(vs) for v in [vs[k]]]


RECIPE = register(_Coarsen())
applies, propose = RECIPE.applies, RECIPE.propose
