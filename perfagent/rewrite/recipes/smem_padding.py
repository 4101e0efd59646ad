"""Recipe ``smem-padding``: ``__shared__ float tile[32][32]`` -> ``tile[32][32 + 1]``.

Precondition (checked on the tree-sitter-cuda parse tree): a static ``__shared__`` array inside a
kernel (or at file scope) with two or more dimensions, 4-byte elements (float, int, unsigned,
int32_t, uint32_t), a last dimension that evaluates (literals, ``#define``, ``constexpr``) to a
multiple of 32 banks, every use a full subscript (``tile[i][j]``; never flattened, never ``sizeof``,
never decayed to a pointer), and the padded arrays still within 48 KiB of static shared memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node, Tree

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes.framework import CudaRecipe, Edit, Source, Variant, register

NAME = "smem-padding"
BANKS = 32
FOUR_BYTE_TYPES = frozenset({"float", "int", "unsigned", "unsigned int", "int32_t", "uint32_t"})


@dataclass(frozen=True)
class _Target:
    name: str
    line: int
    size_node: Node
    last_dim: int
    scope: Node


def _scan(src: Source) -> tuple[list[_Target], list[str]] | str:
    """Arrays that can be padded and why the others cannot; or why none can."""
    request, tree = src.request, src.tree
    env = src.constants
    targets: list[_Target] = []
    reasons: list[str] = []
    kernels = _cuda.kernels(tree, request.kernel)
    for decl, _declarator, ident, sizes in _cuda.shared_arrays(tree.root_node):
        name = _cuda.text(ident)
        where = f"'{name}' (line {_cuda.line_of(decl)})"
        fn = _cuda.enclosing(decl, "function_definition")
        if fn is not None and not _cuda.is_kernel(fn) and not _cuda.has_qualifier(fn, "__device__"):
            continue
        if request.kernel is not None and fn is not None and fn not in kernels:
            continue
        if _cuda.has_storage(decl, "extern") or any(s is None for s in sizes):
            reasons.append(f"{where} is dynamic shared memory (extern, size unknown at compile time)")
            continue
        if len(sizes) < 2:
            reasons.append(f"{where} is 1-D: padding needs the index math changed, not the declaration")
            continue
        elem = _cuda.element_type(decl)
        if elem not in FOUR_BYTE_TYPES:
            reasons.append(f"{where} has {elem or 'unknown'} elements; the recipe pads 4-byte elements only")
            continue
        last = sizes[-1]
        assert last is not None
        last_dim = _cuda.evaluate(_cuda.text(last), env)
        if last_dim is None:
            reasons.append(f"{where}: last dimension '{_cuda.text(last)}' is not a compile-time constant")
            continue
        if last_dim % BANKS != 0:
            reasons.append(
                f"{where}: last dimension {last_dim} is not a multiple of {BANKS} (no systematic conflict to pad away)"
            )
            continue
        scope = fn.child_by_field_name("body") if fn is not None else tree.root_node
        assert scope is not None
        misuse = _misuse(scope, name, len(sizes), ident)
        if misuse:
            reasons.append(f"{where}: {misuse}; padding would change what that code sees")
            continue
        targets.append(_Target(name, _cuda.line_of(decl), last, last_dim, scope))
    if targets:
        padded = {t.name: _cuda.evaluate(_cuda.text(t.size_node), env) for t in targets}
        over = _over_budget(tree, env, targets, padded)
        if over:
            return over
    if not targets and not reasons:
        reasons.append(
            "no __shared__ array in " + (f"kernel {request.kernel}" if request.kernel else "the source")
        )
    return (targets, reasons) if targets else "; ".join(reasons)


def _misuse(scope: Node, name: str, ndims: int, decl_ident: Node) -> str | None:
    """Why ``name`` is used other than through ``ndims`` subscripts, or None."""
    for node in _cuda.walk(scope):
        if node.type != "identifier" or _cuda.text(node) != name or node == decl_ident:
            continue
        depth = 0
        current = node
        while current.parent is not None and current.parent.type == "subscript_expression":
            parent = current.parent
            if parent.child_by_field_name("argument") != current:
                break
            depth += 1
            current = parent
        if depth != ndims:
            return f"used with {depth} of {ndims} subscripts at line {_cuda.line_of(node)}"
        outer = current.parent
        while outer is not None and outer != scope:
            if outer.type == "sizeof_expression":
                return f"used in sizeof at line {_cuda.line_of(node)}"
            outer = outer.parent
    return None


def _over_budget(
    tree: Tree, env: dict[str, _cuda.Constant], targets: list[_Target], padded: dict[str, int | None]
) -> str | None:
    for fn in _cuda.kernels(tree):
        body = fn.child_by_field_name("body")
        if body is None:
            continue
        total = 0
        for decl, _d, ident, sizes in _cuda.shared_arrays(body):
            elem = _cuda.ELEMENT_BYTES.get(_cuda.element_type(decl))
            if elem is None or _cuda.has_storage(decl, "extern"):
                continue
            dims = [_cuda.evaluate(_cuda.text(s), env) if s is not None else None for s in sizes]
            if any(d is None for d in dims):
                continue
            if any(t.name == _cuda.text(ident) and t.scope == body for t in targets):
                dims[-1] = (dims[-1] or 0) + 1
            count = 1
            for d in dims:
                count *= d or 0
            total += count * elem
        if total > _cuda.STATIC_SHARED_LIMIT:
            return f"padding would take kernel {_cuda.function_name(fn)} to {total} bytes of static shared memory (limit {_cuda.STATIC_SHARED_LIMIT})"
    return None


class _SmemPadding(CudaRecipe[tuple[list[_Target], list[str]]]):
    name = NAME
    transforms = ("smem-padding",)
    summary = "pad 2-D+ __shared__ arrays of 4-byte elements whose last dimension is a multiple of 32 by one element"
    wrong_language = "smem-padding edits CUDA sources only (Triton lays out shared memory itself)"

    def match(self, src: Source) -> tuple[list[_Target], list[str]] | str:
        return _scan(src)

    def plan(self, src: Source, m: tuple[list[_Target], list[str]]) -> list[Variant]:
        """One variant padding every eligible array by one element in its last dimension."""
        targets, reasons = m
        edits = []
        for t in targets:
            size_text = _cuda.text(t.size_node)
            if t.size_node.type == "number_literal":
                new = str(t.last_dim + 1)
            elif _cuda.needs_parentheses(t.size_node):
                new = f"({size_text}) + 1"
            else:
                new = f"{size_text} + 1"
            edits.append(Edit(t.size_node.start_byte, t.size_node.end_byte, new))
        names = ", ".join(
            f"{t.name}[..][{t.last_dim}] -> [..][{t.last_dim + 1}] (line {t.line})" for t in targets
        )
        return [
            Variant(
                edits=edits,
                description=f"Pad the last dimension of shared arrays by one element so column walks hit distinct banks: {names}.",
                parameters={"arrays": ",".join(t.name for t in targets), "pad": 1},
                notes=[f"not padded: {r}" for r in reasons],
            )
        ]


RECIPE = register(_SmemPadding())
applies, propose = RECIPE.applies, RECIPE.propose
