"""Evaluate a flat-index permute kernel's body symbolically: which element each flat index reads and writes.

The kernel (1-D launch) is: straight-line set-up that reads no thread coordinate (``int dims[3] = {d0, d1,
d2}; out_dims[sp1] = dims[1];`` with template arguments as constants), then either a grid-stride loop
``for (I o = <global id>; o < N; o += blockDim.x * gridDim.x) { body }`` or ``I o = <global id>; if (o >=
N) return; body``. The body is declarations and assignments of integer locals and of local arrays at
constant indices, and last one copy ``dst[W] = src[R]`` (``__ldg(src + R)``, ``__ldg(&src[R])`` too).
``evaluate`` runs it on ``_flat_index.Lin`` values: the result is ``W`` and ``R`` as coordinate sums.
Anything else (a call, a branch, a pointer walk, a thread built-in outside the index) is refused with
its line.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _affine, _cuda
from perfagent.rewrite.recipes._affine import FormDict
from perfagent.rewrite.recipes._chunk_syntax import assigned, ident, is_global_id, operator
from perfagent.rewrite.recipes._flat_index import Lin, combine, divide, times
from perfagent.rewrite.recipes._index_guards import exits
from perfagent.rewrite.recipes._index_range import is_integer_type
from perfagent.rewrite.recipes._variant import at

_COMPOUND = {"+=": "+", "-=": "-", "*=": "*", "/=": "/", "%=": "%"}
_Value = Lin | list[Lin | None]


@dataclass(frozen=True)
class Copy:
    """The permute, evaluated."""

    index: str
    index_type: str
    bound: FormDict
    """``N`` of ``o < N``, a form of the kernel's sizes."""
    write: Lin
    read: Lin
    dst: str
    src: str
    element: str
    body: Node
    template: dict[str, int]
    """The integer template arguments the evaluation bound (the rewrite holds for them only)."""


def template_values(kernel: Node, requested: str | None) -> dict[str, int] | str:
    """Integer template parameters bound by the requested instantiation (``k<double, 0, 2, 1>``)."""
    parent = kernel.parent
    if parent is None or parent.type != "template_declaration":
        return {}
    if requested is None or "<" not in requested:
        return "a template kernel and no instantiation named: its template arguments are unknown"
    args = [a.strip() for a in requested.split("<", 1)[1].rsplit(">", 1)[0].split(",")]
    params = parent.child_by_field_name("parameters")
    kinds = [p for p in (params.named_children if params is not None else []) if p.type != "comment"]
    if len(kinds) != len(args):
        return f"the instantiation {requested} does not give every template argument"
    out = {}
    for p, a in zip(kinds, args, strict=True):
        name = ident(p.child_by_field_name("declarator"))
        if p.type == "parameter_declaration" and name is not None:
            try:
                out[name] = int(a, 0)
            except ValueError:
                return f"template argument {name} = {a} is not an integer"
    return out


class _Eval:
    def __init__(self, kernel: Node, consts: dict[str, int]) -> None:
        written = assigned(kernel)
        self.consts = consts
        self.env: dict[str, _Value] = {k: Lin.size(_affine.const(v)) for k, v in consts.items()}
        for name, typ, pointer in _cuda.kernel_params(kernel):
            if not pointer and is_integer_type(typ) and name not in written:
                self.env[name] = Lin.size(_affine.sym(name))

    def expr(self, node: Node) -> Lin | str:
        node = _cuda.strip(node)
        if node.type == "number_literal":
            try:
                return Lin.size(_affine.const(int(_cuda.text(node).rstrip("uUlL"), 0)))
            except ValueError:
                return at(node, "a literal that is not an integer")
        if node.type == "identifier":
            got = self.env.get(_cuda.text(node))
            return got if isinstance(got, Lin) else at(node, f"'{_cuda.text(node)}' has no known value")
        if node.type == "subscript_expression":
            return self._element(node)
        if node.type == "binary_expression" and operator(node) in ("+", "-", "*", "/", "%"):
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            assert left is not None and right is not None
            a, b = self.expr(left), self.expr(right)
            if isinstance(a, str) or isinstance(b, str):
                return a if isinstance(a, str) else str(b)
            return self._apply(node, operator(node), a, b)
        return at(node, f"'{_cuda.text(node)}' is not index arithmetic")

    def _apply(self, node: Node, op: str, a: Lin, b: Lin) -> Lin | str:
        if op in ("+", "-"):
            return combine(a, b, 1 if op == "+" else -1)
        if op == "*":
            got = times(a, b)
            return got if got is not None else at(node, "a product that is not a size times an index")
        got2 = divide(a, b, op)
        return got2 if isinstance(got2, Lin) else at(node, got2)

    def _slot(self, node: Node) -> tuple[list[Lin | None], int] | str:
        array, index = node.child_by_field_name("argument"), node.child_by_field_name("indices")
        name = ident(array)
        values = self.env.get(name or "")
        args = [c for c in (index.named_children if index is not None else []) if c.type != "comment"]
        if not isinstance(values, list) or len(args) != 1:
            return at(node, f"'{_cuda.text(node)}' is not an element of a local array")
        k = self.expr(args[0])
        pos = k.size_form() if isinstance(k, Lin) else None
        if pos is None or set(pos) - {()} or not 0 <= pos.get((), 0) < len(values):
            return at(node, f"'{_cuda.text(node)}': the index is not a constant inside the array")
        return values, pos.get((), 0)

    def _element(self, node: Node) -> Lin | str:
        slot = self._slot(node)
        if isinstance(slot, str):
            return slot
        values, k = slot
        got = values[k]
        return got if isinstance(got, Lin) else at(node, f"'{_cuda.text(node)}' is read before it is set")

    def declare(self, stmt: Node) -> str | None:
        if not is_integer_type(_cuda.element_type(stmt)):
            return at(stmt, "a declaration that is not of integers")
        for decl in stmt.children_by_field_name("declarator"):
            target = decl.child_by_field_name("declarator") if decl.type == "init_declarator" else decl
            value = decl.child_by_field_name("value") if decl.type == "init_declarator" else None
            if target is not None and target.type == "array_declarator":
                why = self._declare_array(decl, target, value)
            elif (name := ident(target)) is not None:
                got = self.expr(value) if value is not None else None
                if isinstance(got, str):
                    return got
                self.env[name] = got if got is not None else []
                why = None
            else:
                why = at(decl, "an unsupported declarator")
            if why is not None:
                return why
        return None

    def _declare_array(self, decl: Node, target: Node, value: Node | None) -> str | None:
        name, size = ident(target.child_by_field_name("declarator")), target.child_by_field_name("size")
        n = self.expr(size) if size is not None else None
        length = n.size_form() if isinstance(n, Lin) else None
        if name is None or length is None or set(length) - {()}:
            return at(decl, "a local array of unknown size")
        items: list[Lin | None] = [None] * length.get((), 0)
        if value is not None:
            for k, item in enumerate(c for c in value.named_children if c.type != "comment"):
                got = self.expr(item)
                if isinstance(got, str) or k >= len(items):
                    return got if isinstance(got, str) else at(decl, "too many initialisers")
                items[k] = got
        self.env[name] = items
        return None

    def assign(self, node: Node) -> str | None:
        left, right, op = node.child_by_field_name("left"), node.child_by_field_name("right"), operator(node)
        assert left is not None and right is not None
        value = self.expr(right)
        if isinstance(value, str):
            return value
        if op in _COMPOUND:
            old = self.expr(left)
            if isinstance(old, str):
                return old
            got = self._apply(node, _COMPOUND[op], old, value)
            if isinstance(got, str):
                return got
            value = got
        elif op != "=":
            return at(node, f"the assignment '{op}'")
        if (name := ident(left)) is not None and isinstance(self.env.get(name), Lin | list):
            self.env[name] = value
            return None
        slot = self._slot(_cuda.strip(left))
        if isinstance(slot, str):
            return slot
        slot[0][slot[1]] = value
        return None

    def body(self, stmts: list[Node]) -> str | None:
        """Run declarations and assignments; why not when a statement is anything else."""
        for stmt in stmts:
            if stmt.type == "comment":
                continue
            if stmt.type == "declaration":
                why = self.declare(stmt)
            elif stmt.type == "expression_statement" and (e := _expression(stmt)) is not None:
                why = self.assign(e) if e.type == "assignment_expression" else at(stmt, "not an assignment")
            else:
                why = at(
                    stmt,
                    f"'{_cuda.text(stmt)[:40]}' ({stmt.type.replace('_', ' ')}): only declarations and assignments are followed",
                )
            if why is not None:
                return why
        return None


def _expression(stmt: Node) -> Node | None:
    inner = [c for c in stmt.named_children if c.type != "comment"]
    return inner[0] if len(inner) == 1 else None


def _is_stride(node: Node | None) -> bool:
    if node is None or node.type != "binary_expression" or operator(node) != "*":
        return False
    axes = {
        _cuda.builtin_axis(_cuda.strip(c))
        for c in (node.child_by_field_name("left"), node.child_by_field_name("right"))
        if c
    }
    return axes == {("blockDim", "x"), ("gridDim", "x")}


def _flat_loop(stmt: Node) -> tuple[Node, Node, Node, list[Node]] | None:
    """(index declarator, its type node, the bound, body statements) of a grid-stride loop."""
    init, cond, update = (stmt.child_by_field_name(f) for f in ("initializer", "condition", "update"))
    body = stmt.child_by_field_name("body")
    if init is None or init.type != "declaration" or cond is None or update is None or body is None:
        return None
    decl = init.child_by_field_name("declarator")
    value = decl.child_by_field_name("value") if decl is not None and decl.type == "init_declarator" else None
    name = ident(decl.child_by_field_name("declarator")) if decl is not None else None
    if decl is None or value is None or name is None or not is_global_id(value, {}):
        return None
    cond = _cuda.strip(cond)
    ok_cond = (
        cond.type == "binary_expression"
        and operator(cond) == "<"
        and ident(cond.child_by_field_name("left")) == name
    )
    ok_update = (
        update.type == "assignment_expression"
        and operator(update) == "+="
        and ident(update.child_by_field_name("left")) == name
    )
    if not (ok_cond and ok_update and _is_stride(_cuda.strip(update.child_by_field_name("right") or update))):
        return None
    stmts = body.named_children if body.type == "compound_statement" else [body]
    return decl, init, cond.child_by_field_name("right") or cond, list(stmts)


_Found = tuple[Node, Node, Node, list[Node], list[Node]]


def _guarded(stmts: list[Node], k: int) -> _Found | None:
    """(index declarator, its declaration, the bound, body statements, statements between the index and
    its guard) for ``I o = <global id>; [sizes...] if (o >= N) return; ...`` or ``... if (o < N) {...}``
    as the last statement, the index declared at statement ``k``."""
    decl = stmts[k].child_by_field_name("declarator") if stmts[k].type == "declaration" else None
    value = decl.child_by_field_name("value") if decl is not None and decl.type == "init_declarator" else None
    name = ident(decl.child_by_field_name("declarator")) if decl is not None else None
    if decl is None or value is None or name is None or not is_global_id(value, {}):
        return None
    for j in range(k + 1, len(stmts)):
        guard = stmts[j]
        if guard.type != "if_statement":
            continue
        cond = _cuda.strip(guard.child_by_field_name("condition") or guard)
        cond = (
            _cuda.strip(cond.child_by_field_name("value") or cond)
            if cond.type == "condition_clause"
            else cond
        )
        bound = _compared(cond, name, ">=" if exits(guard) else "<")
        then = guard.child_by_field_name("consequence")
        if bound is None or then is None:
            return None
        if exits(guard):
            return decl, stmts[k], bound, stmts[j + 1 :], stmts[k + 1 : j]
        if j == len(stmts) - 1 and guard.child_by_field_name("alternative") is None:
            inner = then.named_children if then.type == "compound_statement" else [then]
            return decl, stmts[k], bound, list(inner), stmts[k + 1 : j]
        return None
    return None


def _compared(cond: Node, name: str, op: str) -> Node | None:
    """``N`` of ``name <op> N`` (or the mirrored ``N <op'> name``)."""
    if cond.type != "binary_expression":
        return None
    left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
    mirrored = {">=": "<=", "<": ">"}[op]
    if operator(cond) == op and ident(left) == name:
        return right
    if operator(cond) == mirrored and ident(right) == name:
        return left
    return None


def _source_of(node: Node, pointers: set[str]) -> tuple[str, Node] | None:
    """(pointer, index) of ``src[R]``, ``__ldg(src + R)`` or ``__ldg(&src[R])``."""
    node = _cuda.strip(node)
    if node.type == "call_expression" and _cuda.text(node.child_by_field_name("function") or node) == "__ldg":
        args = _cuda.call_args(node)
        if len(args) != 1:
            return None
        arg = _cuda.strip(args[0])
        if arg.type == "pointer_expression" and _cuda.text(arg).startswith("&"):
            return _source_of(arg.child_by_field_name("argument") or arg, pointers)
        if arg.type == "binary_expression" and operator(arg) == "+":
            base, off = arg.child_by_field_name("left"), arg.child_by_field_name("right")
            if ident(base) in pointers and off is not None:
                return ident(base) or "", off
        return None
    if node.type == "subscript_expression" and ident(node.child_by_field_name("argument")) in pointers:
        index = node.child_by_field_name("indices")
        args = [c for c in (index.named_children if index is not None else []) if c.type != "comment"]
        return (ident(node.child_by_field_name("argument")) or "", args[0]) if len(args) == 1 else None
    return None


def evaluate(kernel: Node, requested: str | None) -> Copy | str:
    """The permute of ``kernel`` (module docstring), or why the kernel is not one."""
    body = kernel.child_by_field_name("body")
    consts = template_values(kernel, requested)
    if body is None or isinstance(consts, str):
        return consts if isinstance(consts, str) else "the kernel has no body"
    stmts = [s for s in body.named_children if s.type != "comment"]
    for k, stmt in enumerate(stmts):
        last_loop = stmt.type == "for_statement" and k == len(stmts) - 1
        looped = _flat_loop(stmt) if last_loop else None
        found: _Found | None = (*looped, []) if looped is not None else _guarded(stmts, k)
        if found is not None:
            break
    else:
        return "no flat global index: neither a grid-stride loop as the last statement nor a guard 'if (i >= N) return;' / 'if (i < N) {...}'"
    decl, typed, bound, inner, between = found
    pre = stmts[:k] + between
    if any(_cuda.builtin_axis(n) for s in pre for n in _cuda.walk(s)):
        return "thread built-ins before the flat index"
    ev = _Eval(kernel, consts)
    why = ev.body(pre)  # the index is not known yet: a set-up statement that reads it is refused
    return why if why is not None else _finish(kernel, ev, decl, typed, bound, inner)


def _finish(kernel: Node, ev: _Eval, decl: Node, typed: Node, bound: Node, inner: list[Node]) -> Copy | str:
    inner = [s for s in inner if s.type != "comment"]
    if not inner:
        return "the loop body is empty"
    name = ident(decl.child_by_field_name("declarator")) or ""
    n = ev.expr(bound)
    n_form = n.size_form() if isinstance(n, Lin) else None
    if n_form is None:
        return at(bound, f"the bound '{_cuda.text(bound)}' is not a size of the kernel")
    ev.env[name] = Lin.flat()
    if any(_cuda.builtin_axis(x) for s in inner for x in _cuda.walk(s)):
        return "thread built-ins inside the loop body"
    if (why := ev.body(inner[:-1])) is not None:
        return why
    copy = _expression(inner[-1]) if inner[-1].type == "expression_statement" else None
    if copy is None or copy.type != "assignment_expression" or operator(copy) != "=":
        return at(inner[-1], "the last statement is not the copy 'dst[W] = src[R];'")
    return _the_copy(kernel, ev, copy, name, _cuda.element_type(typed), n_form)


def _the_copy(kernel: Node, ev: _Eval, copy: Node, name: str, index_type: str, bound: FormDict) -> Copy | str:
    params = {p: (typ, ptr) for p, typ, ptr in _cuda.kernel_params(kernel)}
    pointers = {p for p, (_, ptr) in params.items() if ptr}
    left, right = copy.child_by_field_name("left"), copy.child_by_field_name("right")
    dst = _source_of(left, pointers) if left is not None and left.type == "subscript_expression" else None
    src = _source_of(right, pointers) if right is not None else None
    if dst is None or src is None or dst[0] == src[0]:
        return at(copy, "not a copy from one pointer argument to another")
    w, r = ev.expr(dst[1]), ev.expr(src[1])
    if isinstance(w, str) or isinstance(r, str):
        return w if isinstance(w, str) else str(r)
    element = _pointee(params[src[0]][0])
    if element != _pointee(params[dst[0]][0]):
        return at(copy, "the two arrays have different element types")
    body = kernel.child_by_field_name("body") or kernel
    return Copy(name, index_type, bound, w, r, dst[0], src[0], element, body, ev.consts)


def _pointee(typ: str) -> str:
    return " ".join(w for w in typ.split() if w not in ("const", "__restrict__"))
