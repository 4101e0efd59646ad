"""chunk-interleave's syntax helpers: the global thread id, chunk products, locals and element-wise bodies on the tree."""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda

GLOBAL_ID = {("blockIdx", "x"), ("blockDim", "x"), ("threadIdx", "x")}


@dataclass
class Chunk:
    """The chunked loop of a kernel, and the edits that interleave it."""

    product: Node
    """``G * C``: replaced by the interleaved base."""
    chunk: str
    index_type: str
    loop: Node
    form: str
    """'counter' or 'index'."""
    counter_uses: list[Node]
    """Counter form: each ``k`` in ``first + k``."""
    index_loop: tuple[Node, Node] | None = None
    """Index form: (the bound ``first + C`` node, the update expression)."""


def ident(node: Node | None) -> str | None:
    node = _cuda.strip(node) if node is not None else None
    return _cuda.text(node) if node is not None and node.type == "identifier" else None


def leaves(node: Node, op: str) -> list[Node]:
    """Operands of a chain of ``op`` (casts and parentheses stripped)."""
    node = _cuda.strip(node)
    if node.type == "binary_expression" and _cuda.text(node.child_by_field_name("operator") or node) == op:
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        assert left is not None and right is not None
        return leaves(left, op) + leaves(right, op)
    return [node]


def operator(node: Node) -> str:
    op = node.child_by_field_name("operator")
    return _cuda.text(op) if op is not None else ""


def is_global_id(node: Node, env: dict[str, Node], block: str | None = None) -> bool:
    """``blockIdx.x * blockDim.x + threadIdx.x`` (any order, casts), or a local initialised to it; with
    ``block`` (the launch spec's block size as written) also ``blockIdx.x * <block> + threadIdx.x``."""
    node = _cuda.strip(node)
    name = ident(node)
    if name is not None and name in env:
        return is_global_id(env[name], {}, block)
    terms = leaves(node, "+")
    if len(terms) != 2:
        return False
    axes = [[_cuda.builtin_axis(f) for f in leaves(t, "*")] for t in terms]
    shapes = sorted(tuple(sorted(a for a in factors if a)) for factors in axes if all(factors))
    if shapes == [(("blockDim", "x"), ("blockIdx", "x")), (("threadIdx", "x"),)]:
        return True
    if block is None:
        return False
    scaled = [t for t, factors in zip(terms, axes, strict=True) if ("blockIdx", "x") in factors]
    thread = [factors for factors in axes if factors == [("threadIdx", "x")]]
    if len(scaled) != 1 or len(thread) != 1:
        return False
    others = [f for f in leaves(scaled[0], "*") if _cuda.builtin_axis(f) is None]
    return len(others) == 1 and _cuda.text(others[0]).replace(" ", "") == block.replace(" ", "")


def local_inits(kernel: Node) -> dict[str, tuple[Node, str]]:
    """name -> (initialiser, declared type) of locals declared once with an initialiser."""
    seen: dict[str, tuple[Node, str]] = {}
    for n in _cuda.walk(kernel):
        if n.type != "init_declarator":
            continue
        decl, value = n.child_by_field_name("declarator"), n.child_by_field_name("value")
        if decl is None or value is None or decl.type != "identifier" or n.parent is None:
            continue
        type_node = n.parent.child_by_field_name("type")
        seen[_cuda.text(decl)] = (value, _cuda.text(type_node) if type_node is not None else "")
    return seen


def chunk_product(node: Node, env: dict[str, Node], block: str | None = None) -> tuple[Node, str] | None:
    """(``G * C`` node, C's text) when ``node`` is that product, else None."""
    node = _cuda.strip(node)
    if node.type != "binary_expression" or operator(node) != "*":
        return None
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    assert left is not None and right is not None
    for g, c in ((left, right), (right, left)):
        c_s = _cuda.strip(c)
        if is_global_id(g, env, block) and c_s.type in ("identifier", "number_literal"):
            return node, _cuda.text(c_s)
    return None


def assigned(kernel: Node) -> set[str]:
    """Names written anywhere after their declaration (assignments, ++/--)."""
    out: set[str] = set()
    for n in _cuda.walk(kernel):
        target = None
        if n.type == "assignment_expression":
            target = n.child_by_field_name("left")
        elif n.type == "update_expression":
            target = n.child_by_field_name("argument")
        if (name := ident(target)) is not None:
            out.add(name)
    return out


def uses(scope: Node, name: str) -> list[Node]:
    """Reads of ``name`` in ``scope`` (its declarator is not a read)."""
    return [
        n
        for n in _cuda.walk(scope)
        if n.type == "identifier"
        and _cuda.text(n) == name
        and not (
            n.parent is not None
            and n.parent.type == "init_declarator"
            and n.parent.child_by_field_name("declarator") == n
        )
    ]


def declared_in(node: Node) -> set[str]:
    out = set()
    for n in _cuda.walk(node):
        if n.type == "init_declarator" and (name := ident(n.child_by_field_name("declarator"))):
            out.add(name)
        elif n.type == "declaration":
            out |= {_cuda.text(d) for d in n.named_children if d.type == "identifier"}
    return out


def element_wise(
    loop: Node, index_names: set[str], index_exprs: list[Node], pointers: set[str]
) -> str | None:
    """Why the loop body is not element-wise in the element index, or None.

    Memory is reached only by subscripts of pointer parameters: a pointer passed to a call, moved
    (``in + idx + 1``) or dereferenced could reach another element than the one the index names."""
    body = loop.child_by_field_name("body")
    if body is None:
        return "the loop has no body"
    own = declared_in(loop)
    for n in _cuda.walk(body):
        if n.type == "identifier" and _cuda.text(n) in pointers:
            parent = n.parent
            if (
                parent is None
                or parent.type != "subscript_expression"
                or parent.child_by_field_name("argument") != n
            ):
                return (
                    f"line {_cuda.line_of(n)}: the pointer {_cuda.text(n)} is used other than by a subscript"
                )
        if n.type == "subscript_expression":
            idx = n.child_by_field_name("indices")
            args = idx.named_children if idx is not None else []
            ok = len(args) == 1 and (
                ident(args[0]) in index_names or any(_cuda.strip(args[0]) == e for e in index_exprs)
            )
            if not ok:
                return f"line {_cuda.line_of(n)}: '{_cuda.text(n)}' is not indexed by the element index alone"
        elif n.type == "assignment_expression" or n.type == "update_expression":
            target = n.child_by_field_name("left") or n.child_by_field_name("argument")
            name = ident(target)
            if name is not None and name not in own:
                return f"line {_cuda.line_of(n)}: '{name}' carries a value from one element to the next"
    return None


def pointers(node: Node) -> set[str]:
    """Names of the pointer parameters of the kernel that holds ``node``."""
    kernel = node
    while kernel.parent is not None and kernel.type != "function_definition":
        kernel = kernel.parent
    return {name for name, _, pointer in _cuda.kernel_params(kernel) if pointer}
