"""Recipe ``smem-pad-index`` (smem-padding for 1-D arrays): ``tile[i]`` -> ``tile[i + (i >> 5)]``.

A 1-D ``__shared__`` array walked at power-of-two strides (the up- and down-sweep of a Blelloch scan,
a strided tree reduction, an interleaved pair layout) sends the lanes of a warp to one bank: a 2-D
array is fixed by padding its rows, a 1-D one only by changing the index math. The textbook offset
(GPU Gems 3 ch. 39, ``CONFLICT_FREE_OFFSET(i) = i >> LOG_NUM_BANKS``) inserts one unused word after
every 32: ``i -> i + (i >> 5)`` is strictly increasing, so it is a bijection of the old indices onto
the new array, and every reader and writer of the array sees the same element as before.

Precondition (checked on the tree-sitter-cuda parse tree): a static ``__shared__`` 1-D array of 4-byte
elements in the kernel whose size evaluates at compile time; every use a single subscript (never
decayed to a pointer, never ``sizeof``); no index has a side effect (assignment, ``++``, a call), since
the rewritten index names it twice; the grown arrays stay within 48 KiB of static shared memory.
Indices are taken non-negative (a negative index is out of bounds in the original already).
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._chunk_syntax import local_inits, operator
from perfagent.rewrite.recipes.framework import CudaRecipe, Edit, Source, Variant, collect, register
from perfagent.rewrite.recipes.smem_padding import FOUR_BYTE_TYPES

NAME = "smem-pad-index"
_SHIFT = 5
_SIDE_EFFECTS = frozenset({"assignment_expression", "update_expression", "call_expression"})


@dataclass(frozen=True)
class _Array:
    name: str
    line: int
    size_node: Node
    size: int
    indices: list[Node]


def _uses(scope: Node, name: str, decl_ident: Node, shared: set[str]) -> list[Node] | str:
    """The index of every use of ``name`` (one subscript each), or why a use is not one."""
    out = []
    for node in _cuda.walk(scope):
        if node.type != "identifier" or _cuda.text(node) != name or node == decl_ident:
            continue
        parent = node.parent
        if (
            parent is None
            or parent.type != "subscript_expression"
            or parent.child_by_field_name("argument") != node
        ):
            return f"used other than as {name}[i] at line {_cuda.line_of(node)}"
        if parent.parent is not None and parent.parent.type == "subscript_expression":
            return f"subscripted twice at line {_cuda.line_of(node)}"
        indices = parent.child_by_field_name("indices")
        args = indices.named_children if indices is not None else []
        if len(args) != 1:
            return f"not one index at line {_cuda.line_of(node)}"
        if any(n.type in _SIDE_EFFECTS or n.type == "sizeof_expression" for n in _cuda.walk(args[0])):
            return f"the index at line {_cuda.line_of(node)} has a side effect (it would run twice)"
        if _cuda.identifiers_in(args[0]) & shared:
            return f"the index at line {_cuda.line_of(node)} reads a shared array (nested offsets)"
        up = parent.parent
        while up is not None and up != scope:
            if up.type == "sizeof_expression":
                return f"used in sizeof at line {_cuda.line_of(node)}"
            up = up.parent
        out.append(args[0])
    return out


def _thread_names(inits: dict[str, tuple[Node, str]]) -> set[str]:
    """Locals whose value depends on threadIdx (directly or through other such locals)."""
    names: set[str] = set()
    grew = True
    while grew:
        grew = False
        for name, (value, _t) in inits.items():
            if name in names:
                continue
            reads = _cuda.identifiers_in(value) & names
            if reads or any((a := _cuda.builtin_axis(n)) and a[0] == "threadIdx" for n in _cuda.walk(value)):
                names.add(name)
                grew = True
    return names


def _strided(
    index: Node, inits: dict[str, tuple[Node, str]], thread: set[str], seen: frozenset[str] = frozenset()
) -> bool:
    """The thread index is scaled somewhere in ``index`` (``2 * tid``, ``offset * (2 * t + 1)``,
    ``tid * 32``), looking through locals: lanes a power of two apart can share a bank."""
    for n in _cuda.walk(index):
        if n.type == "binary_expression" and operator(n) in ("*", "<<"):
            sides = [c for f in ("left", "right") if (c := n.child_by_field_name(f)) is not None]
            if any(
                _cuda.identifiers_in(c) & thread
                or any(_cuda.builtin_axis(x) == ("threadIdx", "x") for x in _cuda.walk(c))
                for c in sides
            ):
                return True
        name = _cuda.text(n) if n.type == "identifier" else None
        if name in inits and name in thread and name not in seen:
            if _strided(inits[name][0], inits, thread, seen | {name}):
                return True
    return False


def _array(
    decl: Node, ident: Node, sizes: list[Node | None], scope: Node, src: Source, shared: set[str]
) -> _Array | str:
    name = _cuda.text(ident)
    where = f"'{name}' (line {_cuda.line_of(decl)})"
    if _cuda.has_storage(decl, "extern") or any(s is None for s in sizes):
        return f"{where} is dynamic shared memory (extern, size unknown at compile time)"
    if len(sizes) != 1:
        return f"{where} is not 1-D (smem-padding pads the rows of 2-D arrays)"
    if _cuda.element_type(decl) not in FOUR_BYTE_TYPES:
        return f"{where} has {_cuda.element_type(decl) or 'unknown'} elements; the offset is for 4-byte banks"
    size_node = sizes[0]
    assert size_node is not None
    size = _cuda.evaluate(_cuda.text(size_node), src.constants)
    if size is None or size < 2**_SHIFT:
        return f"{where}: size '{_cuda.text(size_node)}' is not a compile-time constant of 32 or more"
    uses = _uses(scope, name, ident, shared)
    if isinstance(uses, str):
        return f"{where}: {uses}"
    inits = local_inits(scope)
    thread = _thread_names(inits)
    if not any(_strided(i, inits, thread) for i in uses):
        return f"{where}: every index is the thread index plus an offset (unit stride): no bank conflict to remove"
    return _Array(name, _cuda.line_of(decl), size_node, size, uses)


def _scan(src: Source) -> tuple[list[_Array], list[str]] | str:
    found = src.kernel_body
    if isinstance(found, str):
        return found
    _kernel, body = found
    declared = list(_cuda.shared_arrays(body))
    shared = {_cuda.text(i) for _d, _x, i, _s in declared}
    arrays = [_array(d, i, s, body, src, shared) for d, _x, i, s in declared]
    if not arrays:
        return "no __shared__ array in the kernel"
    result = collect(arrays)
    if isinstance(result, str):
        return result
    used = _cuda.static_shared_bytes(body, src.constants) or 0
    grown = used + sum((a.size >> _SHIFT) * 4 for a in result[0])
    if grown > _cuda.STATIC_SHARED_LIMIT:
        return f"the offsets would take the kernel to {grown} bytes of static shared memory (limit {_cuda.STATIC_SHARED_LIMIT})"
    return result


def _padded(index: Node) -> str:
    text = _cuda.text(index)
    inner = f"({text})" if _cuda.needs_parentheses(index) else text
    return f"{inner} + ({inner} >> {_SHIFT})"


class _SmemPadIndex(CudaRecipe[tuple[list[_Array], list[str]]]):
    name = NAME
    transforms = ("smem-padding",)
    summary = (
        "1-D __shared__ arrays of 4-byte elements walked at power-of-two strides: index i -> i + (i >> 5)"
    )
    wrong_language = "smem-padding edits CUDA sources only (Triton lays out shared memory itself)"

    def match(self, src: Source) -> tuple[list[_Array], list[str]] | str:
        return _scan(src)

    def plan(self, src: Source, m: tuple[list[_Array], list[str]]) -> list[Variant]:
        arrays, reasons = m
        edits = []
        for a in arrays:
            size = _cuda.text(a.size_node)
            size = f"({size})" if _cuda.needs_parentheses(a.size_node) else size
            edits.append(Edit(a.size_node.start_byte, a.size_node.end_byte, f"{size} + ({size} >> {_SHIFT})"))
            edits += [Edit(i.start_byte, i.end_byte, _padded(i)) for i in a.indices]
        names = ", ".join(f"{a.name} (line {a.line}, {len(a.indices)} accesses)" for a in arrays)
        return [
            Variant(
                edits=edits,
                description=f"Conflict-free offsets: one unused word after every 32 in the 1-D shared arrays {names}.",
                parameters={"arrays": ",".join(a.name for a in arrays), "shift": _SHIFT},
                notes=[f"not padded: {r}" for r in reasons],
            )
        ]


RECIPE = register(_SmemPadIndex())
applies, propose = RECIPE.applies, RECIPE.propose
