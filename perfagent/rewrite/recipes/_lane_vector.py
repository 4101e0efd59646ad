"""Vectorised lanes for a lane-strided loop: ``for (T i = me; i < n; i += W)`` moving 16 bytes per access.

cooperative-row (a warp or a block per row) and chunk-stride (block-strided chunks) leave loops whose
sharers read one element each per step: coalesced, but 2 or 4 bytes per lane and one load instruction
per element. The textbook row kernels (LeetCUDA's ``f16x8`` packs, llm.c's ``x128``) move 16 bytes per
lane instead. This module rewrites such a loop so that sharer ``me`` walks groups ``q = me, me + W, ...``
of ``V`` consecutive elements (``V = 16 / the smallest element size``), each array read or written as
``p[E + i]`` moving as 16-byte vectors, the original body run once per element of the group; a scalar
copy of the original loop then covers the ``n % V`` tail, and the whole range when a base ``p + E`` is
not 16-byte aligned (tested at run time: a row of 333 halves is not) or an in-place call could reorder
reads and writes.

Why it is correct where it is used: the caller (cooperative-row, chunk-stride) has just proven that the
loop's elements may be dealt to the sharers in any way (element stores are per element, reductions into
accumulators are commutative folds combined across the sharers after the loop, everything else the body
reads is the same in every sharer). Dealing them out in groups of ``V`` instead of one by one is another
such deal: the same elements are visited once each, by the same code. What this module proves itself is
the syntax it needs: the loop header, ``i`` used in subscripts ``p[i]`` / ``p[E + i]`` (``E`` free of
``i`` and of the body's own names) or as a value (each element re-declares it), an array the body writes
reached by one such subscript only, no loop, ``return``, jump out, barrier or collective inside the
body, the bound and the arrays not assigned in it, and every array's element type having a 16-byte form.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._vector_body import (
    LOOPS,
    Site,
    order_sensitive,
    refused_statement,
    site_kind,
    written_everywhere,
)
from perfagent.rewrite.recipes._vector_shape import INTEGER_TYPES, Pointer, one_line, strip
from perfagent.rewrite.recipes._vector_types import MAX_VECTORS, VECTOR_BYTES, Layout, element, group_width

MAX_BODY_CHARS = 6000
"""The body is copied once per element of a group: beyond this many characters in all, the copy is not
worth its code size (a long body is compute, not the memory access this helps)."""


@dataclass(frozen=True)
class Stream:
    """One 16-byte-vectorised array access of the loop: ``p[i]`` or ``p[E + i]``."""

    base: str
    """The local the rewrite declares for ``p + E`` (the vector loads and stores index it)."""
    address: str
    """``p`` or ``p + (E)``, as written."""
    pointer: Pointer
    """The pointer ``p`` (its element type, const, restrict); ``name`` is ``base``."""


@dataclass(frozen=True)
class LaneLoop:
    """A lane-strided loop the rewrite vectorises (all ``Arrays`` fields for the loads and stores)."""

    node: Node
    var: str
    var_type: str
    bound: str
    body: Node
    pragma: Node | None
    """A ``#pragma unroll`` right before the loop (moved to the scalar loop: a block cannot take it)."""
    start: Node
    """The initialiser's value (``me``): the scalar loop starts after the vector groups instead."""
    streams: list[Stream]
    width: int
    """Elements per group: one 16-byte vector of the smallest element type."""
    layouts: dict[str, Layout]
    """Each stream's vectors per group, by base."""
    sites: list[Site]
    """Every ``p[i]`` / ``p[E + i]`` of the body (``pointer``: its stream's base)."""
    stored: list[str]
    """Bases stored after the elements."""
    loaded: list[str]
    """Bases loaded before the elements: read ones, and written ones an element might leave unset."""
    distinct: list[tuple[str, str]]
    """Base pairs that must differ for the vector path (in place, a read would follow a deferred store)."""
    index_values: bool
    """The body reads the counter as a value: each element re-declares it."""


def pointers_of(kernel: Node) -> dict[str, Pointer]:
    """Single-level pointers the kernel declares (parameters and locals), by name; volatile ones and names
    declared more than once (a shadowed name could be another element type) left out."""
    out: dict[str, Pointer] = {}
    seen: set[str] = set()
    for decl in _cuda.walk(kernel):
        if decl.type not in ("parameter_declaration", "declaration"):
            continue
        typ = _cuda.element_type(decl)
        outer = {_cuda.text(c) for c in decl.children if c.type == "type_qualifier"}
        for d in decl.children_by_field_name("declarator"):
            d = d.child_by_field_name("declarator") or d if d.type == "init_declarator" else d
            inner = d.child_by_field_name("declarator")
            if d.type != "pointer_declarator" or inner is None or inner.type != "identifier":
                continue
            quals = {_cuda.text(c) for c in d.children if c.type == "type_qualifier"}
            if "volatile" in quals | outer:
                continue
            name = _cuda.text(inner)
            if name in seen:
                out.pop(name, None)
                continue
            seen.add(name)
            restrict = bool(quals & {"__restrict__", "__restrict", "restrict"})
            where = f"'{name}' ({typ} *, line {_cuda.line_of(d)})"
            out[name] = Pointer(name, "const" in outer, restrict, element(typ), where, typ)
    return out


def _declared_in(body: Node) -> set[str]:
    """Names the body declares (plain, pointer and array declarators)."""
    kinds = ("init_declarator", "declaration", "pointer_declarator", "array_declarator")
    return {
        _cuda.text(n)
        for n in _cuda.walk(body)
        if n.type == "identifier"
        and n.parent is not None
        and n.parent.type in kinds
        and any(d.start_byte == n.start_byte for d in n.parent.children_by_field_name("declarator"))
    }


def _header(loop: Node, me: str, step: str) -> tuple[str, str, Node, Node] | str:
    """(counter, its type, bound, start) of ``for (T i = me; i < n; i += step)``, or why not."""
    init, cond, update = (loop.child_by_field_name(f) for f in ("initializer", "condition", "update"))
    ds = init.children_by_field_name("declarator") if init is not None and init.type == "declaration" else []
    if init is None or len(ds) != 1 or ds[0].type != "init_declarator":
        return "its initialiser is not one declaration"
    name, value = ds[0].child_by_field_name("declarator"), ds[0].child_by_field_name("value")
    typ = _cuda.element_type(init)
    if name is None or value is None or typ not in INTEGER_TYPES:
        return "its counter is not an integer declared with a value"
    flat = "".join(_cuda.text(strip(value)).split())
    if flat != "".join(me.split()):
        return f"its counter starts at '{one_line(value)}', not at {me}"
    var = _cuda.text(name)
    if (
        cond is None
        or cond.type != "binary_expression"
        or _cuda.text(cond.child_by_field_name("operator") or cond) != "<"
    ):
        return f"its condition is not '{var} < n'"
    left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
    if left is None or right is None or _cuda.text(strip(left)) != var or var in _cuda.identifiers_in(right):
        return f"its condition is not '{var} < n'"
    if update is None or "".join(_cuda.text(update).split()) != f"{var}+={''.join(step.split())}":
        return f"it does not step by '{var} += {step}'"
    return var, typ, right, value


def _stream_key(sub: Node, var: str, own: set[str]) -> str | None:
    """``E`` of a subscript ``p[E + var]`` / ``p[var + E]`` ('' for ``p[var]``), else None."""
    indices = sub.child_by_field_name("indices")
    index = indices.named_children[0] if indices is not None and indices.named_child_count == 1 else None
    if index is None:
        return None
    index = strip(index) if index.type == "parenthesized_expression" else index
    if index.type == "identifier" and _cuda.text(index) == var:
        return ""
    if index.type != "binary_expression" or _cuda.text(index.child_by_field_name("operator") or index) != "+":
        return None
    left, right = index.child_by_field_name("left"), index.child_by_field_name("right")
    for mine, other in ((left, right), (right, left)):
        if mine is not None and other is not None and mine.type == "identifier" and _cuda.text(mine) == var:
            names = _cuda.identifiers_in(other)
            if var not in names and not names & own and not names & _cuda.BUILTINS:
                return " ".join(_cuda.text(other).split())
    return None


def _body_refusal(body: Node, var: str, me: str, bound: Node, pointers: dict[str, Pointer]) -> str | None:
    """Why the body cannot be copied per element of a group (syntax only; the caller proved the deal)."""
    if len(_cuda.text(body)) > MAX_BODY_CHARS // 4:
        return f"its body at line {_cuda.line_of(body)} is too long to copy per element"
    fixed = _cuda.identifiers_in(bound) | set(pointers) | {var}
    for node in _cuda.walk(body):
        why = refused_statement(node, body)
        if why is not None:
            return why
        if node.type in LOOPS:
            return f"a loop inside its body (line {_cuda.line_of(node)})"
        if node.type == "identifier" and (_cuda.text(node) in _cuda.BUILTINS or _cuda.text(node) == me):
            return f"{_cuda.text(node)} in its body (line {_cuda.line_of(node)})"
        if node.type in ("assignment_expression", "update_expression"):
            target = node.child_by_field_name("left" if node.type == "assignment_expression" else "argument")
            if target is not None and _cuda.text(strip(target)) in fixed:
                return f"'{one_line(node)}' at line {_cuda.line_of(node)} assigns {_cuda.text(strip(target))}"
    return None


@dataclass
class _Found:
    streams: dict[tuple[str, str], Stream]
    sites: list[Site]
    other: dict[str, Node]
    """Pointers also accessed another way (a broadcast read ``w[c]``), first such use."""
    index_values: bool = False


def _sites(body: Node, var: str, pointers: dict[str, Pointer], taken: set[str]) -> _Found | str:
    own = _declared_in(body)
    found = _Found({}, [], {})
    for node in _cuda.walk(body):
        if node.type != "identifier":
            continue
        name, parent = _cuda.text(node), node.parent
        is_array = (
            parent is not None
            and parent.type == "subscript_expression"
            and parent.child_by_field_name("argument") == node
        )
        if name in pointers and is_array and parent is not None:
            key = _stream_key(parent, var, own)
            if key is None:  # a broadcast or gather read stays a scalar load; a write there would reorder
                other = site_kind(parent, pointers[name])
                if isinstance(other, str) or other[0] != "read":
                    return f"'{one_line(parent)}' at line {_cuda.line_of(node)} writes {name} off the counter"
                found.other.setdefault(name, node)
                continue
            how = site_kind(parent, pointers[name])
            if isinstance(how, str):
                return how
            stream = found.streams.get((name, key))
            if stream is None:
                base = _fresh(f"{name}_vb", taken)
                address = name if not key else f"{name} + ({key})"
                p = pointers[name]
                stream = Stream(
                    base, address, Pointer(base, p.const, p.restrict, p.element, p.where, p.spelling)
                )
                found.streams[(name, key)] = stream
            if how[0] != "read" and pointers[name].const:
                return f"line {_cuda.line_of(node)} writes {name}, a pointer to const"
            found.sites.append(Site(parent, stream.base, how[0], how[1]))
        elif name in pointers:
            return f"'{one_line(parent or node)}' at line {_cuda.line_of(node)} uses {name} other than by a subscript"
        elif name == var and not _in_stream_index(node, found):
            found.index_values = True
    return found


def _in_stream_index(node: Node, found: _Found) -> bool:
    """Whether this use of the counter is the index of a site already recorded (walk order: parent first)."""
    return any(s.node.start_byte <= node.start_byte < s.node.end_byte for s in found.sites)


def _fresh(name: str, taken: set[str]) -> str:
    k = 0
    while f"{name}{k or ''}" in taken:
        k += 1
    taken.add(f"{name}{k or ''}")
    return f"{name}{k or ''}"


def _pragma(loop: Node) -> Node | None:
    prev = loop.prev_named_sibling
    if (
        prev is not None
        and prev.type == "preproc_call"
        and "".join(_cuda.text(prev).split()).startswith("#pragmaunroll")
    ):
        return prev
    return None


def analyse(loop: Node, kernel: Node, me: str, step: str, taken: set[str]) -> LaneLoop | str:
    """The plan for one loop of ``kernel`` (``taken``: names in use, extended by the ones it picks)."""
    head = _header(loop, me, step)
    body = loop.child_by_field_name("body")
    if isinstance(head, str) or body is None:
        return f"loop at line {_cuda.line_of(loop)}: {head if isinstance(head, str) else 'no body'}"
    var, typ, bound, start = head
    # a pointer the body declares is not in scope before the loop, where the streams' bases are taken
    pointers = {n: p for n, p in pointers_of(kernel).items() if n not in _declared_in(body)}
    why = _body_refusal(body, var, me, bound, pointers)
    found = _sites(body, var, pointers, taken) if why is None else why
    if isinstance(found, str):
        return f"loop at line {_cuda.line_of(loop)}: {found}"
    written = {s.pointer for s in found.sites if s.kind != "read"}
    local = next((n for n in _cuda.walk(body) if n.type == "pointer_declarator"), None)
    if written and local is not None:  # its reads could see a store the vector path defers
        return f"loop at line {_cuda.line_of(loop)}: the body declares a pointer (line {_cuda.line_of(local)}) and writes memory"
    for (name, _), stream in found.streams.items():
        several = sum(1 for (n, _) in found.streams if n == name) > 1
        if stream.base in written and (several or name in found.other):
            return f"loop at line {_cuda.line_of(loop)}: {name} is written and also read at another index"
        if stream.pointer.element is None:
            return f"loop at line {_cuda.line_of(loop)}: {stream.pointer.refusal()}"
    if not found.streams:
        return f"loop at line {_cuda.line_of(loop)}: no array is read or written at the counter"
    return _plan(loop, var, typ, _cuda.text(bound), body, start, found)


def _plan(
    loop: Node, var: str, typ: str, bound: str, body: Node, start: Node, found: _Found
) -> LaneLoop | str:
    streams = list(found.streams.values())
    elements = [s.pointer.element for s in streams if s.pointer.element is not None]
    width = group_width(elements)
    layouts = {
        s.base: Layout(e, width * e.size // VECTOR_BYTES) for s, e in zip(streams, elements, strict=True)
    }
    if any(layout.vectors > MAX_VECTORS for layout in layouts.values()):
        return f"loop at line {_cuda.line_of(loop)}: mixed element sizes need more than {MAX_VECTORS} vectors of one array per group"
    if len(_cuda.text(body)) * width > MAX_BODY_CHARS:
        return f"loop at line {_cuda.line_of(loop)}: its body copied {width} times is too long"
    read = {s.pointer for s in found.sites if s.kind != "write"}
    written = {s.pointer for s in found.sites if s.kind != "read"}
    restrict = {s.base for s in streams if s.pointer.restrict}
    distinct: list[tuple[str, str]] = []
    for a in found.sites:
        for b in found.sites:
            pair = (a.pointer, b.pointer)
            if (
                a.kind != "read"
                and a.pointer != b.pointer
                and not set(pair) <= restrict
                and pair not in distinct
                and pair[::-1] not in distinct
                and order_sensitive(a, b, body)
            ):
                distinct.append(pair)
    return LaneLoop(
        node=loop, var=var, var_type=" ".join(t for t in typ.split() if t != "const"), bound=bound, body=body,
        pragma=_pragma(loop), start=start, streams=streams, width=width, layouts=layouts, sites=found.sites,
        loaded=[s.base for s in streams if s.base in read or not _written_everywhere(body, s)],
        stored=[s.base for s in streams if s.base in written], distinct=distinct, index_values=found.index_values,
    )  # fmt: skip


def _written_everywhere(body: Node, stream: Stream) -> bool:
    """A top-level ``p[...] = e;`` sets every element (one stream per written array: it is this one)."""
    return written_everywhere(body, stream.address.split(" + ")[0])
