"""warp-shuffle-scan: replace a shared-memory Kogge-Stone block scan by a warp-shuffle block scan.

The Kogge-Stone scan of PMPP 4th ed. ch. 11 (Fig. 11.3) spends log2(block) steps, each with two
block-wide barriers and a shared-memory read and write per thread. The textbook fix (CUB's BlockScan
WARP_SCANS, cuda-samples ``shfl_scan``) scans each warp's 32 values in registers with
``__shfl_up_sync`` (5 steps, no barrier), writes the 32 warp totals to shared memory once, lets warp 0
scan them the same way, and adds each warp's offset: two barriers in all.

Precondition (proven in ``_block_scan``, refused with the line otherwise): the loop is the Kogge-Stone
step over a one-dimensional ``__shared__`` array indexed by the thread index, with a commutative,
associative combine (``+ * | & ^`` or a max/min function), at the top level of the kernel with no
``return`` before it; the launch's block is 1-D, a multiple of 32 (every warp full: the shuffles name
all 32 lanes) and at most 1024 threads. The loop is replaced by code that leaves the array in the same
state (``A[t]`` = the inclusive scan of ``A[0..t]`` for every thread ``t``) followed by a barrier, so
what the kernel does before and after it (loads, inclusive or exclusive stores, section sums for a
second pass) is kept as it is. Only the combination order changes (floating-point sums round
differently; the verifier's tolerance judges them). The launch is unchanged: the work per thread and
per block is the same.
"""

from __future__ import annotations

from perfagent.rewrite.recipes import _cuda, _launch
from perfagent.rewrite.recipes._block_scan import BlockScan, analyse
from perfagent.rewrite.recipes._block_scan_steps import FUNCS
from perfagent.rewrite.recipes.framework import CudaRecipe, Edit, Source, Variant, register

NAME = "warp-shuffle-scan"
PREFIX = "wscan_"
"""Every name the rewrite declares starts with this (a kernel that already uses it is refused)."""


def _combine(combine: str, older: str, newer: str) -> str:
    """``older op newer`` (the earlier elements on the left, as the scan orders them)."""
    return f"{combine}({older}, {newer})" if combine in FUNCS else f"{older} {combine} {newer}"


def _warp_scan(value: str, combine: str, pad: str) -> str:
    """The 5-step Hillis-Steele scan of ``value`` across a warp (lane l gets lanes 0..l combined)."""
    return (
        f"{pad}#pragma unroll\n"
        f"{pad}for (unsigned int {PREFIX}d = 1; {PREFIX}d < 32u; {PREFIX}d *= 2u) {{\n"
        f"{pad}    const auto {PREFIX}up = __shfl_up_sync(0xffffffffu, {value}, {PREFIX}d);\n"
        f"{pad}    if ({PREFIX}lane >= {PREFIX}d) {value} = {_combine(combine, f'{PREFIX}up', value)};\n"
        f"{pad}}}\n"
    )


def _load(m: BlockScan, inner: str) -> tuple[str, str]:
    """(the code that reads this thread's input into ``wscan_v``, the store of its result)."""
    p, e = PREFIX, m.element
    db = m.double
    if db is None:
        return f"{inner}{e} {p}v = {m.array}[{m.tid}];\n", f"{m.array}[{m.tid}]"
    # the double-buffered loop keeps its selector updates only: the first step's input slot and the last
    # step's output slot are captured, and the selectors end as the original steps left them
    updates = "".join(f"{inner}    {u}\n" for u in db.selectors)
    return (
        f"{inner}{e} {p}v{{}};\n{inner}{e} *{p}out = nullptr;\n{inner}bool {p}first = true;\n"
        f"{inner}{db.header} {{  // the selector updates of every step, no memory, no barrier\n{updates}"
        f"{inner}    if ({p}first) {p}v = {db.load};\n{inner}    {p}first = false;\n"
        f"{inner}    {p}out = &{db.store};\n{inner}}}\n",
        f"*{p}out",
    )


def emit(m: BlockScan, indent: str) -> str:
    """The replacement of the loop: the same final array; two barriers, plus one on a side where threads
    read or wrote other threads' slots."""
    p, a, e = PREFIX, m.array, m.element
    t = m.tid
    inner = indent + "    "
    load, store = _load(m, inner)
    return (
        f"{{  // warp-shuffle scan of {a}[0 .. blockDim.x): each warp in registers (__shfl_up_sync), then the\n"
        f"{inner}// warp totals once through shared memory; {a} ends as the Kogge-Stone loop left it\n"
        f"{inner}__shared__ {e} {p}totals[32];\n"
        + (
            f"{inner}// no barrier first: before the scan each thread only touched its own slot {a}[{t}]\n"
            if m.own_before
            else f"{inner}__syncthreads();  // what the threads stored into {a} before the scan is visible\n"
        )
        + load
        + f"{inner}const unsigned int {p}lane = (unsigned int)({t}) % 32u, {p}warp = (unsigned int)({t}) / 32u;\n"
        + _warp_scan(f"{p}v", m.combine, inner)
        + f"{inner}if ({p}lane == 31u) {p}totals[{p}warp] = {p}v;\n"
        f"{inner}__syncthreads();\n"
        f"{inner}if ({p}warp == 0u) {{  // lanes past the last warp read any total: a scan only looks back\n"
        f"{inner}    const unsigned int {p}warps = blockDim.x / 32u;\n"
        f"{inner}    {e} {p}w = {p}totals[{p}lane < {p}warps ? {p}lane : 0u];\n"
        + _warp_scan(f"{p}w", m.combine, inner + "    ")
        + f"{inner}    if ({p}lane < {p}warps) {p}totals[{p}lane] = {p}w;\n"
        f"{inner}}}\n"
        f"{inner}__syncthreads();\n"
        f"{inner}if ({p}warp > 0u) {p}v = {_combine(m.combine, f'{p}totals[{p}warp - 1u]', f'{p}v')};\n"
        f"{inner}{store} = {p}v;\n"
        + (
            f"{inner}// no barrier last: after the scan each thread only reads its own slot {a}[{t}]\n"
            if m.own_after
            else f"{inner}__syncthreads();  // every thread's result is visible, as after the last step of the loop\n"
        )
        + f"{indent}}}"
    )


class _WarpShuffleScan(CudaRecipe[BlockScan]):
    name = NAME
    transforms = ("warp-shuffle-reduction",)
    summary = (
        "shared-memory Kogge-Stone block scans (2 barriers per step) -> warp-shuffle scan + one step over "
        "the warp totals; inclusive/exclusive stores and section sums kept"
    )
    needs_launch = True
    no_launch = "needs a launch spec: the block size decides whether every warp is full"
    launch_dims = 1

    def match(self, src: Source) -> BlockScan | str:
        assert src.launch is not None
        block = _launch.block_size(src.launch)
        if block is None:
            return f"the block size {src.launch.block[0]} does not evaluate"
        if block % 32 or not 32 <= block <= 1024:
            return f"the block ({block} threads) is not a multiple of 32 up to 1024: a warp would be partial"
        if PREFIX in src.text:
            return f"the source already uses names starting with {PREFIX}"
        return src.on_kernel(lambda kernel: analyse(kernel, block, src.constants))

    def plan(self, src: Source, m: BlockScan) -> list[Variant]:
        pad = " " * m.loop.start_point[1]
        code = emit(m, pad)
        if m.runtime is not None:  # a parameter bound: the original steps where it stops short of the block
            code = f"if ({m.runtime}) {code} else {{  // the strides stop short of the block: the original steps\n{pad}    {_cuda.text(m.loop)}\n{pad}}}"
        return [
            Variant(
                edits=[Edit(m.loop.start_byte, m.loop.end_byte, code)],
                description=(
                    f"warp-shuffle scan of {m.array} (combine {m.combine}): each warp scans in registers with "
                    "__shfl_up_sync, one shared step over the warp totals; 4 barriers instead of 2 per step. "
                    "The array ends as the Kogge-Stone loop left it; the combination order differs"
                ),
                parameters={"scan": "warp-shuffle", "combine": m.combine},
            )
        ]


RECIPE = register(_WarpShuffleScan())
applies, propose = RECIPE.applies, RECIPE.propose
