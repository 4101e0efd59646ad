"""Vectorised lanes: the rewritten lane-strided loop, and the whole-kernel pass the recipes call.

The loop ``for (T i = me; i < n; i += W) BODY`` becomes (one braced statement in its place)::

    {
        const E *p_vb = p + (E0);                 // each stream's base, evaluated once
        size_t perfagent_done = 0;
        if (((unsigned long long)p_vb | ...) & 15ull) == 0ull [&& distinct bases]) {
            const size_t perfagent_groups = (size_t)(n > 0 ? n : 0) / V;
            for (size_t perfagent_q = me; perfagent_q < perfagent_groups; perfagent_q += W) {
                <16-byte loads>  { BODY, element 0 }  ...  { BODY, element V-1 }  <16-byte stores>
            }
            perfagent_done = perfagent_groups * V;
        }
        for (T i = (T)perfagent_done + me; i < n; i += W) BODY   // the tail (everything when misaligned)
    }

The test reads only values every sharer holds alike (the bases, ``n``), so a warp or block takes one
branch together and reaches the caller's butterflies and barriers after the loop as before.
"""

from __future__ import annotations

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._lane_vector import LaneLoop, analyse
from perfagent.rewrite.recipes._vector_emit import (
    NAME,
    braced,
    indent_of,
    load,
    names_for,
    render_moved,
    static_asserts,
    store,
)

UNIT = "    "


def _condition(plan: LaneLoop) -> str:
    aligned = " | ".join(f"(unsigned long long){s.base}" for s in plan.streams)
    cond = f"(({aligned}) & 15ull) == 0ull"
    return cond + "".join(f" && (const void *){a} != (const void *){b}" for a, b in plan.distinct)


def _lanes(data: bytes, plan: LaneLoop, var: dict[str, str], view: dict[str, str], indent: str) -> list[str]:
    """One braced copy of the body per element of the group, each array access turned into its lane."""
    out = []
    for k in range(plan.width):
        repl = {
            s.node.start_byte: (
                s.node.end_byte,
                plan.layouts[s.pointer].lane(var[s.pointer], view[s.pointer], k),
            )
            for s in plan.sites
        }
        inner = indent + (UNIT if plan.index_values else "")
        block = braced(data, plan.body, repl, inner, UNIT)
        if plan.index_values:  # the element's own counter, in the original type
            own = f"const {plan.var_type} {plan.var} = ({plan.var_type})(perfagent_q * {plan.width} + {k});"
            block = f"{{\n{inner}{own}\n{inner}{block}\n{indent}}}"
        out.append(indent + block)
    return out


def _scalar_loop(data: bytes, plan: LaneLoop, indent: str) -> list[str]:
    """The original loop, starting after the vector groups."""
    first = f"({plan.var_type})perfagent_done + {_cuda.text(plan.start)}"
    text = render_moved(data, plan.node, {plan.start.start_byte: (plan.start.end_byte, first)}, indent)
    pragma = [indent + _cuda.text(plan.pragma).strip()] if plan.pragma is not None else []
    return [*pragma, indent + text]


def loop_text(
    source: str, plan: LaneLoop, me: str, step: str, names: tuple[dict[str, str], dict[str, str]]
) -> str:
    """The braced statement that replaces ``plan.node`` (``names``: vector and view names by base)."""
    data = source.encode("utf-8")
    i0 = indent_of(data, plan.node.start_byte)
    i1, i2, i3 = i0 + UNIT, i0 + UNIT * 2, i0 + UNIT * 3
    var, views = names
    lines = [
        f"{{  // {NAME}: {plan.width} elements per sharer and step, 16 bytes per access "
        "(the scalar loop: the tail, or all of it when a base is not 16-byte aligned)"
    ]
    for s in plan.streams:
        const = "const " if s.base not in plan.stored else ""
        lines.append(f"{i1}{const}{s.pointer.spelling} *{s.base} = {s.address};")
    lines += [i1 + a for a in static_asserts(plan)]
    lines += [
        f"{i1}size_t perfagent_done = 0;",
        f"{i1}if ({_condition(plan)}) {{",
        f"{i2}const size_t perfagent_groups = (size_t)(({plan.bound}) > 0 ? ({plan.bound}) : 0) / {plan.width};",
        f"{i2}for (size_t perfagent_q = {me}; perfagent_q < perfagent_groups; perfagent_q += {step}) {{",
    ]
    for s in plan.streams:
        lines += [i3 + line for line in load(plan, s.pointer, var[s.base], views[s.base])]
    lines += _lanes(data, plan, var, views, i3)
    for base in plan.stored:
        lines += [i3 + line for line in store(plan, base, var[base])]
    lines += [f"{i2}}}", f"{i2}perfagent_done = perfagent_groups * {plan.width};", f"{i1}}}"]
    lines += _scalar_loop(data, plan, i1)
    return "\n".join([*lines, f"{i0}}}"])


def vectorize_lanes(source: str, kernel_name: str | None, me: str, step: str) -> tuple[str, list[str]] | str:
    """``source`` with every loop ``for (T i = me; ...; i += step)`` of the kernel vectorised, and a note
    per loop; or why none was (each loop's reason)."""
    tree = _cuda.parse(source.encode("utf-8"))
    kernel = _cuda.select_kernel(tree, kernel_name)
    if isinstance(kernel, str):
        return kernel
    taken = _cuda.identifiers_in(tree.root_node) | set(_cuda.constants(tree))
    loops = [n for n in _cuda.walk(kernel) if n.type == "for_statement" and not _nested(n, kernel)]
    edits: list[_cuda.Edit] = []
    notes, reasons = [], []
    for loop in loops:
        plan = analyse(loop, kernel, me, step, taken)
        if isinstance(plan, str):
            reasons.append(plan)
            continue
        arrays = [s.pointer for s in plan.streams]
        names = (names_for(tree, arrays, "_v"), names_for(tree, arrays, "_e"))
        if plan.pragma is not None:
            start = _cuda.line_start(source.encode("utf-8"), plan.pragma.start_byte)
            edits.append(_cuda.Edit(start, plan.pragma.end_byte, ""))
        edits.append(_cuda.Edit(loop.start_byte, loop.end_byte, loop_text(source, plan, me, step, names)))
        notes.append(
            f"line {_cuda.line_of(loop)}: {plan.width} elements per step through 16-byte vectors of "
            + ", ".join(s.address for s in plan.streams)
        )
    if not edits:
        return "; ".join(reasons) or "no loop"
    return _cuda.apply_edits(source, edits), notes


def _nested(loop: Node, kernel: Node) -> bool:
    node = loop.parent
    while node is not None and node != kernel:
        if node.type == "for_statement":
            return True
        node = node.parent
    return False
