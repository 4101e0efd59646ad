"""Recipe ``launch-geometry``: change a launch spec's grid (or block) where the kernel's result cannot depend on it.

The source is not edited: the candidate carries ``Candidate.launch`` (grid, block) and the loop writes it
into the candidate's launch-spec copy. What may change is decided on the tree-sitter-cuda parse tree of
the kernel, from how it uses the built-in index variables (1-D launches only):

- **grid-stride** — ``gridDim.x`` appears only in ``gridDim.x * blockDim.x`` (the stride) and
  ``blockIdx.x`` only in ``blockIdx.x * blockDim.x`` (the start): every thread walks the index space
  until the bound, so any grid computes the same result. Candidates: one index per thread,
  ``ceil_div(N, width * block)`` where the loop bound is the parameter N (width 1) or a local
  ``N / width`` (a float4 loop over ``n / 4``); then 8, 4 and 1 waves of resident blocks
  (``k * sm_count * (max_threads_per_sm // block)``). On an H200 a float4 copy measured 86.7 % of DRAM
  peak with one vector per thread, 83.6 % with 8 waves and 81.3 % with one wave
  (scripts/gpu_dram_ceiling.py); a scalar loop did best with one wave (74.5 %).
- **one element per thread** — no grid-stride loop, the block a literal B, the grid expression written
  with B (``ceil_div(n, 256)``, ``(n + 255) / 256``): block sizes 128 ... 1024 with the grid rewritten
  to match, only when the kernel has no shared memory, no ``__syncthreads``, no ``__launch_bounds__``
  and uses ``blockDim.x`` / ``threadIdx.x`` only in the global index.

- **oversized dynamic shared memory** — every ``extern __shared__`` array indexed only by
  ``threadIdx.x``: ``shared_mem = block * sizeof(T)`` instead of the spec's larger request (more
  resident blocks per SM).

Anything else (2-D/3-D geometry, ``blockIdx`` used as a block id, per-block outputs) does not apply, and
``applies`` says which use of which built-in blocked it and on what line.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from perfagent.rewrite.base import LaunchContext
from perfagent.rewrite.recipes import _cuda, _launch
from perfagent.rewrite.recipes._threads import Uses, analyse, strip_down
from perfagent.rewrite.recipes.framework import CudaRecipe, Source, Variant, register
from perfagent.workloads.launch_spec import LaunchOverride

NAME = "launch-geometry"
WAVES = (8, 4, 1)
BLOCKS = (128, 256, 512, 1024)
MAX_GRID_X = _launch.MAX_GRID_X


def _shared_mem_candidate(kernel: Node, launch: LaunchContext) -> tuple[str, int, int] | str:
    """(shared_mem expression, bytes now, bytes then) when the spec's dynamic shared memory is oversized.

    Applies when every dynamic (``extern __shared__``) array of the kernel is subscripted only as
    ``name[threadIdx.x]``: a block then touches ``blockDim.x`` elements, so ``block * sizeof(T)`` bytes
    suffice and the rest only lowers occupancy. Else the reason.
    """
    current = _launch.value(launch.shared_mem, launch)
    if not current:
        return "the spec requests none"
    body = kernel.child_by_field_name("body") or kernel
    arrays = [
        (decl, ident)
        for decl, _d, ident, _sizes in _cuda.shared_arrays(body)
        if _cuda.has_storage(decl, "extern")
    ]
    if not arrays:
        return "no extern __shared__ array"
    widest = 0
    for decl, ident in arrays:
        elem = _cuda.ELEMENT_BYTES.get(_cuda.element_type(decl))
        if elem is None:
            return f"unknown element type {_cuda.element_type(decl)!r}"
        widest = max(widest, elem)
        name = _cuda.text(ident)
        for node in _cuda.walk(body):
            if node.type == "identifier" and _cuda.text(node) == name and node.id != ident.id:
                parent = node.parent
                index = None
                if parent is not None and parent.type == "subscript_expression":
                    index = parent.child_by_field_name("index") or next(
                        (c for c in parent.children if c.type == "subscript_argument_list"), None
                    )
                if index is None or " ".join(_cuda.text(index).strip("[] ").split()) != "threadIdx.x":
                    return f"{name} on line {_cuda.line_of(node)} is not indexed by threadIdx.x alone"
    block = launch.block[0]
    expr = f"{widest * int(block)}" if isinstance(block, int) else f"{widest} * {_launch.paren(block)}"
    needed = _launch.value(expr, launch)
    if needed is None or needed >= current:
        return f"{current} bytes requested, {needed} needed: not oversized"
    return expr, current, needed


def _params(kernel: Node) -> list[str]:
    """The kernel's parameter names, in order."""
    decl = _cuda.function_declarator(kernel)
    plist = decl.child_by_field_name("parameters") if decl is not None else None
    names = []
    for p in plist.named_children if plist is not None else []:
        idents = [n for n in _cuda.walk(p) if n.type == "identifier"]
        names.append(_cuda.text(idents[-1]) if idents else "")
    return names


def _work_items(kernel: Node, launch: LaunchContext) -> tuple[str, int] | None:
    """(index count as a spec expression, elements per index) of the grid-stride loop's bound.

    ``i < n`` with ``n`` the kernel's k-th parameter gives the spec's k-th argument value (matched by
    position); ``i < n4`` with ``n4`` initialised to ``n / 4`` gives (n, 4). Anything else: None.
    """
    params = _params(kernel)
    body = kernel.child_by_field_name("body") or kernel
    for loop in (n for n in _cuda.walk(body) if n.type == "for_statement"):
        update = loop.child_by_field_name("update")
        if update is None or "+=" not in _cuda.text(update):
            continue
        cond = loop.child_by_field_name("condition")
        if (
            cond is None
            or cond.type != "binary_expression"
            or _cuda.text(cond.child_by_field_name("operator") or cond) != "<"
        ):
            continue
        right = cond.child_by_field_name("right")
        bound = strip_down(right) if right is not None else None
        if bound is None or bound.type != "identifier":
            continue
        name = _cuda.text(bound)
        if name in params:
            return _param_value(params.index(name), launch, 1)
        for decl in (n for n in _cuda.walk(body) if n.type == "init_declarator"):
            target = decl.child_by_field_name("declarator")
            value = decl.child_by_field_name("value")
            if target is None or value is None or _cuda.text(target) != name:
                continue
            inner = strip_down(value)
            op = inner.child_by_field_name("operator") if inner.type == "binary_expression" else None
            if op is None or _cuda.text(op) != "/":
                return None
            left, right = inner.child_by_field_name("left"), inner.child_by_field_name("right")
            left_id = strip_down(left) if left is not None else None
            width = _cuda.evaluate(_cuda.text(right), {}) if right is not None else None
            if (
                left_id is not None
                and left_id.type == "identifier"
                and _cuda.text(left_id) in params
                and width
            ):
                return _param_value(params.index(_cuda.text(left_id)), launch, width)
            return None
    return None


def _param_value(index: int, launch: LaunchContext, width: int) -> tuple[str, int] | None:
    if index >= len(launch.args) or launch.args[index].value is None:
        return None
    return str(launch.args[index].value), width


def _grid_candidates(kernel: Node, launch: LaunchContext) -> list[tuple[str, str, int]]:
    """(label, grid expression, blocks) for a grid-stride kernel, the current grid left out."""
    block = launch.block[0]
    current = _launch.value(launch.grid[0], launch)
    options: list[tuple[str, str]] = []
    work = _work_items(kernel, launch)
    if work is not None:
        items, width = work
        per_block = f"{width * int(block)}" if isinstance(block, int) else f"{width} * {_launch.paren(block)}"
        what = f"one {width}-element vector per thread" if width > 1 else "one element per thread"
        options.append((what, f"ceil_div({_launch.paren(items)}, {per_block})"))
    for waves in WAVES:
        resident = f"sm_count * (max_threads_per_sm // {_launch.paren(block)})"
        options.append(
            (
                f"{waves} wave{'s' if waves > 1 else ''} of resident blocks",
                resident if waves == 1 else f"{waves} * {resident}",
            )
        )
    out: list[tuple[str, str, int]] = []
    seen = {current}
    for label, expr in options:
        blocks = _launch.value(expr, launch)
        if blocks is None or blocks in seen or not 1 <= blocks <= MAX_GRID_X:
            continue
        seen.add(blocks)
        out.append((label, expr, blocks))
    return out


def _block_candidates(launch: LaunchContext) -> list[tuple[int, str]]:
    """(block, grid expression) for a one-element-per-thread kernel whose grid is written with the block."""
    block = _launch.value(launch.block[0], launch)
    grid = str(launch.grid[0])
    if block is None or not re.search(rf"\b{block}\b", grid):
        return []
    threads = (_launch.value(grid, launch) or 0) * block
    out = []
    for new in sorted(BLOCKS, key=lambda b: (abs(b - block), b)):
        if new == block:
            continue
        expr = re.sub(rf"\b{block - 1}\b", str(new - 1), grid)
        expr = re.sub(rf"\b{block}\b", str(new), expr)
        blocks = _launch.value(expr, launch)
        if blocks is None or blocks * new < threads or blocks > MAX_GRID_X:
            continue  # the rewritten grid would not cover the same threads
        out.append((new, expr))
    return out


_Match = tuple[Node, Uses, tuple[str, int, int] | str]


def _launch_only(
    src: Source, description: str, parameters: dict[str, str | int], launch: LaunchOverride, what: str
) -> Variant:
    """A variant with the request's own source and a new launch geometry."""
    return Variant(
        source=src.text,
        description=description,
        parameters=dict(parameters),
        launch=launch,
        notes=[f"source unchanged: only the launch spec's {what} differs"],
    )


class _LaunchGeometry(CudaRecipe[_Match]):
    name = NAME
    transforms = ("launch-config", "increase-parallelism")
    summary = "launch-spec grid / block sweep for kernels whose result does not depend on them (grid-stride, or one element per thread)"
    needs_launch = True
    no_launch = "no launch spec: the grid is set in the source's own launch (the launch-config recipe edits block-size constants there)"
    launch_dims = 1

    def match(self, src: Source) -> _Match | str:
        kernel, launch = src.kernel, src.launch
        if isinstance(kernel, str):
            return kernel
        assert launch is not None
        uses = analyse(kernel)
        smem = _shared_mem_candidate(kernel, launch)
        if isinstance(smem, tuple):
            return kernel, uses, smem
        if uses.grid_stride:
            return (
                (kernel, uses, smem)
                if _grid_candidates(kernel, launch)
                else "no grid differs from the current one"
            )
        if uses.block_free:
            return (
                (kernel, uses, smem)
                if _block_candidates(launch)
                else (
                    "the grid is not written with the literal block size (ceil_div(n, B) or (n + B - 1) / B)"
                )
            )
        return f"{uses.blocker}; dynamic shared memory: {smem}"

    def plan(self, src: Source, m: _Match) -> list[Variant]:
        kernel, uses, smem = m
        launch = src.launch
        assert launch is not None
        out: list[Variant] = []
        if isinstance(smem, tuple):
            expr, now, then = smem
            out.append(
                _launch_only(
                    src,
                    f"dynamic shared memory {expr} = {then} bytes per block instead of {launch.shared_mem} = {now} "
                    "(each block touches blockDim.x elements): more blocks fit on an SM",
                    {"shared_mem": expr, "bytes": then},
                    LaunchOverride(shared_mem=expr),
                    "dynamic shared memory",
                )
            )
        if uses.grid_stride:
            out.extend(
                _launch_only(
                    src,
                    f"grid-stride kernel: launch {label} (grid = {expr}, {blocks} blocks with the spec's parameters) "
                    f"instead of {launch.grid[0]}",
                    {"grid": expr, "blocks": blocks},
                    LaunchOverride(grid=[expr]),
                    "grid (a grid-stride loop covers any grid)",
                )
                for label, expr, blocks in _grid_candidates(kernel, launch)
            )
        elif uses.block_free:
            out.extend(
                _launch_only(
                    src,
                    f"block {block} threads (grid {expr}) instead of {launch.block[0]}",
                    {"block": block, "grid": expr},
                    LaunchOverride(grid=[expr], block=[block]),
                    "block and grid",
                )
                for block, expr in _block_candidates(launch)
            )
        return out


RECIPE = register(_LaunchGeometry())
applies, propose = RECIPE.applies, RECIPE.propose
