"""cooperative-scan's rewrite: the row's running value scanned by a warp (shuffles) or a block (shared memory)."""

from __future__ import annotations

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._coop_row_analysis import LANE
from perfagent.rewrite.recipes._scan_analysis import (
    BASE,
    CONTRIB,
    EXCL,
    IN,
    INCL,
    MAX_BLOCK,
    SCAN,
    TID,
    ScanPlan,
)
from perfagent.rewrite.recipes._scan_syntax import combined, identity, mentions


def _rewritten(node: Node, replace: dict[int, str]) -> str:
    """``node``'s text with the descendants whose ids are in ``replace`` replaced."""
    data = node.text or b""
    out = data
    hits = sorted(
        ((n.start_byte, n.end_byte, replace[n.id]) for n in _cuda.walk(node) if n.id in replace), reverse=True
    )
    base = node.start_byte
    for start, end, new in hits:
        out = out[: start - base] + new.encode() + out[end - base :]
    return out.decode("utf-8")


def rewrite(source: str, plan: ScanPlan, *, block: bool = False) -> str:
    """The source with the row's running value scanned by a warp (or, ``block``, by the whole block)."""
    me, width = (TID, "blockDim.x") if block else (LANE, "32")
    edits = _row_edits(plan, me, width, block=block)
    loop = plan.loop
    cond, init_node = loop.child_by_field_name("condition"), loop.child_by_field_name("initializer")
    start = (
        next(n for n in _cuda.walk(init_node) if n.type == "init_declarator")
        if init_node is not None
        else None
    )
    start_value = start.child_by_field_name("value") if start is not None else None
    assert (
        cond is not None
        and start_value is not None
        and plan.update is not None
        and plan.update_expr is not None
    )
    t = plan.acc_type
    pad = " " * loop.start_point[1]
    inner = pad + "    "
    base_cond = _rewritten(cond, {n.id: BASE for n in mentions(cond, plan.var)})
    sign = "+" if plan.step > 0 else "-"
    who = "block" if block else "warp"
    lines = [
        f"for ({plan.counter_type} {BASE} = {_cuda.text(start_value)}; {base_cond}; {BASE} {sign}= {width}) "
        f"{{  // the {who} walks the row {width} elements at a time",
        f"{inner}const {plan.counter_type} {plan.var} = {BASE} {sign} {me};",
        f"{inner}const bool {IN} = {_cuda.text(cond)};",
    ]
    lines += _declarations(plan, inner)
    update_text = _rewritten(plan.update, {plan.update_expr.id: f"{CONTRIB} = {plan.contribution}"})
    lines += [
        f"{inner}{t} {CONTRIB} = {identity(plan.combine, t)};  // this thread's element's contribution",
        f"{inner}if ({IN}) {{ {update_text} }}",
    ]
    lines += _block_scan(plan, inner) if block else _warp_scan(plan, inner)
    lines += _stores_and_carry(plan, inner, block=block)
    lines.append(f"{pad}}}")
    edits.append(_cuda.Edit(loop.start_byte, loop.end_byte, "\n".join(lines)))
    return _cuda.apply_edits(source, edits)


def _row_edits(plan: ScanPlan, me: str, width: str, *, block: bool) -> list[_cuda.Edit]:
    """One row per warp (or block): the row index divided by ``width``, and the thread's place in it
    (``me``) declared after the row's declaration."""
    edits: list[_cuda.Edit] = []
    init = plan.row_init
    edits.append(_cuda.Edit(init.start_byte, init.end_byte, f"({_cuda.text(init)}) / {width}"))
    decl = init.parent.parent if init.parent is not None else None
    if decl is not None and decl.type == "declaration":
        pad = " " * decl.start_point[1]
        mine = "threadIdx.x" if block else "threadIdx.x % 32"
        edits.append(_cuda.Edit(decl.end_byte, decl.end_byte, f"\n{pad}const int {me} = {mine};"))
    return edits


def _declarations(plan: ScanPlan, inner: str) -> list[str]:
    """The loop body's declarations, those reading memory only within the bound (else zero)."""
    lines: list[str] = []
    for d in plan.declarations:
        if d.id in plan.guarded:  # its value reads memory: only within the bound
            init_decl = next(c for c in d.named_children if c.type == "init_declarator")
            value = init_decl.child_by_field_name("value")
            assert value is not None
            typ = _cuda.element_type(d).replace("const ", "")
            lines.append(
                f"{inner}{_rewritten(d, {value.id: f'{IN} ? ({_cuda.text(value)}) : static_cast<{typ}>(0)'})}"
            )
        else:
            lines.append(f"{inner}{_cuda.text(d)}")
    return lines


def _stores_and_carry(plan: ScanPlan, inner: str, *, block: bool) -> list[str]:
    """The stores of the running value (exclusive before the update, inclusive after), in their order,
    then the carry of the chunk's total into the next chunk."""
    acc, combine = plan.acc, plan.combine
    lines: list[str] = []
    stores = [(s, EXCL) for s in plan.stores_before] + [(s, INCL) for s in plan.stores_after]
    stores.sort(key=lambda pair: pair[0].start_byte)
    body = " ".join(_rewritten(s, {n.id: value for n in mentions(s, acc)}) for s, value in stores)
    lines.append(f"{inner}if ({IN}) {{ {body} }}")
    if block:
        lines += [
            f"{inner}{acc} = {combined(combine, acc, f'{SCAN}[blockDim.x - 1]')};  // the carry into the next chunk",
            f"{inner}__syncthreads();  // the next chunk overwrites {SCAN}",
        ]
    else:
        lines.append(
            f"{inner}{acc} = __shfl_sync(0xffffffffu, {INCL}, 31);  // the carry into the next 32 elements"
        )
    return lines


def _warp_scan(plan: ScanPlan, inner: str) -> list[str]:
    """Inclusive (and exclusive) values of the 32 contributions, the carry combined in: shuffles."""
    t, acc, combine = plan.acc_type, plan.acc, plan.combine
    lines = [
        f"{inner}{t} {INCL} = {CONTRIB};",
        f"{inner}for (int o_ = 1; o_ < 32; o_ <<= 1) {{  // inclusive scan across the warp",
        f"{inner}    const {t} n_ = __shfl_up_sync(0xffffffffu, {INCL}, o_);",
        f"{inner}    if ({LANE} >= o_) {INCL} = {combined(combine, 'n_', INCL)};",
        f"{inner}}}",
        f"{inner}{INCL} = {combined(combine, acc, INCL)};",
    ]
    if plan.stores_before:
        lines += [
            f"{inner}{t} {EXCL} = __shfl_up_sync(0xffffffffu, {INCL}, 1);",
            f"{inner}if ({LANE} == 0) {EXCL} = {acc};",
        ]
    return lines


def _block_scan(plan: ScanPlan, inner: str) -> list[str]:
    """The same over the block's contributions: a barrier-separated Hillis-Steele scan in shared memory."""
    t, acc, combine = plan.acc_type, plan.acc, plan.combine
    lines = [
        f"{inner}__shared__ {t} {SCAN}[{MAX_BLOCK}];",
        f"{inner}{SCAN}[{TID}] = {CONTRIB};",
        f"{inner}__syncthreads();",
        f"{inner}for (int o_ = 1; o_ < blockDim.x; o_ <<= 1) {{  // inclusive scan across the block",
        f"{inner}    const {t} n_ = {TID} >= o_ ? {SCAN}[{TID} - o_] : {identity(combine, t)};",
        f"{inner}    __syncthreads();",
        f"{inner}    {SCAN}[{TID}] = {combined(combine, 'n_', f'{SCAN}[{TID}]')};",
        f"{inner}    __syncthreads();",
        f"{inner}}}",
        f"{inner}const {t} {INCL} = {combined(combine, acc, f'{SCAN}[{TID}]')};",
    ]
    if plan.stores_before:
        lines.append(
            f"{inner}const {t} {EXCL} = {TID} == 0 ? {acc} : {combined(combine, acc, f'{SCAN}[{TID} - 1]')};"
        )
    return lines
