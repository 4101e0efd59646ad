"""Recipe ``vectorize-access``: turn an element-wise ``float`` kernel into float4 loads and stores.

Precondition (tree-sitter-cuda parse tree), on the ``__global__`` kernel named by the request (or the
only one in the file):

- every pointer parameter is a single-level ``float *`` (const and ``__restrict__`` allowed), and
  there is at least one;
- the body is exactly ``<T> i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) <body>`` (operand
  order free, casts and parentheses allowed, ``n`` an integer scalar parameter), or a grid-stride loop
  ``for (<T> i = <that index>; i < n; i += <gridDim.x * blockDim.x or a variable holding it>) <body>``
  after optional declarations of that stride and of the index itself;
- in ``<body>`` a pointer parameter appears only as ``p[i]``, ``i`` only inside those subscripts, and
  nothing depends on which thread runs which element: no ``__shared__``, no barriers or warp
  collectives, no ``threadIdx``/``blockIdx``/``blockDim``/``gridDim``, no atomics, no ``return`` /
  ``goto``, no ``break`` / ``continue`` leaving the body, no address of ``p[i]``;
- the kernel is not already vectorised (no ``float4`` / ``reinterpret_cast``).

The rewrite replaces the kernel body (the signature stays): a grid-stride loop over groups of four
elements loads each read array as a float4, runs four copies of ``<body>`` (lanes x, y, z, w, each in
its own braces, every ``p[i]`` turned into the lane of a float4 variable), and stores each written
array as a float4. It runs only when every accessed pointer is 16-byte aligned (tested at run time);
a scalar grid-stride loop over the original ``<body>`` handles the ``n % 4`` tail, and everything
when a pointer is misaligned. The result is grid-stride, so it is correct under any launch grid.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from tree_sitter import Node, Tree

from perfagent.rewrite.base import Candidate, RewriteRequest, make_candidate
from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._cuda import Edit
from perfagent.rewrite.recipes.registry import Recipe
from perfagent.workloads.launch_spec import LaunchOverride

NAME = "vectorize-access"
WIDTH = 4
LANES = ("x", "y", "z", "w")
ALIGN_NOTE = (
    "needs 16-byte aligned pointers for the vector path "
    "(checked at run time; misaligned pointers take the scalar path)"
)
INTEGER_TYPES = frozenset(
    {
        "int", "unsigned", "unsigned int", "long", "long int", "unsigned long", "long long",
        "unsigned long long", "size_t", "ptrdiff_t", "int32_t", "uint32_t", "int64_t", "uint64_t",
    }
)  # fmt: skip
BUILTINS = frozenset({"threadIdx", "blockIdx", "blockDim", "gridDim"})
# Calls whose result depends on which threads run together: barriers, warp collectives, atomics.
COLLECTIVE = re.compile(
    r"^(?:atomic\w*|__sync\w*|__shfl\w*|__ballot\w*|__any\w*|__all\w*|__activemask|__match\w*|__reduce\w*)$"
)
LOOPS = frozenset({"for_statement", "while_statement", "do_statement", "for_range_loop"})
Kind = Literal["read", "write", "update"]
"""How the body uses one ``p[i]``: read only, overwritten by ``=``, or read and written (``+=``, ``++``,
passed to a call that may take it by reference)."""


@dataclass(frozen=True)
class _Pointer:
    name: str
    const: bool
    restrict: bool


@dataclass(frozen=True)
class _Site:
    node: Node
    """The ``p[i]`` subscript expression."""
    pointer: str
    kind: Kind
    op: Node
    """What reads or writes it: the assignment, update or call (the subscript itself for a plain read)."""


@dataclass(frozen=True)
class _Plan:
    kernel: str
    fn: Node
    index: str
    """The original index variable (kept in the scalar loop so the body is reused verbatim)."""
    bound: str
    """The scalar parameter bounding the index."""
    bound_position: int
    """Its position among the kernel's parameters (launch-spec args match by position)."""
    form: str
    """'grid-stride loop' or 'guarded' (one element per thread)."""
    body: Node
    """The statement run per element."""
    pointers: list[_Pointer]
    """Pointer parameters the body accesses, in parameter order."""
    sites: list[_Site]
    loaded: list[str]
    """Arrays loaded as float4 before the lanes: read ones, and written ones a lane might leave unset."""
    stored: list[str]
    distinct: list[tuple[str, str]]
    """Pointer pairs that must differ for the vector path (in place, it would reorder reads and writes)."""


# --------------------------------------------------------------------------- shape of the kernel


def _strip(node: Node) -> Node:
    """The expression under casts and parentheses: ``(size_t)(n)`` -> ``n``."""
    while True:
        if node.type == "parenthesized_expression" and node.named_child_count == 1:
            node = node.named_children[0]
        elif node.type == "cast_expression" and node.child_by_field_name("value") is not None:
            node = node.child_by_field_name("value") or node
        else:
            return node


def _builtin(node: Node, obj: str) -> bool:
    """Whether ``node`` is ``<obj>.x`` (under casts)."""
    node = _strip(node)
    arg, field = node.child_by_field_name("argument"), node.child_by_field_name("field")
    return (
        node.type == "field_expression"
        and arg is not None
        and field is not None
        and _cuda.text(arg) == obj
        and _cuda.text(field) == "x"
    )


def _binary(node: Node, op: str) -> tuple[Node, Node] | None:
    node = _strip(node)
    left, right, oper = (node.child_by_field_name(f) for f in ("left", "right", "operator"))
    if node.type != "binary_expression" or left is None or right is None or oper is None:
        return None
    return (left, right) if _cuda.text(oper) == op else None


def _product_of(node: Node, a: str, b: str) -> bool:
    sides = _binary(node, "*")
    return sides is not None and (
        (_builtin(sides[0], a) and _builtin(sides[1], b)) or (_builtin(sides[0], b) and _builtin(sides[1], a))
    )


def _is_index(node: Node) -> bool:
    """``blockIdx.x * blockDim.x + threadIdx.x`` in any operand order, casts allowed."""
    sides = _binary(node, "+")
    return sides is not None and any(
        _product_of(p, "blockIdx", "blockDim") and _builtin(t, "threadIdx") for p, t in (sides, sides[::-1])
    )


def _is_stride(node: Node) -> bool:
    return _product_of(node, "gridDim", "blockDim")


def _declared(node: Node) -> tuple[str, str, Node] | None:
    """(type, name, initialiser) of ``[const] <integer type> name = value;``."""
    if node.type != "declaration":
        return None
    declarators = node.children_by_field_name("declarator")
    if len(declarators) != 1 or declarators[0].type != "init_declarator":
        return None
    ident = declarators[0].child_by_field_name("declarator")
    value = declarators[0].child_by_field_name("value")
    typ = _cuda.element_type(node)
    if ident is None or ident.type != "identifier" or value is None or typ not in INTEGER_TYPES:
        return None
    return typ, _cuda.text(ident), value


def _statements(block: Node) -> list[Node]:
    return [c for c in block.named_children if c.type != "comment"]


def _params(fn: Node, kname: str) -> tuple[list[_Pointer], dict[str, tuple[int, str]]] | str:
    """(float pointer parameters, integer/other scalars by name -> (position, type)) or why not."""
    decl = _cuda.function_declarator(fn)
    plist = decl.child_by_field_name("parameters") if decl is not None else None
    pointers: list[_Pointer] = []
    scalars: dict[str, tuple[int, str]] = {}
    for pos, p in enumerate(c for c in (plist.named_children if plist else []) if c.type != "comment"):
        declarator = p.child_by_field_name("declarator")
        typ = _cuda.element_type(p)
        where = f"parameter {pos + 1} of {kname} ('{_cuda.text(p)}', line {_cuda.line_of(p)})"
        if p.type != "parameter_declaration" or declarator is None:
            return f"{where} is not a plain declaration"
        if declarator.type == "identifier":
            scalars[_cuda.text(declarator)] = (pos, typ)
            continue
        inner = declarator.child_by_field_name("declarator")
        if declarator.type != "pointer_declarator" or inner is None or inner.type != "identifier":
            return f"{where} is neither a scalar nor a single-level pointer"
        if typ != "float":
            return f"{where} points to {typ}, not float (the recipe vectorises float arrays into float4)"
        quals = {_cuda.text(c) for c in declarator.children if c.type == "type_qualifier"}
        const = any(c.type == "type_qualifier" and _cuda.text(c) == "const" for c in p.children)
        restrict = bool(quals & {"__restrict__", "__restrict", "restrict"})
        pointers.append(_Pointer(_cuda.text(inner), const, restrict))
    if not pointers:
        return f"{kname} has no pointer parameters to vectorise"
    return pointers, scalars


def _bound(cond: Node, index: str, scalars: dict[str, tuple[int, str]]) -> tuple[str | None, str]:
    """(the integer parameter ``n`` of ``i < n`` / ``n > i``, casts allowed; else None and why)."""
    for op, (mine, other) in (("<", (0, 1)), (">", (1, 0))):
        sides = _binary(cond, op)
        if sides is None:
            continue
        var, limit = _strip(sides[mine]), _strip(sides[other])
        name = _cuda.text(limit)
        if var.type != "identifier" or _cuda.text(var) != index:
            continue
        if limit.type != "identifier" or name not in scalars:
            return None, f"its bound '{_one_line(limit)}' is not a scalar parameter"
        if scalars[name][1] not in INTEGER_TYPES:
            return None, f"its bound {name} is a {scalars[name][1]}, not an integer"
        return name, ""
    return None, f"it is not '{index} < n'"


def _shape(
    fn: Node, kname: str, scalars: dict[str, tuple[int, str]]
) -> tuple[str, str, str, Node, set[str]] | str:
    """(form, index, bound, per-element body, names the rewrite drops) or which part does not match."""
    block = fn.child_by_field_name("body")
    if block is None:
        return f"{kname} has no body"
    stmts = _statements(block)
    expected = (
        f"{kname}'s body is not 'i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) ...' nor a "
        "grid-stride loop 'for (i = <that>; i < n; i += gridDim.x * blockDim.x) ...'"
    )
    strides: set[str] = set()
    indices: set[str] = set()
    for stmt in stmts[:-1]:
        decl = _declared(stmt)
        if decl is not None and _is_stride(decl[2]):
            strides.add(decl[1])
        elif decl is not None and _is_index(decl[2]):
            indices.add(decl[1])
        else:
            return f"{expected}: unexpected statement at line {_cuda.line_of(stmt)}: '{_one_line(stmt)}'"
    if not stmts:
        return f"{kname} has an empty body"
    last = stmts[-1]
    if last.type == "if_statement":
        cond = last.child_by_field_name("condition")
        body = last.child_by_field_name("consequence")
        value = cond.child_by_field_name("value") if cond is not None else None
        where = f"the if at line {_cuda.line_of(last)}"
        if len(indices) != 1 or strides:
            return f"{expected}: {where} must follow exactly one index declaration and nothing else"
        index = next(iter(indices))
        if last.child_by_field_name("alternative") is not None:
            return f"{expected}: {where} has an else branch"
        bound, why = _bound(value, index, scalars) if value is not None else (None, "no condition")
        if bound is None or body is None:
            return f"{expected}: {where} tests '{_one_line(value or last)}': {why}"
        return "guarded", index, bound, body, indices
    if last.type == "for_statement":
        where = f"the for loop at line {_cuda.line_of(last)}"
        init = last.child_by_field_name("initializer")
        cond = last.child_by_field_name("condition")
        update = last.child_by_field_name("update")
        body = last.child_by_field_name("body")
        decl = _declared(init) if init is not None else None
        if decl is None or not (
            _is_index(decl[2])
            or (_strip(decl[2]).type == "identifier" and _cuda.text(_strip(decl[2])) in indices)
        ):
            return (
                f"{expected}: {where} does not declare its variable as blockIdx.x * blockDim.x + threadIdx.x"
            )
        index = decl[1]
        bound, why = _bound(cond, index, scalars) if cond is not None else (None, "no condition")
        if bound is None:
            return f"{expected}: {where} tests '{_one_line(cond or last)}': {why}"
        step = update.child_by_field_name("right") if update is not None else None
        target = update.child_by_field_name("left") if update is not None else None
        op = update.child_by_field_name("operator") if update is not None else None
        if (
            update is None
            or update.type != "assignment_expression"
            or step is None
            or target is None
            or op is None
            or _cuda.text(target) != index
            or _cuda.text(op) != "+="
            or not (
                _is_stride(step)
                or (_strip(step).type == "identifier" and _cuda.text(_strip(step)) in strides)
            )
        ):
            return f"{expected}: {where} steps by '{_one_line(update or last)}', not '{index} += gridDim.x * blockDim.x'"
        if body is None:
            return f"{expected}: {where} has no body"
        return "grid-stride loop", index, bound, body, strides | indices
    return f"{expected}: the last statement (line {_cuda.line_of(last)}) is a {last.type.replace('_', ' ')}"


def _one_line(node: Node) -> str:
    flat = " ".join(_cuda.text(node).split())
    return flat if len(flat) <= 80 else flat[:77] + "..."


# --------------------------------------------------------------------------- the per-element body


def _leaves_body(jump: Node, body: Node) -> bool:
    """Whether a break/continue targets a loop (or switch) outside ``body``."""
    targets = LOOPS | ({"switch_statement"} if jump.type == "break_statement" else frozenset())
    node = jump.parent
    while node is not None and node != body:
        if node.type in targets:
            return False
        node = node.parent
    return True


def _site_kind(sub: Node, pointer: _Pointer) -> tuple[Kind, Node] | str:
    parent = sub.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    if parent is None:
        return "read", sub
    if parent.type == "assignment_expression" and parent.child_by_field_name("left") == sub:
        op = _cuda.text(parent.child_by_field_name("operator") or parent)
        return ("write" if op == "=" else "update"), parent
    if parent.type == "update_expression":
        return "update", parent
    if (
        parent.type == "pointer_expression"
        and _cuda.text(parent.child_by_field_name("operator") or parent) == "&"
    ):
        return f"takes the address of {_cuda.text(sub)} at line {_cuda.line_of(sub)}"
    if parent.type == "argument_list" and not pointer.const:
        # A call may take it by reference and write it: load it and store it back.
        return "update", parent.parent or parent
    return "read", sub


def _declared_in(body: Node) -> set[str]:
    """Names the body declares itself (its locals, loop variables included)."""
    names: set[str] = set()
    for node in _cuda.walk(body):
        if node.type not in ("declaration", "for_range_loop"):
            continue
        for declarator in node.children_by_field_name("declarator"):
            while (
                declarator.type != "identifier" and declarator.child_by_field_name("declarator") is not None
            ):
                declarator = declarator.child_by_field_name("declarator") or declarator
            names.add(_cuda.text(declarator))
    return names


def _assigned_root(node: Node) -> Node | None:
    """The variable an assignment or update writes: ``s.f``, ``v[k]``, ``*p``, ``(a)`` -> the identifier."""
    target = node.child_by_field_name("left" if node.type == "assignment_expression" else "argument")
    while target is not None and target.type != "identifier":
        if target.type in ("field_expression", "subscript_expression", "pointer_expression"):
            target = target.child_by_field_name("argument")
        elif target.type == "parenthesized_expression" and target.named_child_count == 1:
            target = target.named_children[0]
        else:
            return None
    return target


def _sites(body: Node, index: str, pointers: list[_Pointer], dropped: set[str]) -> list[_Site] | str:
    """Every ``p[i]`` of the body, or the first thing that ties the body to its thread or index."""
    by_name = {p.name: p for p in pointers}
    locals_ = _declared_in(body)
    sites: list[_Site] = []
    carried: str | None = None
    for node in _cuda.walk(body):
        at = f"at line {_cuda.line_of(node)}"
        kind = node.type
        if kind in ("assignment_expression", "update_expression"):
            root = _assigned_root(node)
            name = _cuda.text(root) if root is not None else ""
            if carried is None and (root is None or (name not in locals_ and name not in by_name)):
                # State carried from one element to the next: four lanes per thread would change it.
                # Reported last, so that 'z + i is not z[i]' wins for '*(z + i) = ...'.
                carried = f"'{_one_line(node)}' {at} assigns {name or 'something'} declared outside the per-element body"
        if kind in ("return_statement", "goto_statement"):
            return f"'{_one_line(node)}' {at} leaves the per-element body"
        if kind in ("break_statement", "continue_statement") and _leaves_body(node, body):
            return f"'{_one_line(node)}' {at} leaves the per-element loop"
        if kind == "declaration" and _cuda.has_storage(node, "__shared__"):
            return f"__shared__ declaration {at}"
        if kind == "call_expression":
            callee = _cuda.text(node.child_by_field_name("function") or node).split("<")[0].strip()
            if COLLECTIVE.match(callee):
                return f"{callee} {at} depends on which threads run which elements"
        if kind != "identifier":
            continue
        name = _cuda.text(node)
        if name in BUILTINS:
            return f"{name} {at} in the per-element body (the rewrite changes which thread handles which element)"
        if name in dropped and name != index:
            return f"'{name}' {at} is used in the per-element body (the rewrite computes its own index and stride)"
        parent = node.parent
        sub = parent.parent if parent is not None and parent.type == "subscript_argument_list" else parent
        if name == index:
            arg = sub.child_by_field_name("argument") if sub is not None else None
            if (
                sub is None
                or sub.type != "subscript_expression"
                or parent is None
                or parent.named_child_count != 1
                or arg is None
                or _cuda.text(arg) not in by_name
            ):
                return (
                    f"the index {index} is used {at} in '{_one_line(sub or node)}', "
                    f"not only as p[{index}] of a float pointer parameter"
                )
            continue
        if name not in by_name:
            continue
        indices = node.parent.child_by_field_name("indices") if node.parent is not None else None
        if (
            node.parent is None
            or node.parent.type != "subscript_expression"
            or node.parent.child_by_field_name("argument") != node
            or indices is None
            or _cuda.text(indices).replace(" ", "") != f"[{index}]"
        ):
            return (
                f"'{_one_line(node.parent or node)}' {at} is not {name}[{index}] "
                f"(only {name}[{index}] maps onto float4 lanes)"
            )
        how = _site_kind(node.parent, by_name[name])
        if isinstance(how, str):
            return how
        if how[0] != "read" and by_name[name].const:
            return f"{at} writes {name}, a pointer to const"
        sites.append(_Site(node.parent, name, how[0], how[1]))
    if carried is not None:
        return carried
    if not sites:
        return "the per-element body accesses no pointer parameter as p[i]"
    return sites


def _within(node: Node, outer: Node) -> bool:
    return outer.start_byte <= node.start_byte and node.end_byte <= outer.end_byte


def _order_sensitive(a: _Site, b: _Site, body: Node) -> bool:
    """Whether write ``a`` and access ``b`` of another array give other results if both arrays are one buffer.

    The vector path loads every array before the lanes and stores after them, so a read of one array
    that follows a write of another (or a second write) would see the old value if the two were the
    same buffer. A read inside the right-hand side of the write comes first in the scalar code too.
    """
    if b.kind != "read":
        return True  # two writes: the later store wins
    loop = a.op.parent
    while loop is not None and _within(loop, body):
        if loop.type in LOOPS and _within(b.node, loop):
            return True  # a loop in the body (or the body itself) repeats both: the read may follow a write
        loop = loop.parent
    right = a.op.child_by_field_name("right") if a.op.type == "assignment_expression" else None
    if right is not None and _within(b.node, right):
        return False
    return b.node.end_byte > a.op.start_byte


def _written_everywhere(body: Node, pointer: str) -> bool:
    """Whether a top-level ``p[i] = ...;`` sets every lane (then the array need not be loaded first)."""
    stmts = [body] if body.type != "compound_statement" else _statements(body)
    for stmt in stmts:
        expr = stmt.named_children[0] if stmt.type == "expression_statement" and stmt.named_children else None
        left = expr.child_by_field_name("left") if expr is not None else None
        op = expr.child_by_field_name("operator") if expr is not None else None
        if (
            expr is not None
            and expr.type == "assignment_expression"
            and left is not None
            and op is not None
            and _cuda.text(op) == "="
            and left.type == "subscript_expression"
            and _cuda.text(left.child_by_field_name("argument") or left) == pointer
        ):
            return True
    return False


# --------------------------------------------------------------------------- precondition


def _kernel(tree: Tree, request: RewriteRequest) -> Node | str:
    fns = _cuda.kernels(tree, request.kernel)
    if not fns:
        return f"no __global__ function{' named ' + request.kernel if request.kernel else ''} in the source"
    if len(fns) > 1:
        names = ", ".join(_cuda.function_name(f) or "?" for f in fns)
        return f"{len(fns)} __global__ functions ({names}): name the one to vectorise"
    return fns[0]


def _plan(request: RewriteRequest) -> _Plan | str:
    if request.language != "cuda":
        return "vectorize-access edits CUDA sources (Triton vectorises on its own given contiguity hints)"
    try:
        tree = _cuda.require_clean(request.source)
    except _cuda.ParseError as exc:
        return str(exc)
    fn = _kernel(tree, request)
    if isinstance(fn, str):
        return fn
    kname = _cuda.function_name(fn) or "?"
    for node in _cuda.walk(fn):
        name = _cuda.text(node) if node.type in ("identifier", "type_identifier") else ""
        if name in ("float4", "float2", "reinterpret_cast"):
            return f"{kname} is already vectorised ({name} at line {_cuda.line_of(node)})"
        if node.type == "declaration" and _cuda.has_storage(node, "__shared__"):
            return (
                f"{kname} uses __shared__ memory (line {_cuda.line_of(node)}): "
                "its elements are not independent per thread"
            )
    params = _params(fn, kname)
    if isinstance(params, str):
        return params
    pointers, scalars = params
    shape = _shape(fn, kname, scalars)
    if isinstance(shape, str):
        return shape
    form, index, bound, body, dropped = shape
    sites = _sites(body, index, pointers, dropped)
    if isinstance(sites, str):
        return f"{kname}, {form} body at line {_cuda.line_of(body)}: {sites}"
    used = [p for p in pointers if any(s.pointer == p.name for s in sites)]
    read = {s.pointer for s in sites if s.kind != "write"}
    written = {s.pointer for s in sites if s.kind != "read"}
    loaded = [p.name for p in used if p.name in read or not _written_everywhere(body, p.name)]
    restrict = {p.name for p in used if p.restrict}
    distinct: list[tuple[str, str]] = []
    for a in sites:
        for b in sites:
            pair = (a.pointer, b.pointer)
            if (
                a.kind != "read"
                and a.pointer != b.pointer
                and not {a.pointer, b.pointer} <= restrict
                and pair not in distinct
                and pair[::-1] not in distinct
                and _order_sensitive(a, b, body)
            ):
                distinct.append(pair)
    return _Plan(
        kernel=kname,
        fn=fn,
        index=index,
        bound=bound,
        bound_position=scalars[bound][0],
        form=form,
        body=body,
        pointers=used,
        sites=sites,
        loaded=loaded,
        stored=[p.name for p in used if p.name in written],
        distinct=distinct,
    )


def applies(request: RewriteRequest) -> str | None:
    plan = _plan(request)
    return plan if isinstance(plan, str) else None


# --------------------------------------------------------------------------- the rewrite


def _indent_of(data: bytes, offset: int) -> str:
    start = _cuda.line_start(data, offset)
    line = data[start:offset].decode("utf-8")
    return line[: len(line) - len(line.lstrip())]


def _render(data: bytes, node: Node, repl: dict[int, tuple[int, str]], indent: str) -> str:
    """``node``'s text with byte ranges replaced, its later lines moved from its own indent to ``indent``."""
    out, pos = [], node.start_byte
    for start in sorted(repl):
        end, new = repl[start]
        out += [data[pos:start].decode("utf-8"), new]
        pos = end
    out.append(data[pos : node.end_byte].decode("utf-8"))
    own = _indent_of(data, node.start_byte)
    lines = "".join(out).split("\n")
    moved = [
        indent + (ln[len(own) :] if ln.startswith(own) else ln.lstrip()) if ln.strip() else ""
        for ln in lines[1:]
    ]
    return "\n".join([lines[0], *moved])


def _block(data: bytes, body: Node, repl: dict[int, tuple[int, str]], indent: str, unit: str) -> str:
    """The body as a braced block starting at ``indent`` (its own braces, or new ones)."""
    if body.type == "compound_statement":
        return _render(data, body, repl, indent)
    inner = _render(data, body, repl, indent + unit)
    if "\n" not in inner:
        return "{ " + inner + " }"
    return "{\n" + indent + unit + inner + "\n" + indent + "}"


def _names(tree: Tree, pointers: list[_Pointer]) -> dict[str, str]:
    """The float4 variable of each array: ``x_v``, or ``perfagent_x_v`` when the file already uses that name."""
    taken = _cuda.identifiers_in(tree.root_node) | set(_cuda.constants(tree))
    return {
        p.name: (f"{p.name}_v" if f"{p.name}_v" not in taken else f"perfagent_{p.name}_v") for p in pointers
    }


def _kernel_body(request: RewriteRequest, plan: _Plan) -> str:
    data = request.source.encode("utf-8")
    tree = _cuda.parse(data)
    base = _indent_of(data, plan.fn.start_byte)
    first = _statements(plan.fn.child_by_field_name("body") or plan.fn)
    unit = (_indent_of(data, first[0].start_byte)[len(base) :] if first else "") or "    "
    i1, i2, i3 = base + unit, base + unit * 2, base + unit * 3
    var = _names(tree, plan.pointers)
    n = plan.bound
    aligned = " | ".join(f"(unsigned long long){p.name}" for p in plan.pointers)
    cond = f"(({aligned}) & 15ull) == 0ull"
    if plan.distinct:
        cond += "".join(f" && (const void *){a} != (const void *){b}" for a, b in plan.distinct)
    const = {p.name for p in plan.pointers if p.name not in plan.stored}
    lines = [
        "{",
        f"{i1}// {NAME}: float4 groups in a grid-stride loop, then a scalar loop for the tail",
        f"{i1}// (and for every element when a pointer is not 16-byte aligned).",
        f"{i1}const size_t perfagent_tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;",
        f"{i1}const size_t perfagent_stride = (size_t)gridDim.x * blockDim.x;",
        f"{i1}const size_t perfagent_n = ({n}) > 0 ? (size_t)({n}) : 0;",
        f"{i1}size_t perfagent_done = 0;",
        f"{i1}if ({cond}) {{",
        f"{i2}const size_t perfagent_n4 = perfagent_n / {WIDTH};",
        f"{i2}for (size_t perfagent_q = perfagent_tid; perfagent_q < perfagent_n4; "
        "perfagent_q += perfagent_stride) {",
    ]
    for p in plan.pointers:
        v = var[p.name]
        if p.name in plan.loaded:
            qual = "const " if p.name in const else ""
            lines.append(f"{i3}{qual}float4 {v} = reinterpret_cast<const float4 *>({p.name})[perfagent_q];")
        else:
            lines.append(f"{i3}float4 {v};")
    for lane in LANES:
        repl = {s.node.start_byte: (s.node.end_byte, f"{var[s.pointer]}.{lane}") for s in plan.sites}
        lines.append(i3 + _block(data, plan.body, repl, i3, unit))
    lines += [f"{i3}reinterpret_cast<float4 *>({p})[perfagent_q] = {var[p]};" for p in plan.stored]
    lines += [f"{i2}}}", f"{i2}perfagent_done = perfagent_n4 * {WIDTH};", f"{i1}}}"]
    i = plan.index
    head = f"for (size_t {i} = perfagent_done + perfagent_tid; {i} < perfagent_n; {i} += perfagent_stride)"
    if plan.body.type == "compound_statement":
        lines.append(f"{i1}{head} {_render(data, plan.body, {}, i1)}")
    else:
        lines += [f"{i1}{head}", i2 + _render(data, plan.body, {}, i2)]
    lines.append(base + "}")
    return "\n".join(lines)


def _grid(request: RewriteRequest, plan: _Plan) -> str | None:
    """``ceil_div(V, 4 * (B))``: one float4 per thread, from the spec's value of the bound and its block."""
    launch = request.launch
    if launch is None or len(launch.grid) != 1 or len(launch.block) != 1:
        return None
    if plan.bound_position >= len(launch.args):
        return None
    value = launch.args[plan.bound_position].value
    if value is None:
        return None
    return f"ceil_div({value}, {WIDTH} * ({launch.block[0]}))"


def propose(request: RewriteRequest) -> list[Candidate]:
    """The vectorised kernel with one float4 group per thread (when the launch spec allows), then the current grid."""
    plan = _plan(request)
    if isinstance(plan, str):
        return []
    body = plan.fn.child_by_field_name("body")
    assert body is not None
    source = _cuda.apply_edits(
        request.source, [Edit(body.start_byte, body.end_byte, _kernel_body(request, plan))]
    )
    description = (
        f"Vectorise {plan.kernel} ({plan.form}): float4 loads of {', '.join(plan.loaded) or 'nothing'} and float4 "
        f"stores of {', '.join(plan.stored) or 'nothing'} in a grid-stride loop over groups of {WIDTH} "
        f"(lanes x, y, z, w run the original body), a scalar loop over the {plan.bound} % {WIDTH} tail."
    )
    notes = [ALIGN_NOTE]
    if plan.distinct:
        pairs = ", ".join(f"{a}/{b}" for a, b in plan.distinct)
        notes.append(
            f"the vector path also needs distinct buffers for {pairs} "
            "(checked at run time; an in-place call takes the scalar path)"
        )
    grid = _grid(request, plan)
    launches: list[tuple[LaunchOverride | None, list[str]]] = []
    if grid is not None:
        launches.append((LaunchOverride(grid=[grid]), [f"grid set to {grid}: one float4 group per thread"]))
        launches.append((None, ["current grid kept: correct under any grid (grid-stride)"]))
    else:
        why = (
            "no launch spec"
            if request.launch is None
            else f"the launch spec is not 1-D or gives no value for parameter {plan.bound_position + 1} ({plan.bound})"
        )
        launches.append(
            (
                None,
                [
                    f"grid unchanged ({why}): the kernel is grid-stride and correct under any grid, but is "
                    f"fastest with about {plan.bound}/{WIDTH} threads (ceil_div({plan.bound}, {WIDTH} * block) blocks)"
                ],
            )
        )
    return [
        make_candidate(
            request,
            backend="recipes",
            recipe=NAME,
            source=source,
            description=description,
            parameters={"width": WIDTH},
            launch=launch,
            notes=notes + extra,
        )
        for launch, extra in launches[: request.max_candidates]
    ]


RECIPE = Recipe(
    name=NAME,
    transforms=("vectorize-access",),
    languages=("cuda",),
    applies=applies,
    propose=propose,
    summary="float -> float4 loads/stores for element-wise kernels indexed by blockIdx.x * blockDim.x + threadIdx.x "
    "(guarded or grid-stride), with a run-time alignment test and a scalar tail",
)
