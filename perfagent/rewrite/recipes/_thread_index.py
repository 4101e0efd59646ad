"""Thread-index shapes on the tree-sitter-cuda tree, shared by the coarsening and fusion recipes.

The textbook one-element-per-thread kernel (PMPP ch. 2, the Best Practices Guide's vector add) derives a
global index ``T v = blockIdx.a * blockDim.a + threadIdx.a`` (any operand order, casts allowed; the
block extent may be written as a literal or a named constant) and
guards it (``if (v < n) ...`` or ``if (v >= n) return;``). This module finds that declaration, the
guard's bound, and what in a statement list would make per-thread work unsafe to loop or merge:
block-level cooperation (barriers, shared memory, warp collectives) and control flow that a wrapping
loop would capture (``return`` inside a nested loop, ``goto``). ``render`` rebuilds a subtree's text
with some of its nodes replaced (nested replacements included).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda

INDEX_TYPES = frozenset(
    {"int", "unsigned", "unsigned int", "long", "long long", "size_t", "int64_t", "uint32_t", "int32_t"}
)
"""Integer types a global index may be declared with."""
_COOPERATION = re.compile(
    r"\b(__syncthreads\w*|__syncwarp|__shfl\w*|__ballot_sync|__any_sync|__all_sync|__activemask|"
    r"__match_\w+|__reduce_\w+_sync|cooperative_groups|this_thread_block|this_grid|__threadfence_block)\b"
)
_LOOPS = ("for_statement", "while_statement", "do_statement", "for_range_loop", "switch_statement")


@dataclass(frozen=True)
class GlobalIndex:
    """``T v = blockIdx.a * blockDim.a + threadIdx.a`` at the top level of a kernel body."""

    decl: Node
    """The declaration statement."""
    name: str
    axis: str
    """'x', 'y' or 'z'."""
    type: str
    """Declared type without const ('int', 'size_t')."""
    value: Node
    """The initialiser expression."""
    block_idx: Node
    """The ``blockIdx.a`` node inside the initialiser."""
    scale: Node | None = None
    """The block's extent as the index writes it when that is not ``blockDim.a`` (``blockIdx.x * 256``,
    ``blockIdx.x * BLOCK``): a literal or a named constant; None for ``blockDim.a``."""


def _axis(node: Node, builtin: str) -> str | None:
    found = _cuda.builtin_axis(_cuda.strip(node))
    return found[1] if found is not None and found[0] == builtin else None


def _operands(node: Node, operator: str) -> tuple[Node, Node] | None:
    node = _cuda.strip(node)
    if node.type != "binary_expression":
        return None
    op = node.child_by_field_name("operator")
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if op is None or _cuda.text(op) != operator or left is None or right is None:
        return None
    return left, right


def _index_parts(value: Node) -> tuple[str, Node, Node | None] | None:
    """(axis, blockIdx node, scale) when ``value`` is blockIdx.a * S + threadIdx.a (casts allowed), S being
    blockDim.a (scale None) or a literal / named constant (the block's extent written out)."""
    total = _operands(value, "+")
    if total is None:
        return None
    for product, thread in (total, total[::-1]):
        t_axis = _axis(thread, "threadIdx")
        factors = _operands(product, "*")
        if t_axis is None or factors is None:
            continue
        for bid, bdim in (factors, factors[::-1]):
            if _axis(bid, "blockIdx") != t_axis:
                continue
            if _axis(bdim, "blockDim") == t_axis:
                return t_axis, _cuda.strip(bid), None
            if _cuda.strip(bdim).type in ("number_literal", "identifier"):
                return t_axis, _cuda.strip(bid), _cuda.strip(bdim)
    return None


def global_index(decl: Node) -> GlobalIndex | None:
    """The global index a top-level declaration introduces, or None."""
    if decl.type != "declaration":
        return None
    inits = list(decl.children_by_field_name("declarator"))
    if len(inits) != 1 or inits[0].type != "init_declarator":
        return None
    ident, value = inits[0].child_by_field_name("declarator"), inits[0].child_by_field_name("value")
    typ = _cuda.element_type(decl)
    if ident is None or value is None or ident.type != "identifier" or typ not in INDEX_TYPES:
        return None
    parts = _index_parts(value)
    if parts is None:
        return None
    return GlobalIndex(decl, _cuda.text(ident), parts[0], typ, value, parts[1], parts[2])


def global_indices(body: Node) -> list[GlobalIndex]:
    """Every global index declared at the top level of ``body``, in source order."""
    return [g for stmt in body.named_children if (g := global_index(stmt)) is not None]


def cooperation(node: Node) -> str | None:
    """Why threads of ``node`` cooperate (a barrier, shared memory, a warp collective), or None."""
    for sub in _cuda.walk(node):
        if sub.type == "declaration" and _cuda.has_storage(sub, "__shared__"):
            return f"__shared__ memory on line {_cuda.line_of(sub)} (block-level cooperation)"
        if sub.type in ("identifier", "namespace_identifier") and _COOPERATION.fullmatch(_cuda.text(sub)):
            return f"{_cuda.text(sub)} on line {_cuda.line_of(sub)} (threads cooperate)"
    return None


def builtin_uses(node: Node, name: str, axis: str) -> list[Node]:
    """Every ``name.axis`` under ``node``."""
    return [n for n in _cuda.walk(node) if _cuda.builtin_axis(n) == (name, axis)]


def captured_flow(stmts: list[Node], scope: Node) -> tuple[list[Node], str | None]:
    """(``return`` statements a wrapping loop turns into ``continue``, or why the flow cannot be wrapped).

    A ``return`` nested in a loop or switch of ``stmts`` would become a ``continue`` of that inner loop,
    and ``goto`` / labels could leave the wrapper: both refuse.
    """
    returns: list[Node] = []
    for stmt in stmts:
        for node in _cuda.walk(stmt):
            if node.type in ("goto_statement", "labeled_statement"):
                return [], f"{node.type.replace('_', ' ')} on line {_cuda.line_of(node)}"
            if node.type != "return_statement":
                continue
            parent = node.parent
            while parent is not None and parent.id != scope.id and parent.type not in _LOOPS:
                parent = parent.parent
            if parent is not None and parent.type in _LOOPS:
                return [], f"return inside a loop or switch on line {_cuda.line_of(node)}"
            returns.append(node)
    return returns, None


def assigns(node: Node, name: str) -> Node | None:
    """The first assignment or increment of the variable ``name`` under ``node``."""
    for sub in _cuda.walk(node):
        target = None
        if sub.type == "assignment_expression":
            target = sub.child_by_field_name("left")
        elif sub.type == "update_expression":
            target = sub.child_by_field_name("argument")
        if target is not None and _cuda.text(_cuda.strip(target)) == name:
            return sub
    return None


@dataclass(frozen=True)
class Guard:
    """The statement that bounds the index: ``if (... v < X ...) body`` or ``if (... v >= X ...) return;``."""

    stmt: Node
    bound: Node
    """X."""
    early_exit: bool
    """The ``return`` form (everything after it is guarded)."""


def _terms(cond: Node, operator: str) -> list[Node]:
    pair = _operands(cond, operator)
    if pair is None:
        return [_cuda.strip(cond)]
    return _terms(pair[0], operator) + _terms(pair[1], operator)


def _bound_of(term: Node, name: str, less: bool) -> Node | None:
    """X when ``term`` is ``name < X`` / ``X > name`` (less) or ``name >= X`` / ``X <= name``."""
    for op, var_left in (("<", True), (">", False)) if less else ((">=", True), ("<=", False)):
        pair = _operands(term, op)
        if pair is None:
            continue
        var, bound = pair if var_left else pair[::-1]
        if _cuda.text(_cuda.strip(var)) == name:
            return bound
    return None


def _is_return(stmt: Node | None) -> bool:
    if stmt is not None and stmt.type == "compound_statement":
        inner = stmt.named_children
        stmt = inner[0] if len(inner) == 1 else None
    return stmt is not None and stmt.type == "return_statement"


def guard_of(stmt: Node, name: str) -> Guard | None:
    """The guard ``stmt`` is for the index ``name``, or None."""
    if stmt.type != "if_statement":
        return None
    cond = stmt.child_by_field_name("condition")
    then, other = stmt.child_by_field_name("consequence"), stmt.child_by_field_name("alternative")
    if cond is None:
        return None
    inner = cond.named_children[-1] if cond.type == "condition_clause" else cond
    if other is None and _is_return(then):
        bounds = [b for t in _terms(inner, "||") if (b := _bound_of(t, name, less=False)) is not None]
        return Guard(stmt, bounds[0], True) if bounds else None
    if other is None:
        bounds = [b for t in _terms(inner, "&&") if (b := _bound_of(t, name, less=True)) is not None]
        return Guard(stmt, bounds[0], False) if bounds else None
    return None


def side_effect_free(decl: Node) -> bool:
    """A declaration whose initialisers neither assign nor call atomics (safe to repeat per element)."""
    if decl.type != "declaration" or _cuda.has_storage(decl, "static"):
        return False
    for node in _cuda.walk(decl):
        if node.type in ("assignment_expression", "update_expression"):
            return False
        if node.type == "call_expression" and _cuda.text(node).startswith("atomic"):
            return False
    return True


Rewrites = dict[int, Callable[[Node], str]]
"""Node id -> the text that replaces that node (given the node)."""


def put(text: str) -> Callable[[Node], str]:
    """A rewrite that puts ``text`` where the node was."""
    return lambda _node: text


def render(node: Node, rewrites: Rewrites) -> str:
    """The text of ``node`` with every rewritten descendant replaced (a rewrite may render its own children)."""
    if node.id in rewrites:
        return rewrites[node.id](node)
    if not node.children:
        return _cuda.text(node)
    data, out, at = node.text or b"", [], node.start_byte
    for child in node.children:
        out.append(data[at - node.start_byte : child.start_byte - node.start_byte].decode("utf-8"))
        out.append(render(child, rewrites))
        at = child.end_byte
    out.append(data[at - node.start_byte :].decode("utf-8"))
    return "".join(out)
