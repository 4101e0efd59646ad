"""cooperative-row's two rewrites of one plan: a warp per row, and a block per row.

Both edit the same places (the row index, each loop's start and step, resets before and reductions
after each loop, the scalar stores); a ``Share`` says how: who shares the row (32 lanes or the block's
threads), the sharer's index, and how a reduction is finished (a shuffle butterfly, or a
shared-memory tree).

Block per row:
Few long rows (a KernelBench softmax or L2 norm of 16 rows of 16384, a matvec of 256 rows of 131072)
leave a warp per row with a few hundred warps on a GPU that holds thousands, each walking a very long
row. Giving each row a block of B threads instead multiplies the parallelism by B / 32 and keeps the
loads coalesced. Each reduction is finished in two steps: a butterfly of shuffles inside every warp, then
lane 0 of each warp stores the warp's value in shared memory, one barrier, and every thread combines the
(at most 32) warp values itself, so later passes (softmax's normalisation) see the row's value as the
warp version's butterfly made them see it; a second barrier protects the cells from the next reduction.
Two barriers per reduction whatever the block (a shared-memory tree needed log2(block) + 1 and a power
of two: the textbook fix's form, which the first measurements ran at 53-68 % of on RMSNorm and GroupNorm).

The analysis (``_coop_row_analysis``) already proved what this needs beyond the warp version: all code
outside the loops is uniform for the row, so a block whose threads all hold one row reaches every
barrier together (an early ``return`` for rows past the end returns the whole block). The launch keeps
its block and gets one block per former thread slot: grid ``G * B`` (rows past the end return).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._coop_row_analysis import LANE
from perfagent.rewrite.recipes._coop_row_nest import flat_header, grid_step
from perfagent.rewrite.recipes._coop_row_syntax import Loop, Plan

TID = "coop_tid"
MAX_BLOCK = 1024
"""The largest block CUDA allows: the shared arrays hold one value per warp of it, so a later change of
the block size (launch-config) cannot overrun them."""


def accumulator_types(kernel: Node, plan: Plan) -> dict[str, str] | str:
    """Declared type of every accumulator (without ``const``), or why one is unknown."""
    out: dict[str, str] = {}
    for acc, _ in plan.reductions:
        decl = next(
            (
                n.parent
                for n in _cuda.walk(kernel)
                if n.type == "init_declarator"
                and _cuda.text(n.child_by_field_name("declarator") or n) == acc
                and n.parent is not None
            ),
            None,
        )
        typ = _cuda.element_type(decl) if decl is not None else ""
        if typ not in _cuda.ELEMENT_BYTES:
            return f"the accumulator {acc} has no plain numeric type ({typ or 'not declared with a value'})"
        out[acc] = typ
    return out


def _combine(combine: str, a: str, b: str) -> str:
    return f"{a} + {b}" if combine == "+" else f"{combine}({a}, {b})"


def block_reduction(acc: str, combine: str, typ: str, name: str) -> str:
    """Every thread ends with the row's value of ``acc`` (warp butterflies, then the warps' values)."""
    return (
        f"{{ __shared__ {typ} {name}[{MAX_BLOCK // 32}]; {_shuffle(acc, combine).split('  //')[0]} "
        f"if (threadIdx.x % 32 == 0) {name}[threadIdx.x / 32] = {acc}; __syncthreads(); {acc} = {name}[0]; "
        f"for (int w_ = 1; w_ < blockDim.x / 32; ++w_) {acc} = {_combine(combine, acc, f'{name}[w_]')}; "
        "__syncthreads(); }  // every thread now holds the row's value"
    )


@dataclass(frozen=True)
class Share:
    """How the row is shared: the sharer's index (name and value), the sharers per row, who stores."""

    me: str
    me_value: str
    width: str
    """Sharers per row: the row divisor and the loops' step ('32' or 'blockDim.x')."""
    first: str
    """Who holds a count once and stores the scalars ('lane', 'thread')."""
    reduce: Callable[[str, str, int], str]
    """(accumulator, combine, serial number) -> the statement that gives every sharer the row's value."""


def _shuffle(acc: str, combine: str, _serial: int = 0) -> str:
    step = (
        f"{acc} + __shfl_xor_sync(0xffffffffu, {acc}, o_)"
        if combine == "+"
        else (f"{combine}({acc}, __shfl_xor_sync(0xffffffffu, {acc}, o_))")
    )
    return f"for (int o_ = 16; o_ > 0; o_ >>= 1) {acc} = {step};  // every lane now holds the row's value"


WARP = Share(me=LANE, me_value="threadIdx.x % 32", width="32", first="lane", reduce=_shuffle)
"""A warp per row: lanes stride by 32, butterflies of shuffles."""


def lanes(width: int) -> Share:
    """``width`` lanes per row (a part of a warp), for plans without reductions only: nothing is shuffled,
    so the rows sharing one warp need not agree on their control flow."""

    def no_reduction(acc: str, combine: str, serial: int) -> str:
        raise AssertionError(f"{acc} ({combine}): a part-warp share has no butterfly")

    return Share(
        me=LANE, me_value=f"threadIdx.x % {width}", width=str(width), first="lane", reduce=no_reduction
    )


def block(types: dict[str, str]) -> Share:
    """A block per row: threads stride by ``blockDim.x``, shared-memory trees (``types``: accumulator types)."""
    return Share(
        me=TID,
        me_value="threadIdx.x",
        width="blockDim.x",
        first="thread",
        reduce=lambda acc, combine, serial: block_reduction(acc, combine, types[acc], f"coop_red{serial}_"),
    )


def _split(loop: Loop, share: Share) -> list[_cuda.Edit]:
    """The edits that split the pass's iterations among the sharers: start + me, step by width (a nest:
    one flattened counter)."""
    if len(loop.levels) > 1:
        body = loop.levels[-1].node.child_by_field_name("body")
        assert body is not None
        head, close = flat_header(loop, share.me, share.width)
        return [
            _cuda.Edit(loop.node.start_byte, body.start_byte, head),
            _cuda.Edit(body.end_byte, loop.node.end_byte, close),
        ]
    start, update = loop.start, loop.node.child_by_field_name("update")
    assert update is not None
    first = share.me if _cuda.text(start).strip() == "0" else f"({_cuda.text(start)}) + {share.me}"
    return [
        _cuda.Edit(start.start_byte, start.end_byte, first),
        _cuda.Edit(update.start_byte, update.end_byte, f"{loop.var} += {share.width}"),
    ]


def rewrite(source: str, plan: Plan, share: Share) -> str:
    """The source with each row shared as ``share`` says."""
    me = share.me
    edits: list[_cuda.Edit] = []
    init = plan.row_init
    edits.append(_cuda.Edit(init.start_byte, init.end_byte, f"({_cuda.text(init)}) / {share.width}"))
    item = plan.item_loop
    decl = init.parent.parent if init.parent is not None else None  # init_declarator -> declaration
    if item is not None:  # a grid-stride loop over items: sharers step over the grid's warps (blocks)
        pad = " " * item.start_point[1]
        edits.append(
            _cuda.Edit(item.start_byte, item.start_byte, f"const int {me} = {share.me_value};\n{pad}")
        )
        update = item.child_by_field_name("update")
        step = grid_step(update) if update is not None else None
        assert step is not None
        edits.append(_cuda.Edit(step.start_byte, step.end_byte, f"({_cuda.text(step)}) / {share.width}"))
    elif decl is not None and decl.type == "declaration":
        pad = " " * decl.start_point[1]
        edits.append(_cuda.Edit(decl.end_byte, decl.end_byte, f"\n{pad}const int {me} = {share.me_value};"))
    serial = 0
    for loop in plan.loops:
        node = loop.node
        edits.extend(_split(loop, share))
        before = [
            f"if ({me} != 0) {acc} = 0;  // the incoming value counts once, in {share.first} 0"
            for acc in loop.resets
        ]
        after = []
        for acc, combine in loop.reductions.items():
            after.append(share.reduce(acc, combine, serial))
            serial += 1
        pad = " " * node.start_point[1]
        braced = node.parent is not None and node.parent.type == "compound_statement"
        head = "".join(f"{line}\n{pad}" for line in before)
        tail = "".join(f"\n{pad}{line}" for line in after)
        if braced:
            if head:
                edits.append(_cuda.Edit(node.start_byte, node.start_byte, head))
            if tail:
                edits.append(_cuda.Edit(node.end_byte, node.end_byte, tail))
        elif head or tail:
            edits.append(_cuda.Edit(node.start_byte, node.start_byte, "{\n" + pad + head))
            edits.append(_cuda.Edit(node.end_byte, node.end_byte, tail + "\n" + pad + "}"))
    for stmt in plan.scalar_stores:
        if stmt.parent is not None and stmt.parent.type == "compound_statement":
            edits.append(_cuda.Edit(stmt.start_byte, stmt.start_byte, f"if ({me} == 0) "))
        else:  # the body of an if or else: keep an else bound to its own if
            edits.append(_cuda.Edit(stmt.start_byte, stmt.start_byte, f"{{ if ({me} == 0) "))
            edits.append(_cuda.Edit(stmt.end_byte, stmt.end_byte, " }"))
    return _cuda.apply_edits(source, edits)
