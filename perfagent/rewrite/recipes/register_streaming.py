"""register-streaming: a 3-D stencil's z dimension becomes a per-thread march with a register window.

The basic 3-D stencil (PMPP 4th ed. ch. 8, Fig. 8.6) launches one thread per output point on a 3-D grid,
and every input point is fetched by the threads of up to seven (or 27) outputs, three of them along z.
The textbook fix (PMPP ch. 8.5 "register tiling", Micikevicius' 2.5-D blocking, GPGPU-2 2009) launches
2-D thread blocks over (x, y) whose threads march along z, carrying the z - 1 / z / z + 1 values in
registers: each input plane is loaded once per thread instead of three times, and a block of 32 threads
along x reads whole 128-byte rows.

Precondition (``_zmarch``): a 3-D launch, the kernel's z index ``i = blockIdx.z * blockDim.z +
threadIdx.z`` used as a plain value, straight-line per-point work behind early exits, and a read-only
array read at one (x, y) index on consecutive z planes (proven on the subscripts as polynomials).

The rewrite: the block becomes (BX, BY, 1) and the grid's z covers the old z extent in chunks of Z
planes per thread; the statements after ``i``'s declaration run in ``for (t = 0; t < Z; ++t)`` with
``i = blockIdx.z * Z + t``. Each early exit (``if (C) return;``, and the last ``if (C) {...}``'s
condition) becomes ``continue``, exactly as the original threads of those planes did nothing (planes
past the old grid fail ``i``'s bound as the old grid's spare threads did: the guard that bounds ``i`` is
what makes the original correct for any grid too). Before the first read of a chain, the window shifts
by one plane and loads the leading plane only when the previous plane got past the exits (otherwise it
loads every plane of the window, as the original read them there): every load is one the original made
at that plane, so no new address is touched. Results are bit-identical: the same expressions in the same
order, reading the same values.
"""

from __future__ import annotations

from dataclasses import dataclass

from perfagent.rewrite.recipes import _cuda, _launch
from perfagent.rewrite.recipes._thread_index import Rewrites, put, render
from perfagent.rewrite.recipes._zmarch import Chain, ZMarch, analyse
from perfagent.rewrite.recipes.framework import CudaRecipe, Edit, Source, Variant, register
from perfagent.workloads.launch_spec import LaunchOverride

NAME = "register-streaming"
PREFIX = "zs_"
GEOMETRIES = ((32, 8, 32), (32, 8, 16), (64, 4, 32), (32, 4, 64))
"""(block x, block y, planes per thread): the textbook's 32 x 8 tile with 32 planes first (whole 128-byte
rows per warp, enough blocks for an H100/H200 from 256^3 up), then shorter and longer marches."""


@dataclass(frozen=True)
class _Plan:
    march: ZMarch
    end: int
    """Byte offset where the replaced statements end (the body's closing brace)."""


def _slot(c: int, d: int) -> str:
    return f"{PREFIX}w{c}_{'m' if d < 0 else 'p'}{abs(d)}"


def _window(chains: list[Chain], pad: str) -> str:
    """Shift-or-load of every chain's planes, then the window is warm."""
    warm, cold = [], []
    for c, chain in enumerate(chains):
        warm += [f"{_slot(c, d)} = {_slot(c, d + 1)};" for d in range(chain.low, chain.high)]
        warm.append(f"{_slot(c, chain.high)} = {_cuda.text(chain.reads[chain.high][0])};")
        cold += [
            f"{_slot(c, d)} = {_cuda.text(chain.reads[d][0])};" for d in range(chain.low, chain.high + 1)
        ]
    inner = "\n".join(f"{pad}    {s}" for s in warm)
    other = "\n".join(f"{pad}    {s}" for s in cold)
    return (
        f"{pad}if ({PREFIX}warm) {{  // the previous plane's window, one plane on: load the leading plane only\n"
        f"{inner}\n{pad}}} else {{\n{other}\n{pad}}}\n{pad}{PREFIX}warm = true;\n"
    )


def _loop_body(m: ZMarch, pad: str) -> str:
    """The statements after the z index, exits as ``continue``, chain reads as registers."""
    slots = {
        r.id: _slot(c, d)
        for c, chain in enumerate(m.chains)
        for d, reads in chain.reads.items()
        for r in reads
    }
    rewrites: Rewrites = {rid: put(name) for rid, name in slots.items()}
    first_read = m.stmts[m.load_at].start_byte
    for ret in m.exits:
        # an exit before the window loads leaves it cold; one after it, the window holds this plane
        cold = ret.start_byte < first_read
        rewrites[ret.id] = put(f"{{ {PREFIX}warm = false; continue; }}" if cold else "continue;")
    lines = []
    if_at = (
        None
        if m.last_if is None
        else next(k for k, s in enumerate(m.stmts) if s.start_byte > m.last_if.start_byte)
    )
    for k, stmt in enumerate(m.stmts):
        if k == if_at and m.last_if is not None:
            cond = m.last_if.child_by_field_name("condition")
            assert cond is not None
            reset = f"{PREFIX}warm = false; " if k <= m.load_at else ""
            lines.append(f"{pad}if (!{_cuda.text(cond)}) {{ {reset}continue; }}\n")
        if k == m.load_at:
            lines.append(_window(m.chains, pad))
        lines.append(f"{pad}{render(stmt, rewrites)}\n")
    return "".join(lines)


def emit(m: ZMarch, planes: int, pad: str) -> str:
    """The replacement of everything from the z index's declaration to the end of the kernel body."""
    z = m.index
    slots = ", ".join(
        f"{_slot(c, d)}{{}}" for c, ch in enumerate(m.chains) for d in range(ch.low, ch.high + 1)
    )
    types = {ch.element for ch in m.chains}
    decls = (
        f"{pad}{types.pop()} {slots};\n"
        if len(types) == 1
        else "".join(
            f"{pad}{ch.element} {', '.join(f'{_slot(c, d)}{{}}' for d in range(ch.low, ch.high + 1))};\n"
            for c, ch in enumerate(m.chains)
        )
    )
    return (
        f"// register streaming: this thread marches {planes} z planes; each chain of z-neighbour reads\n"
        f"{pad}// rolls through registers (one plane loaded per step once the window is warm)\n"
        f"{pad}const unsigned int {PREFIX}z0 = blockIdx.z * {planes}u;\n"
        f"{pad}bool {PREFIX}warm = false;\n"
        + decls
        + f"{pad}for (unsigned int {PREFIX}t = 0u; {PREFIX}t < {planes}u; ++{PREFIX}t) {{\n"
        f"{pad}    {z.type} {z.name} = ({z.type})({PREFIX}z0 + {PREFIX}t);\n"
        + _loop_body(m, pad + "    ")
        + f"{pad}}}\n"
    )


def _grid(src: Source, bx: int, by: int, planes: int) -> list[str]:
    assert src.launch is not None
    g, b = src.launch.grid, src.launch.block
    return [
        _launch.ceil_div(_launch.threads_x(g[0], b[0]), bx),
        _launch.ceil_div(_launch.threads_x(g[1], b[1]), by),
        _launch.ceil_div(_launch.threads_x(g[2], b[2]), planes),
    ]


class _RegisterStreaming(CudaRecipe[_Plan]):
    name = NAME
    transforms = ("register-tiling",)
    summary = (
        "3-D stencils on a 3-D launch: 2-D blocks march z with the z-neighbour reads in a rolling register "
        "window (PMPP register tiling / 2.5-D blocking); grid and block re-tuned"
    )
    needs_launch = True
    no_launch = "needs a launch spec: the grid's z dimension becomes a per-thread loop"
    launch_dims = 3

    def match(self, src: Source) -> _Plan | str:
        if PREFIX + "w" in src.text or PREFIX + "warm" in src.text:
            return f"the source already uses names starting with {PREFIX}"
        kb = src.kernel_body
        if isinstance(kb, str):
            return kb
        m = analyse(kb[0])
        if isinstance(m, str):
            return m
        return _Plan(m, kb[1].end_byte - 1)

    def plan(self, src: Source, m: _Plan) -> list[Variant]:
        z = m.march.index
        pad = " " * z.decl.start_point[1]
        out = []
        for bx, by, planes in GEOMETRIES:
            code = emit(m.march, planes, pad)
            out.append(
                Variant(
                    edits=[Edit(z.decl.start_byte, m.end, code)],
                    description=(
                        f"register streaming along z: ({bx}, {by}, 1) blocks, {planes} planes per thread; "
                        f"{sum(len(c.reads) for c in m.march.chains)} z-neighbour reads of "
                        f"{', '.join(sorted({c.array for c in m.march.chains}))} kept in registers "
                        f"(one load per plane per chain); same arithmetic, bit-identical"
                    ),
                    parameters={"block_x": bx, "block_y": by, "planes_per_thread": planes},
                    launch=LaunchOverride(grid=_grid(src, bx, by, planes), block=[bx, by, 1]),
                )
            )
        return out


RECIPE = register(_RegisterStreaming())
applies, propose = RECIPE.applies, RECIPE.propose
