"""Recipe ``smem-swizzle``: XOR-swizzle the column of a shared-memory tile (the alternative to padding).

Precondition (tree-sitter-cuda tree of the kernel): a static ``__shared__ T tile[..][R][C]`` with
4- or 8-byte elements, C a power of two of at least one bank row (32 4-byte / 16 8-byte elements), and
every use of ``tile`` a full subscript ``tile[..][r][c]`` read or written as a value (not its address,
not passed on), with side-effect-free ``r`` and ``c`` and no XOR in them yet.

Rewrite: every ``tile[..][r][c]`` becomes ``tile[..][r][(c) ^ ((r) & (L - 1))]`` with L the elements
per bank row. Within a row the XOR permutes columns (a bijection on [0, C) since C is a power of two
>= L), so every element still has one home and the shared-memory size does not change (padding costs
R extra elements); a warp walking a column (``tile[lane][k]``) then touches L distinct banks instead
of one. Arrays that fail a condition are left alone; the reasons name the line.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes.framework import CudaRecipe, Edit, Source, Variant, collect, register

NAME = "smem-swizzle"
BANK_ROW_BYTES = 128
"""32 banks of 4 bytes."""


@dataclass(frozen=True)
class _Tile:
    name: str
    dims: int
    row_elems: int
    """L: elements per bank row."""
    uses: list[Node]
    """The outermost subscript expression of every use."""


def _chain(ident: Node) -> tuple[Node, list[Node]] | None:
    """(outermost subscript, index expressions outermost-first) of ``ident[a][b]...``."""
    indices: list[Node] = []
    node = ident
    while node.parent is not None and node.parent.type == "subscript_expression":
        parent = node.parent
        argument = parent.child_by_field_name("argument")
        if argument is None or argument.id != node.id:
            break
        found = parent.child_by_field_name("indices") or parent.child_by_field_name("index")
        if found is None:
            return None
        inner = list(found.named_children) if found.type == "subscript_argument_list" else [found]
        if len(inner) != 1:
            return None
        indices.append(inner[0])
        node = parent
    return (node, indices) if indices else None


def _impure(node: Node) -> Node | None:
    for sub in _cuda.walk(node):
        if sub.type in ("assignment_expression", "update_expression", "call_expression"):
            return sub
        if sub.type == "binary_expression" and _cuda.text(sub.child_by_field_name("operator") or sub) == "^":
            return sub
    return None


def _tile(
    body: Node, decl: Node, ident: Node, sizes: list[Node | None], env: dict[str, _cuda.Constant | int]
) -> _Tile | str:
    name = _cuda.text(ident)
    where = f"{name} (line {_cuda.line_of(decl)})"
    if _cuda.has_storage(decl, "extern") or len(sizes) < 2:
        return f"{where}: not a static 2-D or deeper array"
    elem = _cuda.ELEMENT_BYTES.get(_cuda.element_type(decl))
    if elem not in (4, 8):
        return f"{where}: {elem or 'unknown'}-byte elements (4 or 8 are swizzled; pad 2-byte tiles)"
    last = _cuda.evaluate(_cuda.text(sizes[-1]), env) if sizes[-1] is not None else None
    row_elems = BANK_ROW_BYTES // elem
    if last is None or last & (last - 1) or last < row_elems:
        return f"{where}: last dimension {last} is not a power of two >= {row_elems} (padded already, or too narrow)"
    uses = []
    for node in _cuda.walk(body):
        if node.type != "identifier" or _cuda.text(node) != name or node.id == ident.id:
            continue
        chain = _chain(node)
        if chain is None or len(chain[1]) != len(sizes):
            return f"{where}: used other than as a full subscript on line {_cuda.line_of(node)}"
        outer, indices = chain
        if outer.parent is not None and outer.parent.type == "pointer_expression":
            return f"{where}: its address is taken on line {_cuda.line_of(outer)}"
        bad = next((b for i in indices[-2:] if (b := _impure(i)) is not None), None)
        if bad is not None:
            return f"{where}: index on line {_cuda.line_of(bad)} has side effects, a call or an XOR already"
        uses.append(outer)
    if not uses:
        return f"{where}: never used"
    return _Tile(name, len(sizes), row_elems, uses)


def _tiles(src: Source) -> tuple[list[_Tile], list[str]] | str:
    found = src.kernel_body
    if isinstance(found, str):
        return found
    kernel, body = found
    env: dict[str, _cuda.Constant | int] = dict(src.constants)
    arrays = list(_cuda.shared_arrays(body))
    if not arrays:
        return "no __shared__ array in the kernel"
    return collect(_tile(body, decl, ident, sizes, env) for decl, _d, ident, sizes in arrays)


def _swizzled(use: Node, tile: _Tile) -> str:
    chain = _chain(next(n for n in _cuda.walk(use) if n.type == "identifier" and _cuda.text(n) == tile.name))
    assert chain is not None
    _outer, indices = chain
    row, col = _cuda.text(indices[-2]), _cuda.text(indices[-1])
    head = "".join(f"[{_cuda.text(i)}]" for i in indices[:-2])
    return f"{tile.name}{head}[{row}][({col}) ^ (({row}) & {tile.row_elems - 1})]"


class _Swizzle(CudaRecipe[tuple[list[_Tile], list[str]]]):
    name = NAME
    transforms = ("smem-swizzle",)
    summary = "__shared__ T tile[R][C] (C a power of two): tile[r][c] -> tile[r][c ^ (r % 32)], conflict-free columns without padding"

    def match(self, src: Source) -> tuple[list[_Tile], list[str]] | str:
        return _tiles(src)

    def plan(self, src: Source, m: tuple[list[_Tile], list[str]]) -> list[Variant]:
        tiles, reasons = m
        edits = [Edit(u.start_byte, u.end_byte, _swizzled(u, t)) for t in tiles for u in t.uses]
        names = ", ".join(t.name for t in tiles)
        return [
            Variant(
                edits=edits,
                description=(
                    f"XOR-swizzled column index of {names} (col ^ (row & {tiles[0].row_elems - 1})): a warp walking "
                    "a column hits distinct banks, with no padding"
                ),
                parameters={"arrays": names},
                notes=[f"left alone: {r}" for r in reasons],
            )
        ]


RECIPE = register(_Swizzle())
applies, propose = RECIPE.applies, RECIPE.propose
