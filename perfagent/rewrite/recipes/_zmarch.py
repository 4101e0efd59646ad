"""register-streaming's analysis: a 3-D launch whose threads read an input at neighbouring z planes.

What is proven (refused with the reason, and the line where there is one, otherwise), on the kernel's
parse tree:

- a top-level global index ``T i = blockIdx.z * blockDim.z + threadIdx.z`` and no other use of
  ``blockIdx.z``, ``threadIdx.z``, ``blockDim.z``, ``gridDim.z``; ``i`` never assigned;
- the x and y coordinates used only in global indices written with ``blockDim`` (the block may be
  reshaped), no block or warp cooperation (barriers, shared memory, shuffles);
- the statements after ``i``'s declaration are straight-line: declarations, expression statements,
  early exits ``if (C) return;``, and possibly a last ``if (C) { ... }`` (no else) of the same kind;
- some read-only pointer parameter (only ever read by subscripts) is read at the same index on two or
  more consecutive z planes: the subscripts, as polynomials (``_poly``), are ``alpha * i + beta + d *
  alpha`` for consecutive whole ``d`` (``in[(i - 1) * N * N + j * N + k]``, ``in[c + N * N]`` with ``c``
  declared from ``i``); those reads are not under ``?:``, ``&&`` or ``||`` (they are always made once
  the early exits pass), and what their indices name is declared before the first of them.

Then thread (x, y) marching along z can keep the planes of each chain in registers: at plane ``i``
the value of the chain's plane ``d`` is the value it had at plane ``i - 1`` for ``d + 1``, provided
plane ``i - 1`` got past the early exits (the window is warm); only the leading plane is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda, _poly, _thread_index
from perfagent.rewrite.recipes._coop_row_syntax import is_written, subscript_index
from perfagent.rewrite.recipes._thread_index import GlobalIndex
from perfagent.rewrite.recipes._variant import at

_BUILTINS = ("blockIdx", "threadIdx", "blockDim", "gridDim")
_SHORT_CIRCUIT = ("conditional_expression",)


@dataclass
class Chain:
    """Reads of one array at one (x, y) index on consecutive z planes: offset -> the subscripts."""

    array: str
    element: str
    reads: dict[int, list[Node]] = field(default_factory=dict)

    @property
    def low(self) -> int:
        return min(self.reads)

    @property
    def high(self) -> int:
        return max(self.reads)


@dataclass(frozen=True)
class ZMarch:
    """What the rewrite needs."""

    index: GlobalIndex
    stmts: list[Node]
    """The statements after the index declaration (a last ``if`` without else flattened into its body)."""
    last_if: Node | None
    """That last ``if`` (its condition becomes an early exit), or None."""
    exits: list[Node]
    """The ``return`` statements of the early exits, in order."""
    load_at: int
    """Index in ``stmts`` of the first statement that reads a chain (the window is loaded before it)."""
    chains: list[Chain]


def _is_exit(stmt: Node) -> Node | None:
    """The ``return;`` of ``if (C) return;`` (also ``{ return; }``), or None."""
    if stmt.type != "if_statement" or stmt.child_by_field_name("alternative") is not None:
        return None
    then = stmt.child_by_field_name("consequence")
    if then is not None and then.type == "compound_statement" and len(then.named_children) == 1:
        then = then.named_children[0]
    return then if then is not None and then.type == "return_statement" and not then.named_children else None


def _straight(stmts: list[Node]) -> tuple[list[Node], Node | None, list[Node]] | str:
    """(flattened statements, the last if, exits) when the statements are straight-line, or why not."""
    last_if = None
    if stmts and stmts[-1].type == "if_statement" and _is_exit(stmts[-1]) is None:
        last_if = stmts[-1]
        if last_if.child_by_field_name("alternative") is not None:
            return at(last_if, "the guarded work has an else branch")
        body = last_if.child_by_field_name("consequence")
        assert body is not None
        inner = (
            [c for c in body.named_children if c.type != "comment"]
            if body.type == "compound_statement"
            else [body]
        )
        stmts = stmts[:-1] + inner
    exits = []
    for stmt in stmts:
        ret = _is_exit(stmt)
        if ret is not None:
            exits.append(ret)
            continue
        if stmt.type not in ("declaration", "expression_statement", "comment"):
            return at(stmt, f"a {stmt.type.replace('_', ' ')} in the per-point work: not straight-line code")
        nested = next(
            (n for n in _cuda.walk(stmt) if n.type in ("return_statement", "lambda_expression")), None
        )
        if nested is not None:
            return at(nested, "control flow inside a statement")
    return [s for s in stmts if s.type != "comment"], last_if, exits


def callee_uses_threads(kernel: Node) -> str | None:
    """Why a function of the file that the kernel calls depends on the thread or block coordinates."""
    root = kernel
    while root.parent is not None:
        root = root.parent
    called = {
        _cuda.text(fn)
        for n in _cuda.walk(kernel)
        if n.type == "call_expression" and (fn := n.child_by_field_name("function")) is not None
    }
    for fn in root.children:
        name = _cuda.function_name(fn) if fn.type == "function_definition" else None
        if name in called and fn.id != kernel.id:
            for builtin in _BUILTINS:
                if any(_thread_index.builtin_uses(fn, builtin, axis) for axis in "xyz"):
                    return at(fn, f"{name} reads {builtin}: the reshaped block would change what it computes")
            why = _thread_index.cooperation(fn)
            if why is not None:
                return why
    return None


def _axes_ok(kernel: Node, body: Node, z: GlobalIndex) -> str | None:
    """Why the block cannot be reshaped to (x, y, 1) with z marched (None: it can)."""
    why = _thread_index.cooperation(kernel) or callee_uses_threads(kernel)
    if why is not None:
        return why
    decls = {g.decl.id: g for g in _thread_index.global_indices(body)}
    for name in _BUILTINS:
        for axis in "xyz":
            for use in _thread_index.builtin_uses(kernel, name, axis):
                owner = _cuda.enclosing(use, "declaration")
                g = decls.get(owner.id) if owner is not None else None
                if g is None or (axis == "z") != (g.decl.id == z.decl.id):
                    return at(use, f"{name}.{axis} outside the global index declarations")
                if g.scale is not None:
                    return at(
                        use,
                        f"the {axis} index is written with the block extent {_cuda.text(g.scale)}, not blockDim.{axis}",
                    )
    return _thread_index.assigns(kernel, z.name) and at(z.decl, f"{z.name} is assigned after its declaration")


def read_only(kernel: Node) -> dict[str, str]:
    """Pointer parameters only ever read through subscripts, and their element types (const dropped)."""
    out = {}
    for name, typ, pointer in _cuda.kernel_params(kernel):
        if not pointer:
            continue
        uses = [n for n in _cuda.walk(kernel) if n.type == "identifier" and _cuda.text(n) == name]
        reads = [
            n
            for n in uses
            if n.parent is not None
            and n.parent.type == "subscript_expression"
            and n.parent.child_by_field_name("argument") == n
            and not is_written(n.parent)
            and (n.parent.parent is None or n.parent.parent.type != "pointer_expression")
        ]
        if len(reads) == len(uses) - 1:  # every use but the parameter's own declaration
            out[name] = " ".join(w for w in typ.split() if w not in ("const", "volatile"))
    return out


def definitions(kernel: Node, z: str) -> dict[str, _poly.Poly]:
    """Polynomials of names declared once with a value and never assigned (their uses expand)."""
    env: dict[str, _poly.Poly] = {}
    for _decl, name, value in _cuda.initialisations(kernel):
        if name == z or len(_cuda.init_declarators(kernel, name)) != 1 or _thread_index.assigns(kernel, name):
            continue
        p = _poly.poly(value, env, frozenset({z}))
        if p is not None:
            env[name] = p
    return env


def _conditional(sub: Node, stmt: Node) -> bool:
    """Whether ``sub`` is evaluated only on some paths of ``stmt`` (under ``?:``, ``&&``, ``||``)."""
    node = sub.parent
    while node is not None and node.id != stmt.id:
        if node.type in _SHORT_CIRCUIT:
            return True
        if node.type == "binary_expression":
            op = node.child_by_field_name("operator")
            if op is not None and _cuda.text(op) in ("&&", "||"):
                return True
        node = node.parent
    return False


def _chains(kernel: Node, stmts: list[Node], z: str, arrays: dict[str, str]) -> list[Chain]:
    """Chains of two or more consecutive planes, per read-only array (see the module docstring)."""
    env = definitions(kernel, z)
    found: list[tuple[Chain, _poly.Poly, _poly.Poly]] = []  # chain, alpha, beta of its offset-0 plane
    for stmt in stmts:
        for sub in (n for n in _cuda.walk(stmt) if n.type == "subscript_expression"):
            arg = sub.child_by_field_name("argument")
            name = _cuda.text(arg) if arg is not None else ""
            index = subscript_index(sub)
            if name not in arrays or index is None or _conditional(sub, stmt):
                continue
            p = _poly.poly(index, env, frozenset({z}))
            split = None if p is None or not _stable(kernel, p, z) else _poly.linear_in(p, z)
            if split is None or not split[0]:
                continue
            alpha, beta = split
            for chain, c_alpha, c_beta in found:
                d = _poly.offset(alpha, c_beta, beta) if chain.array == name and c_alpha == alpha else None
                if d is not None:
                    chain.reads.setdefault(d, []).append(sub)
                    break
            else:
                found.append((Chain(name, arrays[name], {0: [sub]}), alpha, beta))
    return [c for c, _a, _b in found if len(c.reads) > 1 and len(c.reads) == c.high - c.low + 1]


def _stable(kernel: Node, p: _poly.Poly, z: str) -> bool:
    """No atom of ``p`` other than ``z`` is a variable the kernel assigns (its value is the same each plane)."""
    names = {a for m in p for a in m if a != z and a.isidentifier()}
    return not any(_thread_index.assigns(kernel, n) for n in names)


def analyse(kernel: Node) -> ZMarch | str:
    """The z-marchable shape of ``kernel``, or why it is not one."""
    body = kernel.child_by_field_name("body")
    if body is None:
        return "the kernel has no body"
    zs = [g for g in _thread_index.global_indices(body) if g.axis == "z"]
    if len(zs) != 1:
        return "no single top-level global index T i = blockIdx.z * blockDim.z + threadIdx.z"
    z = zs[0]
    why = _axes_ok(kernel, body, z)
    if why:
        return why
    top = [c for c in body.named_children if c.type != "comment"]
    shape = _straight(top[top.index(z.decl) + 1 :])
    if isinstance(shape, str):
        return shape
    stmts, last_if, exits = shape
    chains = _chains(kernel, stmts, z.name, read_only(kernel))
    if not chains:
        return (
            "no read-only array is read at one (x, y) index on consecutive z planes "
            f"(in[... ({z.name} - 1) ...], in[... {z.name} ...]): nothing to keep in registers"
        )
    first = min(stmts.index(_statement_of(r, stmts)) for c in chains for rs in c.reads.values() for r in rs)
    declared_later = {n for s in stmts[first:] if s.type == "declaration" for n in _declared_names(s)}
    for c in chains:
        for rs in c.reads.values():
            for r in rs:
                late = _cuda.identifiers_in(r) & declared_later
                if late:
                    return at(
                        r, f"the read's index uses {sorted(late)[0]}, declared after the first z-plane read"
                    )
    return ZMarch(z, stmts, last_if, exits, first, chains)


def _statement_of(node: Node, stmts: list[Node]) -> Node:
    ids = {s.id: s for s in stmts}
    while node.id not in ids:
        assert node.parent is not None
        node = node.parent
    return ids[node.id]


def _declared_names(decl: Node) -> set[str]:
    out = set()
    for d in decl.children_by_field_name("declarator"):
        inner = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
        if inner is not None and inner.type == "identifier":
            out.add(_cuda.text(inner))
    return out
