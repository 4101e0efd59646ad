"""coalesce-access for the in-place square transpose: swap 32 x 32 tile pairs through shared memory.

The usual first in-place transpose gives one thread each element above (or below) the diagonal and
swaps ``a[row][col]`` with ``a[col][row]``: of the two accesses, the one whose fast index comes from
``threadIdx.x`` is coalesced, the mirrored one puts every lane of a warp a row apart (32 sectors per
request), and half of the launched threads idle. The textbook fix pairs tiles: the block at tile
``(by, bx)`` with ``bx >= by`` loads its tile and the mirrored tile ``(bx, by)`` (both with lanes along
the rows' fast index), waits at a barrier, and writes each one transposed into the other's place;
diagonal tiles are transposed in place. Every access is a coalesced row segment, and the padding
column keeps the transposed shared reads free of bank conflicts.

Precondition (proven on the tree-sitter parse tree of the kernel):
- index declarations ``x = blockIdx.x * blockDim.x + threadIdx.x`` and ``v`` the same on y (or
  ``blockIdx.y`` alone with a 1-D block), or a 1-D launch's ``i = blockIdx.x * blockDim.x +
  threadIdx.x; v = i / N; x = i % N;`` (either order); no other thread built-in;
- then one ``if`` whose condition is a conjunction of a triangle term (``x > v``, ``v < x``, ``x < v``,
  ``>=``/``<=``) and bounds ``x < N`` / ``v < N`` with one scalar argument ``N``;
- whose block swaps two elements of one pointer argument ``a``: any order of temporaries and stores
  that leaves ``a[I] = old a[J]`` and ``a[J] = old a[I]`` and nothing else, where ``J`` is ``I`` with
  ``x`` and ``v`` exchanged, and ``x`` is a unit-stride term of ``I``.

The tiled kernel does exactly the same set of swaps (every pair ``{(r, c), (c, r)}`` with ``r, c < N``
once; the diagonal is swapped with itself), reusing ``I`` verbatim with ``x`` and ``v`` re-declared per
step. The launch copy becomes block (32, 8), grid (ceil(N / 32), ceil(N / 32)); the blocks below the
diagonal return at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.base import LaunchContext
from perfagent.rewrite.recipes import _cuda, _launch, _transpose_copy
from perfagent.rewrite.recipes._chunk_syntax import ident, is_global_id, operator
from perfagent.rewrite.recipes._transpose_copy import _index_of, _indices, _unit
from perfagent.rewrite.recipes.framework import CudaRecipe, Source, Variant, at, register
from perfagent.workloads.launch_spec import LaunchOverride

NAME = "transpose-inplace"
TILE = 32
ROWS = 8
_J = "perfagent_j"
_OPS = {"<": ("<", False), "<=": ("<=", False), ">": ("<", True), ">=": ("<=", True)}


@dataclass(frozen=True)
class _Swap:
    x: tuple[str, str]
    """(name, declared type) of the index from threadIdx.x."""
    v: tuple[str, str]
    n: str
    """The scalar argument bounding both indices (the matrix side)."""
    array: str
    element: str
    index: str
    """The swapped subscript whose unit-stride term is ``x`` (text)."""
    body: Node


def _squash(s: str) -> str:
    return re.sub(r"\s+", "", s)


def _exchanged(index: Node, a: str, b: str) -> str:
    """``index`` as text with the identifiers ``a`` and ``b`` exchanged."""
    base = index.start_byte
    out = bytearray(index.text or b"")
    for n in sorted(_cuda.walk(index), key=lambda n: -n.start_byte):
        if n.type == "identifier" and _cuda.text(n) in (a, b):
            out[n.start_byte - base : n.end_byte - base] = (b if _cuda.text(n) == a else a).encode()
    return out.decode()


def _terms(cond: Node) -> list[Node]:
    node = _cuda.strip(cond)
    if node.type == "binary_expression" and _cuda.text(node.child_by_field_name("operator") or node) == "&&":
        return [t for f in ("left", "right") if (c := node.child_by_field_name(f)) for t in _terms(c)]
    return [node]


def _guard(cond: Node, x: str, v: str) -> str | None:
    """The one bound ``N`` of a guard 'triangle && bounds', or None when the guard is not that."""
    triangle, bounds = False, set()
    for term in _terms(cond):
        op = (
            _cuda.text(term.child_by_field_name("operator") or term)
            if term.type == "binary_expression"
            else ""
        )
        if op not in _OPS:
            return None
        lo, hi = (_cuda.text(_cuda.strip(term.child_by_field_name(f) or term)) for f in ("left", "right"))
        if _OPS[op][1]:
            lo, hi = hi, lo
        if {lo, hi} == {x, v}:
            triangle = True
        elif lo in (x, v) and _OPS[op][0] == "<" and re.fullmatch(r"\w+", hi):
            bounds.add(hi)
        else:
            return None
    return bounds.pop() if triangle and len(bounds) == 1 else None


def _statements(block: Node) -> list[Node]:
    if block.type == "compound_statement":
        return [c for c in block.named_children if c.type != "comment"]
    return [block]


def _read(node: Node, temps: dict[str, str], stored: dict[str, str], array: list[str]) -> str | None:
    """What ``node`` holds in terms of the original array ('I' of old a[I]), or None."""
    node = _cuda.strip(node)
    if node.type == "identifier":
        return temps.get(_cuda.text(node))
    index = _index_of(node) if node.type == "subscript_expression" else None
    if index is None:
        return None
    array.append(_cuda.text(node.child_by_field_name("argument") or node))
    key = _squash(_cuda.text(index))
    return stored.get(key, key)


def _swap_effect(stmts: list[Node]) -> tuple[dict[str, str], dict[str, Node], list[str]] | str:
    """Symbolically run the guarded block: {stored index: original index it now holds}, the index nodes,
    and the arrays touched; or why the block is not loads into temporaries and stores."""
    temps: dict[str, str] = {}
    stored: dict[str, str] = {}
    nodes: dict[str, Node] = {}
    arrays: list[str] = []
    for stmt in stmts:
        if stmt.type == "declaration":
            inits = [c for c in stmt.named_children if c.type == "init_declarator"]
            name, value = (
                (inits[0].child_by_field_name(f) for f in ("declarator", "value")) if inits else (None, None)
            )
            held = _read(value, temps, stored, arrays) if value is not None else None
            if len(inits) != 1 or name is None or held is None:
                return at(stmt, "not a temporary loaded from the array")
            temps[_cuda.text(name)] = held
            continue
        expr = stmt.named_children[0] if stmt.type == "expression_statement" and stmt.named_children else None
        if (
            expr is None
            or expr.type != "assignment_expression"
            or _cuda.text(expr.child_by_field_name("operator") or expr) != "="
        ):
            return at(stmt, "not a load into a temporary or a store 'a[...] = ...'")
        left, right = expr.child_by_field_name("left"), expr.child_by_field_name("right")
        index = _index_of(left) if left is not None and left.type == "subscript_expression" else None
        held = _read(right, temps, stored, arrays) if right is not None else None
        if left is None or index is None or held is None:
            return at(stmt, "not a store of a loaded value 'a[...] = ...'")
        arrays.append(_cuda.text(left.child_by_field_name("argument") or left))
        stored[_squash(_cuda.text(index))] = held
        nodes[_squash(_cuda.text(index))] = index
    return stored, nodes, arrays


def _flat_indices(body: Node) -> tuple[dict[str, tuple[str, str]], list[Node]] | None:
    """The 1-D form ``i = blockIdx.x * blockDim.x + threadIdx.x; r = i / N; c = i % N;`` as the roles
    of ``_indices`` (x: the column ``c``, y: the row ``r``), or None."""
    stmts = [s for s in body.named_children if s.type != "comment"]
    decls = []
    for stmt in stmts[:3]:
        inits = (
            [c for c in stmt.named_children if c.type == "init_declarator"]
            if stmt.type == "declaration"
            else []
        )
        name, value = (
            (inits[0].child_by_field_name(f) for f in ("declarator", "value"))
            if len(inits) == 1
            else (None, None)
        )
        if name is None or value is None:
            return None
        decls.append((_cuda.text(name), _cuda.strip(value), _transpose_copy._declared_type(stmt)))
    if len(decls) != 3 or not is_global_id(decls[0][1], {}):
        return None
    flat = decls[0][0]
    roles: dict[str, tuple[str, str]] = {}
    sizes: set[str | None] = set()
    for index, peel, typ in decls[1:]:
        op = operator(peel)
        left, right = peel.child_by_field_name("left"), peel.child_by_field_name("right")
        if op not in ("/", "%") or ident(left) != flat or ident(right) is None:
            return None
        roles["y" if op == "/" else "x"] = (index, typ)
        sizes.add(ident(right))
    return (roles, stmts[3:]) if set(roles) == {"x", "y"} and len(sizes) == 1 else None


def analyse(kernel: Node, launch: LaunchContext | None) -> _Swap | str:
    body = kernel.child_by_field_name("body")
    if body is None:
        return "the kernel has no body"
    if "__shared__" in _cuda.text(kernel):
        return "the kernel already uses shared memory"
    found = _flat_indices(body) or _indices(body, launch)
    if isinstance(found, str):
        return found
    roles, rest = found
    if "z" in roles:
        return "a blockIdx.z index: not one square matrix"
    x, v = roles["x"], roles["y"]
    if any(_cuda.builtin_axis(n) for stmt in rest for n in _cuda.walk(stmt)):
        return "thread built-ins are read outside the index declarations"
    if len(rest) != 1 or rest[0].type != "if_statement" or rest[0].child_by_field_name("alternative"):
        return "the body is not one guarded swap after the index declarations"
    cond = rest[0].child_by_field_name("condition")
    inner = cond.named_children[0] if cond is not None and cond.named_children else None
    n = _guard(inner, x[0], v[0]) if inner is not None else None
    if n is None:
        return at(
            rest[0], f"the guard is not a triangle ({x[0]} > {v[0]} or the like) and bounds on one size"
        )
    effect = _swap_effect(_statements(rest[0].child_by_field_name("consequence") or rest[0]))
    if isinstance(effect, str):
        return effect
    stored, nodes, arrays = effect
    if len(set(arrays)) != 1 or len(stored) != 2:
        return at(rest[0], "the guarded block does not swap two elements of one array")
    (i, held_i), (j, held_j) = stored.items()
    if (held_i, held_j) != (j, i):
        return at(rest[0], "the guarded block does not swap two elements of one array")
    first = next((nodes[k] for k in (i, j) if _unit(nodes[k], x[0])), None)
    if first is None:
        return (
            f"{x[0]} (from threadIdx.x) is a unit-stride index of neither access: no coalesced side to tile"
        )
    other = j if nodes[i] is first else i
    if _squash(_exchanged(first, x[0], v[0])) != other:
        return at(first, f"the two accesses are not mirror images ({x[0]} and {v[0]} exchanged)")
    params = {name: (typ, ptr) for name, typ, ptr in _cuda.kernel_params(kernel)}
    array = arrays[0]
    if not params.get(array, ("", False))[1]:
        return f"{array} is not a pointer argument"
    if n not in params or params[n][1]:
        return f"the bound {n} is not a scalar kernel argument"
    element = " ".join(params[array][0].replace("const", "").split())
    return _Swap(x, v, n, array, element, _cuda.text(first), body)


def _phase(s: _Swap, tile: str, load: bool, row_block: str, col_block: str) -> str:
    """One step of the load (tile <- a) or store (a <- tile transposed) of the tile at (row_block, col_block)."""
    (x, xt), (v, vt) = s.x, s.v
    access = f"{s.array}[{s.index}]"
    move = (
        f"{tile}[threadIdx.y + {_J}][threadIdx.x] = {access};"
        if load
        else f"{access} = {tile}[threadIdx.x][threadIdx.y + {_J}];"
    )
    return (
        f"            {xt} {x} = {col_block} * {TILE} + threadIdx.x;\n"
        f"            {vt} {v} = {row_block} * {TILE} + threadIdx.y + {_J};\n"
        f"            if ({x} < {s.n} && {v} < {s.n})\n"
        f"                {move}\n"
    )


def _body(s: _Swap) -> str:
    ta, tb = "perfagent_ta", "perfagent_tb"
    loop = f"    for (int {_J} = 0; {_J} < {TILE}; {_J} += {ROWS}) {{\n"
    bx, by = "blockIdx.x", "blockIdx.y"
    return (
        "{\n"
        f"    // {NAME}: block (bx >= by) swaps tile (by, bx) with tile (bx, by): both are read and written as\n"
        f"    // coalesced rows through {TILE} x {TILE + 1} shared tiles (the extra column avoids bank conflicts).\n"
        f"    __shared__ {s.element} {ta}[{TILE}][{TILE + 1}];\n"
        f"    __shared__ {s.element} {tb}[{TILE}][{TILE + 1}];\n"
        f"    if ({bx} < {by})\n"
        "        return;  // the pair belongs to the block above the diagonal\n"
        f"    const bool perfagent_pair = {bx} != {by};\n"
        f"{loop}"
        f"        {{\n{_phase(s, ta, True, by, bx)}        }}\n"
        f"        if (perfagent_pair) {{\n{_phase(s, tb, True, bx, by)}        }}\n"
        "    }\n"
        "    __syncthreads();\n"
        f"{loop}"
        f"        {{\n{_phase(s, ta, False, bx, by)}        }}\n"
        f"        if (perfagent_pair) {{\n{_phase(s, tb, False, by, bx)}        }}\n"
        "    }\n"
        "}"
    )


class _TransposeInplace(CudaRecipe[tuple[_Swap, str]]):
    name = NAME
    transforms = ("coalesce-access",)
    summary = "in-place square transposes (one thread per element above the diagonal): swap 32x32 tile pairs through shared memory"
    needs_launch = True
    no_launch = "no launch spec: the tile-pair swap needs a new grid"

    def match(self, src: Source) -> tuple[_Swap, str] | str:
        kernel = src.kernel
        if isinstance(kernel, str):
            return kernel
        s = analyse(kernel, src.launch)
        if isinstance(s, str):
            return s
        assert src.launch is not None
        names = [name for name, _, _ in _cuda.kernel_params(kernel)]
        value = src.launch.args[names.index(s.n)].value if names.index(s.n) < len(src.launch.args) else None
        if value is None:
            return f"the launch spec gives no value for {s.n}"
        return s, str(value)

    def plan(self, src: Source, m: tuple[_Swap, str]) -> list[Variant]:
        s, side = m
        tiles = _launch.ceil_div(side, TILE)
        return [
            Variant(
                edits=[_cuda.Edit(s.body.start_byte, s.body.end_byte, _body(s))],
                description=(
                    f"in-place transpose by tile pairs: {s.array}[{s.index}] and its mirror swapped through two "
                    f"{TILE}x{TILE + 1} shared tiles, every access a coalesced row; block ({TILE}, {ROWS})"
                ),
                parameters={"tile": f"{TILE}x{TILE}", "block": f"{TILE}x{ROWS}"},
                launch=LaunchOverride(grid=[tiles, tiles], block=[TILE, ROWS]),
            )
        ]


RECIPE = register(_TransposeInplace())
applies, propose = RECIPE.applies, RECIPE.propose
