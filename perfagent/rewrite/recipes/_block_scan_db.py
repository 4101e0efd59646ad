"""warp-shuffle-scan's double-buffered Kogge-Stone form (GPU Gems 3 ch. 39, Example 39-1; PMPP ch. 11's
exercise): two halves of one ``__shared__`` array, a selector that swaps them every step.

The shape, statements compared whitespace-free (``t`` the thread index, ``s`` the stride, ``A[X][t]`` or
``A[X + t]`` the slot of buffer X):

- the body is selector updates (``pout = 1 - pout; pin = 1 - pout;``: plain names assigned from
  expressions without subscripts or calls), then the step, with one or more ``__syncthreads();``
  anywhere but between the updates and the step;
- the step is ``if (G) A[O][t] = A[I][t] op A[I][t - s]; else A[O][t] = A[I][t];`` (either order of the
  operands, ``f(..)`` for max/min) or ``A[O][t] = G ? ... : A[I][t];``, with ``O`` and ``I`` different;
- after the loop the array is read only through the selector ``O`` of the last step, whose names are
  not assigned again.

Then, after the loop, ``A[O][t]`` holds the inclusive scan of what ``A[I][t]`` held at the first step,
and the selectors hold what the step sequence left. The rewrite keeps the loop with the selector
updates only (no memory, no barrier), captures the first step's input slot and the last step's output
slot, and scans in between.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda

_BARRIER = "__syncthreads();"
_OP = r"[+*|&^]"


@dataclass(frozen=True)
class DoubleBuffer:
    """What the rewrite needs of a double-buffered step."""

    header: str
    """The loop's text up to its body (``for (int s = 1; s < n; s *= 2)``)."""
    selectors: list[str]
    """The selector updates, as written, in order."""
    load: str
    """The first step's input slot at ``t`` (``temp[pin * n + thid]``)."""
    store: str
    """The output slot at ``t``."""
    combine: str


def _flat(text: str) -> str:
    return re.sub(r"(?<=\W) | (?=\W)", "", re.sub(r"\s+", " ", text.strip()))


def subscript_text(node: Node) -> str | None:
    """The index of a one-index subscript ``a[i]``, whitespace-free (None for anything else)."""
    if node.type != "subscript_expression":
        return None
    index = node.child_by_field_name("index")
    if index is None:
        args = next((c for c in node.children if c.type == "subscript_argument_list"), None)
        named = [] if args is None else [c for c in args.named_children if c.type != "comment"]
        index = named[0] if len(named) == 1 else None
    return None if index is None else _flat(_cuda.text(index))


def _slot(written: str, a: str, t: str) -> tuple[str, str] | None:
    """(selector, '2d' or 'flat') when ``written`` is the slot ``A[X][t]`` / ``A[X+t]`` / ``A[t+X]``."""
    m = re.fullmatch(rf"{a}\[(.+)\]\[{t}\]", written)
    if m:
        return m.group(1), "2d"
    m = re.fullmatch(rf"{a}\[(.+)\+{t}\]", written) or re.fullmatch(rf"{a}\[{t}\+(.+)\]", written)
    return (m.group(1), "flat") if m else None


def _access(a: str, sel: str, form: str, index: str) -> str:
    return f"{a}[{sel}][{index}]" if form == "2d" else f"{a}[{sel}+{index}]"


def _step_parts(flat: str, t: str, s: str) -> tuple[str, str, str] | None:
    """(written slot, combined value, copied value) of the step's two spellings."""
    g = rf"(?:\(?{t}>={s}\)?|\(?{s}<={t}\)?)"
    m = re.fullmatch(rf"if\({g}\)\{{?(\w+\[.+?)=(.+?);\}}?else ?\{{?(\w+\[.+?)=(.+?);\}}?", flat)
    if m and m.group(1) == m.group(3):
        return m.group(1), m.group(2), m.group(4)
    m = re.fullmatch(rf"(\w+\[.+?)=\(?{g}\)?\?(.+):(.+);", flat)
    return (m.group(1), m.group(2), m.group(3)) if m else None


def combination(value: str, me: str, nb: str, funcs: tuple[str, ...]) -> str | None:
    """The combine when ``value`` is ``me op nb`` (either order, parenthesised or not) or ``f(me, nb)``
    for ``f`` in ``funcs``; ``me`` and ``nb`` are the two slots as written (whitespace-free)."""
    me, nb = re.escape(me), re.escape(nb)
    for left, right in ((me, nb), (nb, me)):
        m = re.fullmatch(rf"\(?{left}({_OP}){right}\)?", value)
        if m:
            return m.group(1)
        f = re.fullmatch(rf"\(?(\w+)\({left},{right}\)\)?", value)
        if f and f.group(1) in funcs:
            return f.group(1)
    return None


def _selector_update(stmt: Node) -> bool:
    """``name = expr;`` or ``T name = expr;`` without subscripts, calls or barriers."""
    if any(n.type in ("subscript_expression", "call_expression") for n in _cuda.walk(stmt)):
        return False
    if stmt.type == "declaration":
        return True
    expr = stmt.named_children[0] if stmt.type == "expression_statement" and stmt.named_children else None
    left = (
        expr.child_by_field_name("left")
        if expr is not None and expr.type == "assignment_expression"
        else None
    )
    return left is not None and left.type == "identifier"


def _reads_after(kernel: Node, loop: Node, a: str, sel: str, form: str) -> bool:
    """The array is read after the loop only through ``sel`` and the selector's names are not assigned."""
    names = set(re.findall(r"[A-Za-z_]\w*", sel))
    after = [n for n in _cuda.walk(kernel) if n.start_byte >= loop.end_byte]
    for n in after:
        if n.type in ("assignment_expression", "update_expression"):
            target = n.child_by_field_name("left") or n.child_by_field_name("argument")
            if target is not None and _cuda.text(target) in names:
                return False
        if n.type == "identifier" and _cuda.text(n) == a:
            sub = n.parent
            index = _flat(_cuda.text(sub)) if sub is not None and sub.type == "subscript_expression" else ""
            ok = (
                index.startswith(f"{a}[{sel}]")
                if form == "2d"
                else (index.startswith(f"{a}[{sel}+") or index.endswith(f"+{sel}]"))
            )
            if not ok:
                return False
    return True


def match(
    kernel: Node, loop: Node, s: str, arrays: dict[str, str], tids: set[str], funcs: tuple[str, ...]
) -> tuple[str, str, DoubleBuffer] | None:
    """(array, thread index, step) of a double-buffered Kogge-Stone loop, or None."""
    body = loop.child_by_field_name("body")
    if body is None or body.type != "compound_statement":
        return None
    stmts = [c for c in body.named_children if c.type != "comment"]
    barriers = [k for k, n in enumerate(stmts) if _flat(_cuda.text(n)) == _BARRIER]
    rest = [k for k in range(len(stmts)) if k not in barriers]
    if not barriers or not rest:
        return None
    step, updates = stmts[rest[-1]], [stmts[k] for k in rest[:-1]]
    # barriers before the selector updates or after the step: none splits an update from the step
    if not all(_selector_update(u) for u in updates) or not all(
        b < rest[0] or b > rest[-1] for b in barriers
    ):
        return None
    for t in tids:
        parts = _step_parts(_flat(_cuda.text(step)), re.escape(t), s)
        if parts is None:
            continue
        written, value, copied = parts
        for a in arrays:
            out, inp = _slot(written, re.escape(a), re.escape(t)), _slot(copied, re.escape(a), re.escape(t))
            if out is None or inp is None or out[1] != inp[1] or out[0] == inp[0]:
                continue
            me, nb = _access(a, inp[0], inp[1], t), _access(a, inp[0], inp[1], f"{t}-{s}")
            combine = combination(value, me, nb, funcs)
            if combine is None or not _reads_after(kernel, loop, a, out[0], out[1]):
                continue
            header = _cuda.text(loop)[: body.start_byte - loop.start_byte].rstrip()
            return a, t, DoubleBuffer(header, [_cuda.text(u) for u in updates], me, written, combine)
    return None
