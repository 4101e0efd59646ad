"""Packed 32-bit loads of an 8- or 16-bit input that a grid-stride loop reads one element at a time.

A histogram of an 8-bit image read as ``img[p]`` in ``for (p = tid; p < n; p += blockDim.x * gridDim.x)``
issues one 1-byte load per element: a quarter of the bytes each load instruction could carry, and four
times the loop overhead. The textbook form reads one 32-bit word per iteration and handles its 4 (or 2)
elements in registers, then the last ``n % 4`` elements one by one.

Precondition, proven on the tree (``find`` says why not):
- the loop is ``for (T p = <blockIdx.x * blockDim.x + threadIdx.x>; p < bound; p += blockDim.x *
  gridDim.x)`` (casts allowed): over the whole grid it visits every index of ``[0, bound)`` once, and so
  does a walk of the words ``[0, bound / K)`` by the same threads followed by a walk of the rest;
- its body reads one pointer parameter of a 1- or 2-byte integer type as ``in[p]`` only (never stores
  it), never assigns ``p``, and has no ``break``, ``goto`` or ``return`` (an iteration of the element
  loop becomes one pass of an inner loop over the word's elements, so ``continue`` keeps its meaning).

The rewrite keeps the original loop for an input that is not 4-byte aligned (a uniform runtime test) and
otherwise walks words: element ``k`` of word ``w`` is ``(T_in)(word >> (8 * size * k))`` (little-endian,
the conversion truncates), with ``p = w * K + k`` declared for the rest of the body. The order in which
one thread visits its elements changes, which is why the caller offers it only for bodies whose effects
commute (atomic updates of a privatised accumulator).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._coop_row_nest import grid_step
from perfagent.rewrite.recipes._coop_row_syntax import is_written, subscript_index
from perfagent.rewrite.recipes._tree import Edit, splice

NARROW = {
    "char": 1,
    "signed char": 1,
    "unsigned char": 1,
    "int8_t": 1,
    "uint8_t": 1,
    "short": 2,
    "short int": 2,
    "signed short": 2,
    "unsigned short": 2,
    "unsigned short int": 2,
    "int16_t": 2,
    "uint16_t": 2,
}
"""Integer element types packed into a 32-bit word -> their size in bytes."""
WORD = "perfagent_word"


@dataclass(frozen=True)
class Packable:
    loop: Node
    counter: str
    ctype: str
    init: Node
    bound: Node
    step: Node
    body: Node
    array: str
    element: str
    size: int
    reads: tuple[Node, ...]
    """The ``in[p]`` subscripts of the body (replaced by the unpacked element)."""


def _counter(loop: Node) -> tuple[str, str, Node] | str:
    init = loop.child_by_field_name("initializer")
    decl = (
        next((n for n in _cuda.walk(init) if n.type == "init_declarator"), None) if init is not None else None
    )
    name = decl.child_by_field_name("declarator") if decl is not None else None
    value = decl.child_by_field_name("value") if decl is not None else None
    if init is None or name is None or value is None or name.type != "identifier":
        return f"the loop on line {_cuda.line_of(loop)} does not declare one counter with a start"
    axes = {f"{a[0]}.{a[1]}" for n in _cuda.walk(value) if (a := _cuda.builtin_axis(n))}
    if axes != {"blockIdx.x", "blockDim.x", "threadIdx.x"} or "+" not in _cuda.text(value):
        return (
            f"the loop on line {_cuda.line_of(loop)} does not start at blockIdx.x * blockDim.x + threadIdx.x"
        )
    ctype = _cuda.text(init.child_by_field_name("type") or init)
    return _cuda.text(name), ctype, value


def _bound(loop: Node, counter: str) -> Node | str:
    cond = loop.child_by_field_name("condition")
    cond = _cuda.strip(cond) if cond is not None else None
    if (
        cond is not None
        and cond.type == "binary_expression"
        and _cuda.text(cond.child_by_field_name("operator") or cond) == "<"
    ):
        left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
        if left is not None and right is not None and _cuda.text(_cuda.strip(left)) == counter:
            if counter not in _cuda.identifiers_in(right):
                return right
    return f"the loop on line {_cuda.line_of(loop)} does not run while {counter} < bound"


def _narrow_reads(
    body: Node, counter: str, params: list[tuple[str, str, bool]]
) -> tuple[str, str, list[Node]] | str:
    """(input, its element type, its ``in[p]`` reads): the one narrow pointer parameter the body reads."""
    found: list[tuple[str, str, list[Node]]] = []
    for name, typ, is_pointer in params:
        element = " ".join(typ.replace("const", " ").replace("__restrict__", " ").split())
        uses = [n for n in _cuda.walk(body) if n.type == "identifier" and _cuda.text(n) == name]
        if not is_pointer or element not in NARROW or not uses:
            continue
        reads = []
        for ident in uses:
            sub = ident.parent
            index = subscript_index(sub) if sub is not None and sub.type == "subscript_expression" else None
            if sub is None or index is None or _cuda.text(_cuda.strip(index)) != counter or _written(sub):
                return f"{name} is reached as {_cuda.text(sub or ident)} on line {_cuda.line_of(ident)}: only {name}[{counter}] is packed"
            reads.append(sub)
        found.append((name, element, reads))
    if len(found) != 1:
        return "the loop reads no 8- or 16-bit input" if not found else "the loop reads several narrow inputs"
    return found[0]


def _written(sub: Node) -> bool:
    """Stored to, or its address taken (what is written through it is unknown)."""
    return is_written(sub) or (sub.parent is not None and sub.parent.type == "pointer_expression")


def find(kernel: Node, body: Node) -> Packable | str:
    """The grid-stride loop whose narrow input can be read a word at a time, or why there is none."""
    loops = [n for n in _cuda.walk(body) if n.type == "for_statement" and grid_step_of(n) is not None]
    if len(loops) != 1:
        return "no single grid-stride loop (for (p = tid; p < n; p += blockDim.x * gridDim.x))"
    [loop] = loops
    counter = _counter(loop)
    if isinstance(counter, str):
        return counter
    name, ctype, init = counter
    bound = _bound(loop, name)
    if isinstance(bound, str):
        return bound
    inner = loop.child_by_field_name("body")
    assert inner is not None
    for n in _cuda.walk(inner):
        if n.type in ("break_statement", "goto_statement", "return_statement"):
            return f"line {_cuda.line_of(n)}: a {n.type.split('_')[0]} leaves the element loop"
        target = n.child_by_field_name("left") if n.type == "assignment_expression" else None
        target = n.child_by_field_name("argument") if n.type == "update_expression" else target
        if target is not None and _cuda.text(_cuda.strip(target)) == name:
            return f"line {_cuda.line_of(n)}: the body changes the counter {name}"
    reads = _narrow_reads(inner, name, _cuda.kernel_params(kernel))
    if isinstance(reads, str):
        return reads
    array, element, subs = reads
    step = grid_step_of(loop)
    assert step is not None
    return Packable(loop, name, ctype, init, bound, step, inner, array, element, NARROW[element], tuple(subs))


def grid_step_of(loop: Node) -> Node | None:
    update = loop.child_by_field_name("update")
    return grid_step(update) if update is not None else None


def _text(node: Node, edits: Sequence[Edit]) -> str:
    """``node``'s text with the edits that lie inside it applied."""
    inside = [
        Edit(e.start - node.start_byte, e.end - node.start_byte, e.new)
        for e in edits
        if node.start_byte <= e.start and e.end <= node.end_byte
    ]
    return splice(_cuda.text(node), inside)


def rewrite(p: Packable, edits: Sequence[Edit]) -> Edit:
    """The edit that replaces the loop by its packed form (``edits``: other edits inside the loop, such as
    retargeted atomics, applied to every copy of the body)."""
    per_word = 4 // p.size
    t, n, init, step = (
        p.ctype,
        f"({_cuda.text(p.bound)})",
        f"({_cuda.text(p.init)})",
        f"({_cuda.text(p.step)})",
    )
    unpacked = f"(({p.element})({WORD} >> (perfagent_k * {8 * p.size})))"
    body = _text(p.body, [*edits, *(Edit(r.start_byte, r.end_byte, unpacked) for r in p.reads)])
    plain = _text(p.body, edits)
    original = _text(p.loop, edits)
    pad = " " * p.loop.start_point[1]
    spans = [(r.start_byte, r.end_byte) for r in p.reads]
    used = any(
        n.type == "identifier"
        and _cuda.text(n) == p.counter
        and not any(a <= n.start_byte < b for a, b in spans)
        for n in _cuda.walk(p.body)
    )  # the element index, where the body reads it other than as in[p]
    counter = (
        f"const {t} {p.counter} = perfagent_w * {per_word} + perfagent_k;\n{pad}            " if used else ""
    )
    return Edit(
        p.loop.start_byte,
        p.loop.end_byte,
        f"if ((reinterpret_cast<unsigned long long>({p.array}) & 3ull) == 0) {{  // {per_word} elements per 32-bit load\n"
        f"{pad}    const unsigned int *perfagent_words = reinterpret_cast<const unsigned int *>({p.array});\n"
        f"{pad}    for ({t} perfagent_w = {init}; perfagent_w < {n} / {per_word}; perfagent_w += {step}) {{\n"
        f"{pad}        const unsigned int {WORD} = perfagent_words[perfagent_w];\n"
        "#pragma unroll\n"
        f"{pad}        for (int perfagent_k = 0; perfagent_k < {per_word}; ++perfagent_k) {{\n"
        f"{pad}            {counter}"
        f"{pad}            {body}\n"
        f"{pad}        }}\n"
        f"{pad}    }}\n"
        f"{pad}    // the last {n} % {per_word} elements, one by one\n"
        f"{pad}    for ({t} {p.counter} = {n} / {per_word} * {per_word} + {init}; {p.counter} < {n}; {p.counter} += {step})\n"
        f"{pad}        {plain}\n"
        f"{pad}}} else {{  // an unaligned input: the original loop\n"
        f"{pad}    {original}\n"
        f"{pad}}}",
    )
